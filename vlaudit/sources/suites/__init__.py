"""Readers of the compositionality suites' published files → :class:`~vlaudit.records.SuiteRead`.

One module per suite (ARO, VALSE, CREPE, SVO-Probes, COLA, MMVP-VLM, ColorSwap, SPEC, VL-CheckList,
SugarCrepe++, BLA), each exposing ``read_<suite>(path, **options) -> SuiteRead``. A reader reads the release's
own layout, as its official loader does (cited in the module docstring: repo @ commit : path), and refuses a
look-alike file with one :class:`~vlaudit.errors.InputError` that names the layout it expected — it never
guesses (a COLA 4-list is not a What's Up 3-list). Shared checks: :mod:`vlaudit.sources.suites.common`.
"""
