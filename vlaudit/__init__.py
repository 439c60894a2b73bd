"""vlaudit: does a vision-language model use the *pairing* of image and text, or only its parts?

Data flow (one folder per stage):
sources (file formats) → builders (cycles, pairs, factorial, edits) → contexts → backends (models)
→ scoring (runner, cache) → metrics and stats → experiments → report. ``cli.py`` is a thin shell.

Heavy libraries (torch, transformers, open_clip) are imported lazily inside the functions that need them.
"""

__version__ = "0.1.0"
