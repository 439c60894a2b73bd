"""Typed, versioned results and table schemas: the shapes of everything vlaudit writes (a leaf package).

* :mod:`vlaudit.results.versioned` — :class:`VersionedResult`, the frozen dataclass each JSON output is
  (``to_dict()`` is what is written, with ``schema_version``; ``from_dict()`` reads it back);
* :mod:`vlaudit.results.cycles`, :mod:`vlaudit.results.vca.outputs`, :mod:`vlaudit.results.compare`,
  :mod:`vlaudit.results.demo` — one class per JSON file a command writes, and the records it holds;
* :mod:`vlaudit.results.columns` — one definition of each table's columns (margins, cycles, scores, ITEMS,
  features) that writers and readers import;
* :mod:`vlaudit.results.console` — the console views (:class:`ConsoleView` of tables and lines) that the
  report's view builders return and the command line prints;
* :mod:`vlaudit.results.catalog` — every result type and table, and their Markdown for the docs;
* :mod:`vlaudit.results.manifest` — :class:`RunManifest`, the one ``manifest.json`` type of run folders and
  built datasets (written by :func:`vlaudit.files.write_manifest`); :mod:`vlaudit.results.scoring_record` —
  :class:`ScoringRunRecord`, what a yes/no scoring run adds to it; :mod:`vlaudit.results.backend_description`
  — the backend's description and prefix-cache decision it records.
"""
