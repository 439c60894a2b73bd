"""What a benchmark gives away: text lints, the order-blind ceiling and blind-baseline scoring of suite items.

Every pair, triplet, 2×2 or cycle benchmark is read as :class:`~vlaudit.records.SuiteItem` records (images,
candidate texts, positive (image, text) pairs). :mod:`.table` flattens them into one integer-coded pair table
(linear in the number of pairs); :mod:`.metric` scores any per-pair scores under a suite's own metric (or the
documented default: each positive against each negative of the same image, strict ``>``); :mod:`.lints` holds
the text lints and :func:`~.lints.order_blind_ceiling`.
"""
