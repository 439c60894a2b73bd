"""The one public door of vlaudit: every public name, listed once, in the ``if TYPE_CHECKING:`` block below.

That block is the only list. Type checkers and IDEs read it as imports; at run time :data:`__all__` and the
lazy table (name → ``module:attribute``) are read from the same block (:func:`_exports` parses this file's own
source, once), so ``import vlaudit.api`` imports no library module and each name loads its module on first use
(PEP 562 ``__getattr__``), as scientific-python's ``lazy_loader.attach_stub`` does with a stub file (SPEC 1).
The top-level facade ``vlaudit`` is this door: ``vlaudit.__all__ is vlaudit.api.__all__``.

Making a name public is one line in the block: ``from vlaudit.PACKAGE.MODULE import NAME`` (or ``NAME`` added to
the module's existing import). The notebook face of vlaudit: functions that accept what users hold and return
typed results; the CLI commands call the same functions (through ``import vlaudit``).
"""

from __future__ import annotations

import ast as _ast
import importlib as _importlib
from pathlib import Path as _Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # THE list of public names (see the module docstring)
    from vlaudit.analysis.cycles.diagnostics import run_diagnostics
    from vlaudit.analysis.cycles.experiment import ExperimentConfig
    from vlaudit.analysis.cycles.oe import run_oe
    from vlaudit.analysis.cycles.rank_sweep import run_rank_sweep
    from vlaudit.analysis.cycles.seed_inputs import SeedInputs
    from vlaudit.analysis.cycles.synthetic import SyntheticConfig, run_synthetic
    from vlaudit.analysis.cycles.transfer import run_transfer
    from vlaudit.analysis.stats_options import StatsOptions
    from vlaudit.api.analyses import (
        VcaFilterResult,
        VcaProxiesResult,
        VcaValidityResult,
        vca_filter,
        vca_proxies,
        vca_validity,
    )
    from vlaudit.api.benchmarks import ItemsBuildSummary, build_benchmark_items
    from vlaudit.api.compare import CycleComparisonResult, VcaComparisonResult, compare_cycles, compare_vca
    from vlaudit.api.cycle_files import (
        PairAuditResult,
        ZeroShotScores,
        audit_cycles,
        audit_pair_files,
        write_zero_shot_scores,
    )
    from vlaudit.api.cycles import (
        CycleEvaluation,
        Features,
        build_cycles,
        evaluate_cycles,
        features_from_arrays,
        load_model,
        zero_shot_scores,
    )
    from vlaudit.api.data import (
        ItemsBuild,
        build_gsr_coco_items,
        build_vsr_inverse_items,
        build_vsr_items,
        build_whatsup_items,
    )
    from vlaudit.api.edits import (
        AnnotationExportSummary,
        EditAnalysis,
        EditBuild,
        EditConsensus,
        analyze_edits,
        build_edits,
        export_annotations,
        import_annotations,
    )
    from vlaudit.api.experiment_inputs import load_seed_inputs
    from vlaudit.api.experiments import ExperimentRun, SyntheticRun, run_experiment, synthetic_controls
    from vlaudit.api.giveaway import GiveawayResult, benchmark_giveaway
    from vlaudit.api.margins import Margins
    from vlaudit.api.model_registry import ModelRegistry, model_registry
    from vlaudit.api.models import (
        TinyModel,
        TrainedReference,
        Verbalizers,
        build_tiny_model,
        train_reference,
        verbalizers,
    )
    from vlaudit.api.results import Result
    from vlaudit.api.runs import (
        MllmCycleScores,
        extract_features,
        score_cycles_mllm,
        score_dual_margins,
        score_margins,
    )
    from vlaudit.api.stability import GenerateCheckResult, StabilityResult, generate_check, measure_stability
    from vlaudit.api.suites import evaluate_suite, load_suite_result, read_suite, suites
    from vlaudit.api.vca import FactorialRun, VcaResult, factorial, vca_report
    from vlaudit.api.wording import build_wording_items, wording_diagnostics
    from vlaudit.backends.dtypes import DTYPE_HELP, parse_dtype
    from vlaudit.backends.model_options import model_ref, options_record
    from vlaudit.backends.options import (
        DualOptions,
        EndpointOptions,
        HfOptions,
        PlantedOptions,
        RunOptions,
        VllmOptions,
    )
    from vlaudit.backends.registry import ModelRef, backend_kind
    from vlaudit.backends.tiny.families import TINY_FAMILIES
    from vlaudit.builders.cycles.build_steps import family_label
    from vlaudit.builders.cycles.coco import CocoCaps
    from vlaudit.builders.cycles.gqa_rules import REASONS as GQA_SWAP_REASONS
    from vlaudit.builders.cycles.rules import GeometryRules
    from vlaudit.builders.factorial import build_factorial
    from vlaudit.builders.mcq_scenes import render_mcq_scenes
    from vlaudit.builders.scenes import render_scenes
    from vlaudit.demo.config import DemoConfig
    from vlaudit.demo.pipeline import run_demo
    from vlaudit.errors import InputError, VlauditError
    from vlaudit.files import check_file_target, check_folder_target
    from vlaudit.metrics.cycles import cycle_acc, cycle_contrast, cycle_credit
    from vlaudit.metrics.pair_audit import audit_pairs
    from vlaudit.records import Cycle, SuiteRead
    from vlaudit.report.compare import compare_cycles_view, compare_view
    from vlaudit.report.console import benchmark_tables_view, cycle_table_view
    from vlaudit.report.giveaway import giveaway_view
    from vlaudit.report.html import write_report
    from vlaudit.report.vca_analyses import filter_view, proxies_view, validity_view
    from vlaudit.report.vca_console import vca_report_view
    from vlaudit.results.console import (
        ConsoleHeadline,
        ConsoleTable,
        ConsoleTables,
        ConsoleText,
        ConsoleView,
        HeadlineCell,
    )
    from vlaudit.results.cycle_experiments import DiagnosticsResult, OeResult, RankSweepResult, TransferResult
    from vlaudit.results.cycles import CycleAudit, CycleBuildSummary, SyntheticResult
    from vlaudit.results.demo import DemoScorer, DemoSummary
    from vlaudit.results.suites import SuiteResult
    from vlaudit.scoring.run.parts import RayOptions
    from vlaudit.scoring.run.spec import CycleScoreSpec, DualScoreSpec, FeaturesSpec, ScoreSpec
    from vlaudit.sources.context_names import normalize_context
    from vlaudit.sources.cycle_tables import read_cycles
    from vlaudit.sources.items import BenchmarkItem
    from vlaudit.version import __version__


