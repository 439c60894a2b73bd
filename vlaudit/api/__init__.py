"""The notebook face of vlaudit: functions that accept what users hold and return typed results.

The top-level names (``vlaudit.evaluate_cycles``, ``vlaudit.vca_report``, ...) resolve here lazily; the CLI
commands call the same library functions underneath.
"""
