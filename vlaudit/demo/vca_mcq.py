"""The demo's multiple-choice known answers: the planted ``ref:scene-mcq-*`` mechanisms, audited through the
letter interface.

On procedural scenes of :mod:`vlaudit.builders.mcq_scenes` (four options, each scene in its four CircularEval
rotations) it scores ``ref:scene-mcq-grounded``, ``ref:scene-mcq-prior`` and ``ref:scene-mcq-mixture`` with
``--interface letter`` under original, text, blank and mismatch through the ordinary runner, reports each,
and checks: the grounded mechanism's correct answers are all credited, the prior's none, and the mixture's
D-CC recovers the planted credited fraction (its 95% interval holds it), in every rotation too.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from vlaudit.analysis.vca.report import ReportSettings, compute_report
from vlaudit.builders.mcq_scenes import render_mcq_scenes
from vlaudit.demo.json_view import json_object
from vlaudit.reference.scene_mcq import load_backend
from vlaudit.report.vca_files import write_report_files
from vlaudit.results.missing import Missing
from vlaudit.scoring.run.runner import run_scoring
from vlaudit.scoring.run.spec import ScoreSpec
from vlaudit.sources.margins import read_margins

MCQ_MODELS = ("scene-mcq-grounded", "scene-mcq-prior", "scene-mcq-mixture")
MCQ_CONTEXTS = ("original", "text", "blank", "mismatch")
MCQ_DATASET = "scene-mcq"


def run_mcq_stage(out_dir: Path, *, n_scenes: int, seed: int, n_resamples: int,
                  log: Callable[[str], None] = print) -> dict[str, Any]:
    """Score and audit the three mechanisms; returns {runs, known_answers, planted}."""
    out = Path(out_dir)
    items = render_mcq_scenes(out / "scenes", n_scenes, seed=seed, dataset=MCQ_DATASET, rotations=True)
    images = out / "scenes" / "images"
    planted = sum(load_backend().reads_image(i.question) for i in items) / len(items)
    log(f"vca: {len(items)} multiple-choice items ({n_scenes} scenes x 4 rotations); planted credited "
        f"fraction {planted:.4f}")
    runs: dict[str, dict[str, Any]] = {}
    for name in MCQ_MODELS:
        backend = load_backend(name)
        run_dir = out / name
        spec = ScoreSpec.of(model=f"ref:{name}", benchmark=items, images=images, out=run_dir, contexts=MCQ_CONTEXTS,
                         interfaces=("letter",), seed=seed)
        run_scoring(backend, items, images_dir=images, out_dir=run_dir, contexts=list(MCQ_CONTEXTS),
                    interfaces=["letter"], seed=seed, arguments=spec.recorded(items))
        report = compute_report(read_margins(run_dir / "margins.parquet"), ReportSettings(n_resamples=n_resamples))
        write_report_files(run_dir / "report", report, plot=False)
        runs[name] = json_object(report.runs[0])
    return {"runs": list(runs.values()), "known_answers": mcq_known_answers(runs, planted), "planted": planted}


def mcq_known_answers(runs: dict[str, dict[str, Any]], planted: float) -> list[dict[str, Any]]:
    """The multiple-choice checks as rows {check, expected, observed, passed}."""
    rows: list[dict[str, Any]] = []

    def row(check: str, expected: str, observed: Any, passed: bool) -> None:
        rows.append({"check": check, "expected": expected, "observed": observed, "passed": bool(passed)})

    g, p, m = (runs[name] for name in MCQ_MODELS)
    row("multiple choice: grounded Acc and D-CC (letter interface)", "Acc >= 0.95 and D-CC = Acc",
        {"acc": round(g["acc"], 4), "dcc": round(g["dcc"], 4)}, g["acc"] >= 0.95 and g["dcc"] == g["acc"])
    row("multiple choice: prior answers are never credited", "Dep = D-CC = 0 and C-U = Acc",
        {"dep": round(p["dep"], 4), "dcc": round(p["dcc"], 4), "cu": round(p["cu"], 4)},
        p["dep"] == 0 and p["dcc"] == 0 and p["cu"] == p["acc"])
    lo, hi = m["ci"]["dcc"]
    row("multiple choice: mixture D-CC = planted credited fraction",
        f"{planted:.4f} inside 95% CI and |D-CC - planted| <= 0.02",
        {"dcc": round(m["dcc"], 4), "ci": [round(lo, 4), round(hi, 4)]},
        lo <= planted <= hi and abs(m["dcc"] - planted) <= 0.02)
    circular = (m.get("benchmark") or {}).get("circular") or {}
    every = circular.get("credited_every_rotation")
    row("multiple choice: mixture credited in every CircularEval rotation = planted fraction",
        f"|credited in every rotation - {planted:.4f}| <= 0.02",
        Missing("the mixture's run has no CircularEval result") if every is None else round(every, 4),
        every is not None and abs(every - planted) <= 0.02)
    return rows
