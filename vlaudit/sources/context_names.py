"""The names of the MARGINS contexts and their one normal form (numpy-free).

A context is the view of an item a margin was scored under (the ``context`` column of
:mod:`vlaudit.sources.margins`): ``original``, the controls ``text``, ``blank``, ``mean``, ``mismatch``, the
relation-erased views ``rele``/``irre``/``irre-disjoint``, the stress probes ``blur``/``patch-shuffle``. The
margins reader and the statistics options (``--controls``, :class:`~vlaudit.analysis.stats_options.StatsOptions`)
both read a name through :func:`normalize_context`; this module imports nothing heavy, so the command layer
can check a ``--controls`` value without loading numpy.
"""

from __future__ import annotations

from pathlib import Path

from vlaudit.errors import InputError

CONTEXTS = ("original", "text", "blank", "mean", "mismatch", "rele", "irre", "irre-disjoint", "blur",
            "patch-shuffle")
_CONTEXT_ALIASES = {"orig": "original", "o": "original", "text_only": "text", "textonly": "text", "t": "text",
                    "b": "blank", "gray": "blank", "grey": "blank", "mean_color": "mean", "meancolor": "mean",
                    "mean_colour": "mean", "perm": "mismatch", "permuted": "mismatch",
                    "patch_shuffle": "patch-shuffle", "irre_disjoint": "irre-disjoint"}


def normalize_context(value: object, *, path: str | Path | None = None, record: object = None) -> str:
    """Map a context name (case-insensitive, a few aliases) to one of :data:`CONTEXTS`."""
    text = str(value).strip().lower().replace("-", "_")
    text = _CONTEXT_ALIASES.get(text, text)
    if text not in CONTEXTS:
        raise InputError(f"unknown context {value!r} (expected one of {', '.join(CONTEXTS)})", path=path,
                         record=record, field="context")
    return text
