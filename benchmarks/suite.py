"""Every benchmark in ``benchmarks/``, one table: benchmark, figure, goal, holds? (``make bench``).

Each benchmark runs in its own process (quick sizes by default, a few minutes in all; ``--full`` for the
sizes its own defaults give) and is judged on the ``key=value`` figures of its last line against the goals
below, which come from the goals set for them (a figure with no goal is shown, with ``-`` under holds?).
Benchmarks print ratios against a baseline measured in the same process, so the table means the same on a
loaded machine; absolute seconds are shown for reference only. Exit status 1 when a goal fails or a benchmark
does not finish.

    .venv/bin/python benchmarks/suite.py [--full] [--only NAME ...] [--log DIR]
"""

from __future__ import annotations

import argparse
import operator
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

HERE = Path(__file__).resolve().parent
TIMEOUT_S = 1800


@dataclass(frozen=True)
class Goal:
    """A figure of a benchmark's last line and the bound it must meet (``None``: shown only)."""

    figure: str
    bound: str | None = None  # "<= 2", ">= 20", "< 10", "== True"

    def check(self, value: str) -> bool | None:
        if self.bound is None:
            return None
        op, target = self.bound.split(" ", 1)
        compare: Callable[[object, object], bool] = {"<=": operator.le, ">=": operator.ge, "<": operator.lt,
                                                     "==": operator.eq}[op]
        if target in ("True", "False"):
            return compare(value, target)
        return compare(float(value), float(target))


@dataclass(frozen=True)
class Benchmark:
    script: str
    quick: tuple[str, ...]
    full: tuple[str, ...]
    goals: tuple[Goal, ...]
    #: the interpreter, relative to the repository, for a benchmark that needs its own environment (None: this
    #: one); the benchmark is skipped where that environment was not built
    python: str | None = None


BENCHMARKS = (
    # build ≤ 2× parse and ≤ 6 GB at train2017 scale, time linear in size, identical outputs
    Benchmark("cycle_build_scale.py", ("--scales", "0.05,0.2"), (),
              (Goal("ratio", "<= 2"), Goal("peak_gb", "<= 6"), Goal("exponent", "<= 1.2"),
               Goal("identical", "== True"))),
    # < 10 s and ≥ 20× the per-resample loop with equal intervals; 100k items ≤ 2 GB
    Benchmark("vca_report_speed.py", ("--large-items", "20000"), (),
              (Goal("ratio", ">= 20"), Goal("seconds", "< 10"), Goal("max_ci_diff", "<= 1e-12"),
               Goal("large_peak_gb", "<= 2"), Goal("large_s"))),
    # speed-up ≥ 4 over the lmms-eval style scorer, margins equal to 1e-4
    Benchmark("score_throughput.py", ("--items", "60"), (),
              (Goal("speedup", ">= 4"), Goal("max_abs_diff", "<= 1e-4"))),
    # ≥ 0.8 of the forward-pass floor, margins equal to 1e-5 (the same asked of features)
    Benchmark("score_limit.py", ("--images", "4"), (),
              (Goal("efficiency", ">= 0.8"), Goal("max_abs_diff", "<= 1e-5"))),
    # fixed costs dominate below the default sizes (features: 0.55 at 32 images), so these run them as they are
    Benchmark("features_limit.py", (), (),
              (Goal("efficiency", ">= 0.8"), Goal("max_abs_diff", "<= 1e-5"))),
    # two Ray workers ≥ 1.6× one on a 2-core machine, the same margins
    Benchmark("ray_scaling.py", (), (),
              (Goal("scaling", ">= 1.6"), Goal("identical", "== True"))),
    # K-way letters: one forward per (item, context) ≥ 0.8·K faster than one per option (K = 4), the same
    # log-probs to 1e-4, ≥ 0.9 of the forward-pass floor
    Benchmark("letter_speed.py", ("--images", "8"), (),
              (Goal("speedup", ">= 3.2"), Goal("max_abs_diff", "<= 1e-4"), Goal("efficiency", ">= 0.9"),
               Goal("k"))),
    Benchmark("scene_render_speed.py", ("--images", "100"), (),
              (Goal("scenes_per_s"), Goal("scenes_ratio"), Goal("factorial_ratio"))),
    Benchmark("synthetic_threads.py", (), (), (Goal("ratio"), Goal("threads"))),
    # stability: the unperturbed margins come from the run's cache, so at most perturbations (5) × units
    # (3 contexts) are re-scored per sampled item
    Benchmark("stability_cost.py", ("--images", "4"), (),
              (Goal("units_per_item", "<= 15"), Goal("within_budget", "== True"), Goal("forwards_per_item"),
               Goal("ratio"), Goal("tau"))),
    # openai: endpoint, 8 requests in flight against a local server answering after 20 ms: ≥ 4× one at a
    # time, the same margins bit for bit; requests/s and the per-request overhead shown
    Benchmark("endpoint_requests.py", ("--requests", "160"), ("--requests", "800"),
              (Goal("speedup", ">= 4"), Goal("identical", "== True"), Goal("ours_rps"), Goal("overhead_ms"))),
    # a cached rerun of `vca score` (every record in the run folder) starts faster than the bare
    # `import torch, transformers` a model needs: it loads no model; `models list` likewise imports no torch
    Benchmark("cold_start.py", ("--repeats", "2"), (),
              (Goal("ratio", "<= 1"), Goal("list_ratio", "<= 1"), Goal("torch_on_rerun", "== False"),
               Goal("rerun_s"), Goal("import_s"))),
    # paired model comparison: ≥ 20× the per-resample loop with equal intervals; 8 runs × 100k items ≤ 1 GB
    Benchmark("compare_bootstrap.py", ("--items", "2000", "--large-items", "20000"), (),
              (Goal("ratio", ">= 20"), Goal("max_ci_diff", "<= 1e-12"), Goal("large_peak_gb", "<= 1"),
               Goal("large_s"))),
    # the small-sample figures of docs/concepts/statistics.md: percentile cluster-bootstrap coverage at the
    # documented minimum number of clusters, of the default expanded percentile interval (and the plain one)
    # (quick: 400 replicates, full: the published 2,000)
    Benchmark("cluster_coverage.py", ("--reps", "400", "--clusters", "5", "20"), (),
              (Goal("coverage_at_min", ">= 0.9"), Goal("percentile_at_min"), Goal("min_clusters"))),
    # vlaudit giveaway: the text lints linear in pairs (100k pairs in seconds), the blind LM's batched log p
    # ≥ 0.8 of a bare batched forward of the same model, equal to a full forward's log-softmax to 1e-4
    Benchmark("giveaway_speed.py", ("--captions", "128"), (),
              (Goal("exponent", "<= 1.2"), Goal("lm_ratio", ">= 0.8"), Goal("max_abs_diff", "<= 1e-4"),
               Goal("lint_s"), Goal("pairs"))),
    # vLLM's offline engine vs the HF backend on one tiny model (queries/s ratio, one run; start-up apart),
    # in the vLLM environment (make vllm-env): the same margins to 1e-5
    Benchmark("vllm_offline.py", ("--images", "6"), (),
              (Goal("ratio"), Goal("startup_s"), Goal("max_abs_diff", "<= 1e-5")), python=".venv-vllm/bin/python"),
)


