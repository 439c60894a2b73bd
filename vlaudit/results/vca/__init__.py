"""Typed results of the Visual Credit Audit: :mod:`vlaudit.results.vca.outputs` holds one class per JSON file a command writes; the other modules hold the records inside them."""