def _exports(source: str) -> dict[str, str]:
    """The names bound by the ``if TYPE_CHECKING:`` block of ``source`` → ``module:attribute``, in order."""
    table: dict[str, str] = {}
    for node in _ast.parse(source).body:
        if isinstance(node, _ast.If) and isinstance(node.test, _ast.Name) and node.test.id == "TYPE_CHECKING":
            for statement in node.body:
                if not isinstance(statement, _ast.ImportFrom) or not statement.module or statement.level:
                    raise TypeError(f"vlaudit/api/__init__.py line {statement.lineno}: the public list holds "
                                    "only absolute `from vlaudit.MODULE import NAME` lines")
                for alias in statement.names:
                    table[alias.asname or alias.name] = f"{statement.module}:{alias.name}"
    return table


#: public name → "module:attribute" (read from the block above)
_EXPORTS: dict[str, str] = _exports(_Path(__file__).read_text(encoding="utf-8"))

if not TYPE_CHECKING:  # mypy reads a computed __all__ as "exports nothing"; it reads the block above instead
    #: every public name, in the order of the block above; ``vlaudit.__all__`` is this list
    __all__ = list(_EXPORTS)


def _resolve(name: str, door: str) -> object:
    """The public ``name``, imported from its module (the table, never this package's attributes: importing the
    submodule ``vlaudit.api.suites`` sets this package's attribute ``suites`` to that module, while the public
    ``suites`` is its function)."""
    target = _EXPORTS.get(name)
    if target is None:
        raise AttributeError(f"module {door!r} has no attribute {name!r}")
    module_name, attribute = target.split(":")
    return getattr(_importlib.import_module(module_name), attribute)


def __getattr__(name: str) -> object:
    value = _resolve(name, __name__)
    globals()[name] = value  # later lookups skip __getattr__
    return value


def __dir__() -> list[str]:
    return sorted(_EXPORTS)