def last_line_figures(output: str) -> dict[str, str]:
    """``key=value`` pairs of the last non-empty line."""
    lines = [line for line in output.splitlines() if line.strip()]
    if not lines:
        return {}
    return dict(token.split("=", 1) for token in lines[-1].split() if "=" in token)


def run(benchmark: Benchmark, full: bool, log_dir: Path) -> tuple[dict[str, str], str | None, float]:
    """Run one benchmark; its figures, an error line (or None) and its wall time. Output goes to the log."""
    args = benchmark.full if full else benchmark.quick
    log = log_dir / (Path(benchmark.script).stem + ".log")
    python = sys.executable if benchmark.python is None else str(HERE.parent / benchmark.python)
    start = time.perf_counter()
    try:
        with log.open("w") as out:
            done = subprocess.run([python, str(HERE / benchmark.script), *args], stdout=out,
                                  stderr=subprocess.STDOUT, timeout=TIMEOUT_S, check=False)
    except subprocess.TimeoutExpired:
        return {}, f"timed out after {TIMEOUT_S} s", time.perf_counter() - start
    seconds = time.perf_counter() - start
    text = log.read_text(errors="replace")
    if done.returncode != 0:
        tail = [line for line in text.splitlines() if line.strip()][-1:] or ["no output"]
        return {}, f"exit {done.returncode}: {tail[0][:60]}", seconds
    return last_line_figures(text), None, seconds


def table(rows: list[tuple[str, str, str, str]]) -> str:
    widths = (22, 28, 14, 7)
    header = ("benchmark", "figure", "goal", "holds?")
    lines = [" ".join(f"{h:{w}s}" for h, w in zip(header, widths, strict=True)),
             " ".join("-" * w for w in widths)]
    for row in rows:
        lines.append(" ".join(f"{cell[:w]:{w}s}" for cell, w in zip(row, widths, strict=True)))
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--full", action="store_true", help="Full sizes (each benchmark's own defaults).")
    parser.add_argument("--only", nargs="+", default=None, help="Benchmark names (file stems) to run.")
    parser.add_argument("--log", type=Path, default=None, help="Folder for each benchmark's output.")
    args = parser.parse_args()
    log_dir = args.log or Path(tempfile.mkdtemp(prefix="vlaudit-bench-"))
    log_dir.mkdir(parents=True, exist_ok=True)
    chosen = [b for b in BENCHMARKS if args.only is None or Path(b.script).stem in args.only]
    rows: list[tuple[str, str, str, str]] = []
    failed = False
    for benchmark in chosen:
        name = Path(benchmark.script).stem
        if benchmark.python is not None and not (HERE.parent / benchmark.python).exists():
            rows.append((name, f"skipped: no {benchmark.python.split('/')[0]}", "", "-"))
            continue
        print(f"running {name} ({'full' if args.full else 'quick'}) ...", flush=True)
        figures, error, seconds = run(benchmark, args.full, log_dir)
        print(f"  done in {seconds:.0f} s", flush=True)
        if error is not None:
            rows.append((name, error, "", "NO"))
            failed = True
            continue
        for goal in benchmark.goals:
            value = figures.get(goal.figure)
            holds = None if value is None else goal.check(value)
            failed |= value is None or holds is False
            rows.append((name, f"{goal.figure}={value if value is not None else 'missing'}", goal.bound or "shown",
                         {True: "yes", False: "NO", None: "-" if value is not None else "NO"}[holds]))
            name = ""
    print(table(rows))
    print(f"logs: {log_dir}")
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
