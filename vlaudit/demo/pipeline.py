"""The offline end-to-end demo: a known-answer test of the audits on models with planted behaviour.

Embedded default = procedural scenes (COCO/GQA-format annotations rendered here) + the trained ``ref:`` models
whose behaviour is known by construction. Stages:

1. synthetic controls (cycle paper §5.1, Table 1);
2. per demo seed: scenes → exact COCO and GQA cycle families → Table-5 audit (TV = 0, signed degree 0);
3. every dual encoder (``ref:scene-clip-spatial``, ``ref:scene-clip-bag`` and each ``--model``) through the
   ordinary features path: zero-shot, additive and rank-R cycle-loss probe CycleAcc per family on the test
   split, and the rank sweep (:mod:`vlaudit.demo.cycles`);
4. the Visual Credit Audit stage of the yes/no reference models (``vlaudit.demo.vca``);
5. the known-answer checks (``summary.json``'s ``known_answers``; the command exits non-zero if one fails);
6. the HTML report (``vlaudit.report.html``).

Known answers of the encoders (test cycles, mean over the demo's seeds): both encoders ``coco-object-coarse``
zero-shot CycleAcc ≥ 0.85; every additive control exactly ½ with tie rate 1; the bag encoder's
``coco-strict-left-right`` within ½ ± 0.1 zero-shot and with the rank-64 probe (the relation is absent from its
representation, so no probe recovers it); the spatial encoder's ≥ 0.75 with the rank-64 probe.
"""

from __future__ import annotations

import platform
import shutil
import subprocess
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, fields, replace
from pathlib import Path
from typing import Any

import numpy
import torch

from vlaudit.analysis.cycles.synthetic import run_synthetic, torch_threads
from vlaudit.backends.registry import load_backend, require_kind
from vlaudit.demo.config import REFERENCE_ENCODERS as REFERENCE_ENCODERS
from vlaudit.demo.config import DemoConfig as DemoConfig
from vlaudit.demo.config import Thresholds as Thresholds
from vlaudit.demo.cycles import (
    Bars,
    Log,
    build_seed,
    model_slug,
    plot_outputs,
    rank_sweep,
    score_encoder,
    summarize_encoders,
)
from vlaudit.demo.json_view import json_object
from vlaudit.demo.vca import VcaStageConfig, run_vca_stage
from vlaudit.files import write_result
from vlaudit.reference.catalogue import TRAINED_MODELS
from vlaudit.report.html import write_report
from vlaudit.results.demo import (
    DemoAuditSummary,
    DemoCycleCell,
    DemoCycleEvaluation,
    DemoCycleStage,
    DemoSettings,
    DemoSummary,
    DemoSynthetic,
    DemoVcaKnownAnswers,
    DemoVcaStage,
    DemoVersions,
    KnownAnswer,
    Observed,
    SyntheticRowSummary,
)
from vlaudit.results.missing import Missing
from vlaudit.results.versioned import record_from_dict, to_json
from vlaudit.version import __version__


def _no_bars(description: str, total: int) -> Callable[[int], None]:
    return lambda n: None


def _cycle_stage(config: DemoConfig, out: Path, log: Log, bars: Bars, timings: dict[str, float]) -> DemoCycleStage:
    for spec in config.all_encoders:
        require_kind(spec, "features")
    start = time.perf_counter()
    built = {seed: build_seed(config, seed, out / "cycles" / f"seed-{seed}", log, bars) for seed in config.seeds}
    timings["cycles: scenes, build, audit"] = round(time.perf_counter() - start, 2)
    start = time.perf_counter()
    contrasts: dict[str, dict[int, Any]] = {}
    for spec in config.all_encoders:
        backend = load_backend(spec)
        for seed in config.seeds:
            folder = out / "cycles" / f"seed-{seed}" / model_slug(spec)
            contrasts.setdefault(spec, {})[seed] = score_encoder(config, spec, backend, seed, built[seed], folder,
                                                                 bars)
    timings["cycles: features, probes, rank sweep"] = round(time.perf_counter() - start, 2)
    encoders = summarize_encoders(contrasts, config)
    sweep = rank_sweep(encoders, config.ranks)
    files = plot_outputs(encoders, sweep, out / "cycles", config)
    audit_rows = [row for b in built.values() for audit in b["audit"].values() for row in audit.get("rows", [])]
    stage = DemoCycleStage(
        split="test", seeds=list(config.seeds), counts={str(seed): b["counts"] for seed, b in built.items()},
        audit=DemoAuditSummary(
            max_abs_signed_degree=max((r["max_abs_signed_degree"] for r in audit_rows), default=0),
            max_tv=max((r[k] or 0.0 for r in audit_rows for k in ("tv_image", "tv_caption")), default=0.0),
            violations=sum(b["audit"][s]["validity_violations"] for b in built.values() for s in b["audit"])),
        encoders=encoders, rank_sweep=sweep, files={name: str(path.relative_to(out)) for name, path in files.items()})
    write_result(out / "cycles" / "eval.json",
                 DemoCycleEvaluation(**{f.name: getattr(stage, f.name) for f in fields(DemoCycleStage)}))
    return stage


