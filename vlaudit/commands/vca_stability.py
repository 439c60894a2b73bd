"""``vlaudit vca stability``: the backend's numerical noise floor on a scored run (is a decision above it?)."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import typer

import vlaudit
from vlaudit.commands._apps import vca_app
from vlaudit.commands._model_options import model_options
from vlaudit.commands._options import out_folder_option
from vlaudit.commands._say import say

#: the second engine's settings: the fields VllmOptions adds to HfOptions, read when the commands are built
_ENGINE_FIELDS = tuple(f.name for f in dataclasses.fields(vlaudit.VllmOptions)
                       if f.name not in {g.name for g in dataclasses.fields(vlaudit.HfOptions)})
_DEVICE_MAP_HELP = ("engine: transformers device_map of the hf: model that re-scores a vllm: run (default: auto "
                    "when the run spans several GPUs).")
_ENGINE_OPTION_HELP = ("engine: a vLLM engine setting of the vllm: engine that re-scores an hf: run, by its name, "
                       "KEY=VALUE (repeatable; any field vlaudit.VllmOptions adds to HfOptions, e.g. -o "
                       "block_size=16; default: none).")


def _csv(value: str | None) -> list[str] | None:
    return None if value is None else [part.strip() for part in value.split(",") if part.strip()]


@vca_app.command("stability")
@model_options(vlaudit.VllmOptions, flags=_ENGINE_FIELDS, record="engine", run=("device_map",), run_name="engine_run",
               run_defaults={"device_map": (None, _DEVICE_MAP_HELP)}, option_help=_ENGINE_OPTION_HELP,
               model_default=None, model_help="Model spec to load instead of the run's (refused unless its "
                                              "fingerprint is the run's).")
def vca_stability(
    run: Path = typer.Argument(..., help="Run folder of vca score or vca score-dual (manifest.json)."),
    out: Path = out_folder_option(None, help="Output folder (stability.json, stability-cache/); default: RUN. "
                                                 "stability.json is also written into RUN for vca report."),
    sample: int = typer.Option(200, "--sample", min=1, help="Items re-scored (seeded), each with all its contexts."),
    seed: int = typer.Option(0, "--seed", min=0, help="Seed of the item sample."),
    perturbations: str = typer.Option(None, "--perturbations",
                                      help="Comma list of batch-1, padding-right, dtype, attention, prefix-cache, "
                                           "engine (hf: vs vllm: on the same weights; only when named) "
                                           "(default: every one the backend supports; dual encoders: "
                                           "batch-1, dtype)."),
    model: str | None = None,
    device: str = typer.Option(None, "--device", help="auto, cpu, cuda, ... (default: as the run)."),
    engine_run: vlaudit.RunOptions = vlaudit.RunOptions(),
    engine: vlaudit.VllmOptions | None = None,
) -> None:
    """Re-score a seeded sample of the run under perturbations that leave the mathematics unchanged (batch
    size 1, padding side, dtype, attention kernel, prefix cache); write the noise floor τ (p99 |Δ margin|).

    engine (hf: vs vllm:) frees the run's model before the other engine loads; the vLLM settings apply to the
    vllm: engine that re-scores an hf: run, --device-map to the hf: model that re-scores a vllm: run."""
    result = vlaudit.measure_stability(run, out=out, sample=sample, seed=seed,
                                       perturbations=_csv(perturbations), model=model, device=device,
                                       engine=engine, engine_run=engine_run)
    say(f"noise floor of {result.spec} on {result.sample.n_items} items "
        f"({result.sample.n_records} records): tau = {result.noise_floor:.3g}")
    estimate = result.estimate
    if estimate is not None:
        for bound in estimate.bounds:
            kind = (f"{estimate.level:.0%} upper bound of the p99" if bound.bounded
                    else f"the maximum; covers the p99 with probability {bound.coverage:.0%}")
            say(f"  {bound.perturbation}: {_g(bound.value)} from {bound.n} units, order statistic "
                f"{bound.order} of {bound.n} ({kind})")
        if estimate.warning:
            say(f"warning: {estimate.warning}", err=True)
    for row in result.perturbations:
        total = row.all
        say(f"  {row.perturbation}: median |d| {_g(total.median)}, p99 {_g(total.p99)}, max "
            f"{_g(total.max)}; {total.sign_flips} margin and {row.g_img.sign_flips} G_img sign flips")
        for context, stats in row.contexts.items():
            say(f"    {context}: n {stats.n}, p99 {_g(stats.p99)}, max {_g(stats.max)}, "
                f"{stats.sign_flips} flips")
    unit = "embedded inputs" if result.forwards.unit else "re-scored units"
    say(f"forwards: {result.forwards.total_perturbed} {unit} "
        f"({result.forwards.scored_now} now), baseline read from the run")
    say(f"wrote {(out or run) / 'stability.json'}")


def _g(value: float | None) -> str:
    return "—" if value is None else f"{value:.3g}"
