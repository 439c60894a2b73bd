"""``vlaudit vca generate-check``: does the margin's decision match the answer the model writes?"""

from __future__ import annotations

from pathlib import Path

import typer

import vlaudit
from vlaudit.commands._apps import vca_app
from vlaudit.commands._options import out_folder_option
from vlaudit.commands._say import say


@vca_app.command("generate-check")
def vca_generate_check(
    run: Path = typer.Argument(..., help="Run folder of vca score (manifest.json, cache/)."),
    out: Path = out_folder_option(None, help="Output folder (generate_check.json, generations.jsonl, "
                                                 "generate-cache/); default: RUN."),
    sample: int = typer.Option(200, "--sample", min=1, help="Items decoded (seeded), each with all its contexts."),
    all_items: bool = typer.Option(False, "--all", help="Decode every item of the run instead of a sample."),
    seed: int = typer.Option(0, "--seed", min=0, help="Seed of the item sample."),
    max_new_tokens: int = typer.Option(8, "--max-new-tokens", min=1, help="Greedy tokens generated at most."),
    model: str = typer.Option(None, "--model", help="Model spec to load instead of the run's (refused unless its "
                                                    "fingerprint is the run's)."),
    device: str = typer.Option(None, "--device", help="auto, cpu, cuda, ... (default: as the run)."),
) -> None:
    """Greedy decoding under the run's prompt, with and without the "Answer:" prefix; the first answer word
    against the margin's decision per context: agreement, confusion table, unparseable rate, disagreements."""
    result = vlaudit.generate_check(run, out=out, sample=None if all_items else sample, seed=seed,
                                    max_new_tokens=max_new_tokens, model=model, device=device)
    say(f"likelihood vs generation of {result.spec} on {result.sample.n_items} items "
        f"(greedy, {result.max_new_tokens} new tokens at most):")
    for check in result.checks:
        agreement = "—" if check.agreement is None else f"{100 * check.agreement:.1f}%"
        unparseable = "—" if check.unparseable_rate is None else f"{100 * check.unparseable_rate:.1f}%"
        say(f"  {check.context} · {check.interface} · {check.prompt}: n {check.n}, agreement "
            f"{agreement}, unparseable {unparseable}, {len(check.disagreements)} disagreements")
    say(f"wrote {(out or run) / 'generate_check.json'} and generations.jsonl")