def _scorer_cells(stage: DemoCycleStage, spec: str, scorer: str) -> dict[str, DemoCycleCell]:
    """The test-split cells of one encoder's scorer by family (none when it was not run)."""
    encoder = stage.encoders.get(spec)
    found = None if encoder is None else encoder.scorers.get(scorer)
    return {} if found is None else {f: splits["test"] for f, splits in found.families.items() if "test" in splits}


def cycle_checks(cycles: DemoCycleStage, config: DemoConfig) -> list[KnownAnswer]:
    """The encoders' known answers (module docstring)."""
    t = config.thresholds
    rows: list[KnownAnswer] = []

    def acc(spec: str, scorer: str, family: str) -> float | Missing:
        cell = _scorer_cells(cycles, spec, scorer).get(family)
        if cell is None:
            return Missing(f"no {family} test cycles")
        return Missing("no cycle to score") if cell.cycle_acc is None else cell.cycle_acc

    def row(check: str, expected: str, observed: Observed, passed: bool) -> None:
        rows.append(KnownAnswer(check=check, expected=expected, observed=observed, passed=bool(passed)))

    probe = f"probe-rank-{config.probe_rank}"
    audit = cycles.audit
    row("cycle audit (Table 5): marginals balanced and every block valid",
        "TV = 0, max |signed degree| = 0, 0 validity violations",
        f"TV = {audit.max_tv}, max |signed degree| = {audit.max_abs_signed_degree}, {audit.violations} violations",
        audit.max_tv == 0 and audit.max_abs_signed_degree == 0 and audit.violations == 0)
    for spec in config.encoders:
        value = acc(spec, "zero-shot", "coco-object-coarse")
        row(f"{spec}: coco-object-coarse zero-shot CycleAcc", f">= {t.coarse_min}", value,
            not isinstance(value, Missing) and value >= t.coarse_min)
    for spec in config.all_encoders:
        cells = list(_scorer_cells(cycles, spec, "additive").values())
        exact = all(c.cycle_acc == 0.5 and c.tie_rate == 1.0 for c in cells)
        worst = max((abs(c.cycle_acc - 0.5) for c in cells if c.cycle_acc is not None), default=None)
        lowest_ties = min((c.tie_rate for c in cells if c.tie_rate is not None), default=None)
        row(f"{spec}: additive control on every family", "CycleAcc exactly 0.5, tie rate 1 (Proposition 1)",
            f"{len(cells)} families, max |CycleAcc - 0.5| = {worst}, min tie rate = {lowest_ties}",
            bool(cells) and exact)
    bag, spatial = "ref:scene-clip-bag", "ref:scene-clip-spatial"
    if bag in config.encoders:
        for scorer in ("zero-shot", probe):
            value = acc(bag, scorer, "coco-strict-left-right")
            row(f"{bag}: coco-strict-left-right {scorer} CycleAcc (left/right absent)",
                f"within 0.5 ± {t.absent_band}", value,
                not isinstance(value, Missing) and abs(value - 0.5) <= t.absent_band)
    if spatial in config.encoders:
        value = acc(spatial, probe, "coco-strict-left-right")
        row(f"{spatial}: coco-strict-left-right {probe} CycleAcc", f">= {t.spatial_probe_min}", value,
            not isinstance(value, Missing) and value >= t.spatial_probe_min)
    return rows


def vca_stage_config(config: DemoConfig) -> Any:
    """The VCA stage's own sizes (quick or full, :class:`vlaudit.demo.vca.VcaStageConfig`) on this
    demo's seed and number of bootstrap resamples."""
    return replace(VcaStageConfig.quick() if config.quick else VcaStageConfig(), seed=config.seed,
                   n_resamples=config.n_resamples, extra_models=config.vca_models)


def _vca_stage(out: Path, config: DemoConfig, log: Log) -> DemoVcaKnownAnswers:
    """The yes/no reference models' VCA stage (:mod:`vlaudit.demo.vca`), sized like this demo."""
    return run_vca_stage(out / "vca", vca_stage_config(config), log)


def _report(out: Path) -> str:
    return str(Path(write_report(out)).relative_to(out))


