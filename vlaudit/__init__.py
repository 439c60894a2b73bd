"""vlaudit: does a vision-language model use the *pairing* of image and text, or only its parts?

Data flow (one folder per stage; each imports only the stages before it, see docs/architecture.md):
sources (file formats) → builders (cycles, pairs, factorial, edits) → contexts → backends (models)
→ scoring (runner, cache) → metrics and stats → analysis (the papers' experiments, the VCA report engine)
→ report (rendering); reference (planted models), demo, api; ``cli.py`` is a thin shell.

The public API is the one list of :mod:`vlaudit.api` (``vlaudit.__all__ is vlaudit.api.__all__``), imported
lazily: ``import vlaudit`` loads neither numpy nor torch; each name loads its module on first use.
Cycles (cycle paper): :func:`cycle_contrast`, :func:`cycle_credit`, :func:`cycle_acc`,
:func:`evaluate_cycles`, :func:`build_cycles`, :func:`read_cycles`, :func:`extract_features`,
:func:`features_from_arrays`, :func:`zero_shot_scores`, :func:`run_synthetic`; the cycle-paper experiments
:func:`load_seed_inputs` → :func:`run_diagnostics`, :func:`run_rank_sweep`, :func:`run_oe`, :func:`run_transfer`;
:func:`audit_pairs` for any benchmark's negatives;
:func:`build_benchmark_items` reads a published benchmark (POPE, MME, MMStar, ...) into ITEMS. Compositionality
suites (ARO, VALSE, COLA, ...): :func:`suites`, :func:`read_suite`, :func:`evaluate_suite` → :class:`SuiteResult`. The demo and report: :func:`run_demo`, :func:`write_report`.
Visual Credit Audit:
:func:`load_model`, :func:`score_margins`, :func:`score_dual_margins`, :func:`vca_report`, :func:`factorial`,
the §18 wording diagnostics :func:`build_wording_items` → :func:`wording_diagnostics`;
:func:`render_mcq_scenes` writes the multiple-choice known-answer benchmark.
Run specs, shared with the CLI: :class:`ScoreSpec`, :class:`DualScoreSpec`, :class:`FeaturesSpec`,
:class:`CycleScoreSpec` (:func:`score_cycles_mllm` takes the last), built from parts: :class:`ModelRef` (a
model spec and its backend's :class:`HfOptions`, :class:`VllmOptions`, :class:`DualOptions`,
:class:`PlantedOptions` or :class:`EndpointOptions`),
:class:`RunOptions` and :class:`RayOptions`. Errors:
:class:`InputError` (bad input, naming file, record and field), :class:`VlauditError`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from vlaudit import api as _api  # the one list of public names; it imports no library module
from vlaudit.version import __version__ as __version__

if TYPE_CHECKING:  # for type checkers and IDEs: the names of vlaudit.api's list; at run time they resolve lazily
    from vlaudit.api import *  # noqa: F403
else:  # (mypy reads a computed __all__ as "exports nothing")
    __all__ = _api.__all__


def __getattr__(name: str) -> Any:
    value = _api._resolve(name, __name__)
    globals()[name] = value  # later lookups skip __getattr__
    return value


def __dir__() -> list[str]:
    return sorted(_api._EXPORTS)
