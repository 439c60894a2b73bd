"""The fixed-200 VSR wording diagnostics (VCA §18) from a notebook or the CLI: build the items, then compare
each wording's (and another system message's) decisions and credit with the canonical wording's."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from vlaudit.analysis.vca.scored_runs import run_info, run_scores
from vlaudit.analysis.vca.wording import paraphrase_rows, system_rows
from vlaudit.api.results import Result
from vlaudit.builders.benchmark_items import split_from_stem
from vlaudit.builders.wording import wording_items
from vlaudit.errors import InputError
from vlaudit.files import write_result, write_table
from vlaudit.results.demo import ItemsBuildSummary
from vlaudit.results.vca.outputs import WordingDiagnosticsResult
from vlaudit.results.versioned import to_json
from vlaudit.settings import NAMED_SYSTEM_MESSAGES, WORDING_ITEMS_PER_DIRECTION, WORDING_SEED
from vlaudit.sources.items import BenchmarkItem, read_items, write_items
from vlaudit.sources.margin_runs import read_margin_runs
from vlaudit.sources.margins import MarginRun
from vlaudit.sources.rows import source_stem
from vlaudit.sources.vsr import read_vsr

HEADLINE = ("form", "model", "dataset", "n", "acc", "dcc", "pred", "credit")


def build_wording_items(split_file: str | Path, *, out: str | Path,
                        per_direction: int = WORDING_ITEMS_PER_DIRECTION, seed: int = WORDING_SEED,
                        dataset: str | None = None, split: str | None = None, image_prefix: str = "") -> Result:
    """Draw the stratified VSR rows and write their three wordings each as ITEMS (VCA §18).

    ``split_file`` is a VSR split (jsonl); ``per_direction`` rows of each of above, below, left and right
    (50: the paper's 200), drawn with ``seed``. Writes ``out`` (ITEMS, .jsonl or .parquet) and
    ``<out stem>.summary.json`` beside it; ``rows`` of the result count the drawn rows per direction.
    """
    out = Path(out)
    default_dataset, default_split = split_from_stem(source_stem(Path(split_file)))
    built = wording_items(read_vsr(split_file), dataset=dataset or default_dataset, split=split or default_split,
                          image_prefix=image_prefix, per_direction=per_direction, seed=seed)
    summary = built.summary(source=str(split_file), out=str(out), system_messages=dict(NAMED_SYSTEM_MESSAGES))
    write_items(out, built.items)
    write_result(out.with_name(out.name.split(".")[0] + ".summary.json"), ItemsBuildSummary.from_dict(summary))
    rows = [{"direction": d, "rows": n, "items": 3 * n} for d, n in built.counts["by_direction"].items()]
    return Result.of(ItemsBuildSummary.from_dict(summary), rows, title="Fixed-200 VSR wording items")


def wording_diagnostics(runs: Sequence[str | Path] | str | Path, *, items: str | Path,
                        system_runs: Sequence[str | Path] | None = None, out: str | Path | None = None,
                        interface: str = "yesno") -> Result:
    """Acc, D-CC and the Pred./Credit agreement with the canonical wording, per model (VCA §18).

    ``runs``: ``vca score`` folders or margins files over the wording ITEMS ``items``; ``system_runs``: the
    canonical items scored again with another system message (``--system qwen-neutral``), compared with the
    default runs of the same model. With ``out``, writes ``wording.json`` and ``wording.csv`` there.
    """
    paths = [runs] if isinstance(runs, (str, Path)) else list(runs)
    wording = {}
    item_list = read_items(items)
    for item in item_list:
        kind, source = item.extra.get("wording"), item.extra.get("source_id")
        if kind not in ("canonical", "synonym") or source is None:
            raise InputError("not a wording item (extra.wording / extra.source_id missing; build them with "
                             "`vlaudit data vsr-wording`)", path=items, record=item.item_id, field="wording")
        wording[item.item_id] = (str(source), str(kind))
    margin_runs = read_margin_runs(paths, interface)
    extra_runs = read_margin_runs(list(system_runs), interface) if system_runs else []
    check_labels(item_list, [*margin_runs, *extra_runs], items=items)
    default = run_scores(margin_runs)
    other = run_scores(extra_runs)
    rows = paraphrase_rows(default, wording) + system_rows(default, other, wording)
    if not rows:
        raise InputError("no scored wording item in the runs (do they score these ITEMS?)", path=items,
                         field="item_id")
    result = WordingDiagnosticsResult.from_dict(to_json({"rows": rows, "items_file": str(items),
                                                         "runs": [run_info(s) for s in (*default, *other)]}))
    if out is not None:
        folder = Path(out)
        write_result(folder / "wording.json", result)
        write_table(folder / "wording.csv", [{k: r[k] for k in HEADLINE} for r in rows])
    return Result.of(result, [{k: r[k] for k in HEADLINE} for r in rows], title="Wording diagnostics")


def check_labels(item_list: Sequence[BenchmarkItem], runs: Sequence[MarginRun], *, items: str | Path) -> None:
    """Refuse a run whose gold label of an item is not the one the ``--items`` file gives: Acc and D-CC
    would be scored against flipped answers (a run of other items under the same ids, or an edited file)."""
    gold = {item.item_id: item.label for item in item_list if item.label is not None}
    for run in runs:
        if run.labels is None:
            continue
        for item_id, yes in zip(run.item_ids.astype(str).tolist(), run.labels.tolist(), strict=True):
            label = gold.get(item_id)
            if label is not None and label != ("yes" if yes else "no"):
                raise InputError(f"the run's label is {'yes' if yes else 'no'!r}, the --items file {items} says "
                                 f"{label!r}: the run did not score these items (or one of the files was edited)",
                                 path=run.source, record=item_id, field="label")