def _model_descriptions(config: DemoConfig) -> dict[str, str]:
    """What each audited model is: the planted references say whether they are trained models or calibration
    instruments (constructed mechanisms), so the report never passes one off as a real model."""
    described = {}
    for spec in (*config.all_encoders, *VcaStageConfig().models, *config.vca_models):
        name = spec.removeprefix("ref:")
        entry = TRAINED_MODELS.get(name) if spec.startswith("ref:") else None
        described[spec] = entry.description if entry else "a user's model (--model)"
    return described


def _versions() -> DemoVersions:
    commit = None
    try:
        commit = subprocess.run(["git", "rev-parse", "HEAD"], cwd=Path(__file__).parent, text=True,
                                capture_output=True, timeout=5, check=True).stdout.strip() or None
    except (OSError, subprocess.SubprocessError):
        pass
    return DemoVersions(vlaudit=__version__, python=platform.python_version(), numpy=numpy.__version__,
                        torch=torch.__version__, platform=platform.platform(), commit=commit)


def clear_stale_seeds(out: Path, seeds: Sequence[int], log: Log) -> list[Path]:
    """Remove the ``cycles/seed-N`` folders of an earlier demo into ``out`` whose N is not one of this run's
    ``seeds`` (a ``--quick`` run over a full one), saying so: the report would otherwise read them beside a
    summary that lists other seeds. Only folders named ``seed-<integer>`` are touched."""
    folder = out / "cycles"
    stale = sorted(p for p in folder.glob("seed-*") if p.is_dir() and p.name[5:].isdigit()
                   and int(p.name[5:]) not in set(seeds)) if folder.is_dir() else []
    for path in stale:
        shutil.rmtree(path)
    if stale:
        log(f"removed {', '.join(p.name for p in stale)} in {folder}: left by an earlier demo with other seeds "
            f"(this run's: {', '.join(map(str, seeds))})")
    return stale


def run_demo(out_dir: str | Path, config: DemoConfig | None = None, *, log: Log = print,
             bars: Bars | None = None) -> DemoSummary:
    """Run every stage into ``out_dir`` and write ``out_dir/summary.json``; returns the summary (the typed
    record the file holds, read by attribute).

    ``bars(description, total)`` → ``advance(n)`` draws progress bars (the CLI passes rich ones).
    """
    config = config or DemoConfig()
    bars = bars or _no_bars
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    clear_stale_seeds(out, config.seeds, log)
    timings: dict[str, float] = {}
    started = time.perf_counter()

    def stage(name: str, fn: Callable[[], Any]) -> Any:
        log(f"{name} …")
        start = time.perf_counter()
        value = fn()
        timings[name] = round(time.perf_counter() - start, 2)
        return value

    # Every model here is tiny: one torch thread is several times faster than thread hand-off between two.
    with torch_threads(config.torch_threads):
        synthetic = stage("synthetic controls", lambda: run_synthetic(config.synthetic_seeds, out / "synthetic",
                                                                        config.synthetic))
        cycles = stage("exact cycles", lambda: _cycle_stage(config, out, log, bars, timings))
        vca = stage("visual credit audit", lambda: _vca_stage(out, config, log))
    known = [KnownAnswer(check=f"synthetic control: {name}", expected="passes on every seed", observed=ok,
                         passed=bool(ok)) for name, ok in synthetic.checks.items()]
    known += cycle_checks(cycles, config)
    known += vca.known_answers
    summary = DemoSummary(
        config=record_from_dict(DemoSettings, to_json(asdict(config)), path="DemoConfig"),
        synthetic=DemoSynthetic(checks=dict(synthetic.checks), rows=[
            record_from_dict(SyntheticRowSummary, {k: row[k] for k in ("diagnostic", "probe", "metric", "mean",
                                                                       "expected")}, path="synthetic.json")
            for row in map(json_object, synthetic.rows)]),
        cycles=cycles,
        vca=DemoVcaStage(runs=vca.runs, planted_credited_fraction=vca.planted_credited_fraction,
                         factorial=vca.factorial, seconds=vca.seconds, notes=vca.notes),
        known_answers=known, passed=all(row.passed for row in known), models=_model_descriptions(config),
        timings=timings, versions=_versions(),
        files={"synthetic": "synthetic/synthetic.json", "cycles": "cycles/eval.json", **cycles.files})
    write_result(out / "summary.json", summary)
    report = stage("report", lambda: _report(out))
    timings["total"] = round(time.perf_counter() - started, 2)
    summary = replace(summary, files={**summary.files, "report": report}, timings=dict(timings))
    write_result(out / "summary.json", summary)
    return summary
