"""The published files through every giveaway lint: SugarCrepe (vlaudit's reader layout, ../shared/data/sugarcrepe)
and the compositionality releases (../shared/data/compositionality: VL-CheckList through its adapter; VALSE,
SugarCrepe++ and COLA through minimal local adapters, as their suite readers are registered elsewhere). Skipped
cleanly without ../shared/data."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from vlaudit.metrics.giveaway import lints
from vlaudit.metrics.giveaway.metric import DEFAULT_METRIC
from vlaudit.metrics.giveaway.table import PairTable
from vlaudit.records import SuiteImage, SuiteItem
from vlaudit.sources.suite_items import sugarcrepe_items, vl_checklist_items

SUGARCREPE = ("add_att", "add_obj", "replace_att", "replace_obj", "replace_rel", "swap_att", "swap_obj")


def every_lint(items: list[SuiteItem]) -> dict[str, object]:
    table = PairTable.from_items(items)
    tokens = lints.one_side_tokens(table)
    return {"table": table, "bow": lints.bow_identical(table), "tv": lints.unigram_tv(table),
            "length": lints.length_difference(table), "tokens": tokens, "dup": lints.duplicates(table),
            "ceiling": lints.order_blind_ceiling(table, DEFAULT_METRIC),
            "rule": DEFAULT_METRIC.solved(table, table.text_scores(lints.side_token_scores(table, tokens)))}


def test_sugarcrepe_files(shared_data: Path) -> None:
    found = {}
    for name in SUGARCREPE:
        items = sugarcrepe_items(shared_data / "sugarcrepe" / f"{name}.json")
        result = every_lint(items)
        assert result["table"].n_pairs == 2 * len(items)  # type: ignore[attr-defined]
        assert 0.0 <= result["tv"].tv <= 1.0  # type: ignore[attr-defined]
        found[name] = result
    # swaps keep every word: most swapped negatives are BoW-identical artifacts (never a positive) and the
    # order-blind ceiling is what is left; adds make the negative longer: "shorter wins" is near 1
    swap = found["swap_obj"]
    assert swap["bow"].flagged / swap["bow"].negatives > 0.5  # type: ignore[attr-defined]
    assert swap["ceiling"].mean() == pytest.approx(1 - swap["bow"].flagged / swap["bow"].negatives)  # type: ignore[attr-defined]
    assert found["add_att"]["length"].shorter > 0.95 and found["add_att"]["bow"].flagged == 0  # type: ignore[attr-defined]
    assert found["replace_att"]["ceiling"].mean() == 1.0  # type: ignore[attr-defined]


def test_vl_checklist_keeps_upper_case_predicates_in_its_positives(shared_data: Path) -> None:
    """Relation/vg/spatial (30,650 items): "ON" and "IN" are positive-side tokens only (the negatives are
    lower-cased), and that case-sensitive rule alone solves about three quarters of the items."""
    items = vl_checklist_items(shared_data / "compositionality" / "vl_checklist" / "Relation__vg__spatial.json")
    assert len(items) == 30_650
    result = every_lint(items)
    tokens = {(t.token, t.side) for t in result["tokens"]}  # type: ignore[attr-defined]
    assert {("ON", "positive"), ("IN", "positive")} <= tokens
    assert not any(t.token.isupper() and t.side == "negative" for t in result["tokens"])  # type: ignore[attr-defined]
    assert 0.70 < result["rule"].mean() < 0.80  # type: ignore[attr-defined]
    assert result["dup"].duplicate_items > 0  # the release repeats (image, POS, NEG) items  # type: ignore[attr-defined]
    for small in ("Attribute__vg__color.json", "Attribute__vg__size.json",
                  "Object__Location__vg_location__vg_subj_margin.json"):
        assert every_lint(vl_checklist_items(shared_data / "compositionality" / "vl_checklist" / small))


def _valse(path: Path) -> list[SuiteItem]:
    """VALSE's {sample_id: {image_file, caption, foil, ...}}: texts [caption, foil], positive (0, 0)."""
    data = json.loads(path.read_text())
    return [SuiteItem("valse", key, path.stem, (SuiteImage(row["image_file"]),), (row["caption"], row["foil"]),
                      ((0, 0),), key) for key, row in data.items()]


def _sugarcrepe_pp(path: Path) -> list[SuiteItem]:
    """SugarCrepe++'s [{id, filename, caption, caption2, negative_caption}]: two positives, one negative."""
    return [SuiteItem("sugarcrepe++", str(row["id"]), path.stem, (SuiteImage(row["filename"]),),
                      (row["caption"], row["caption2"], row["negative_caption"]), ((0, 0), (0, 1)), str(row["id"]))
            for row in json.loads(path.read_text())]


def _cola(path: Path) -> list[SuiteItem]:
    """COLA multi-object [image1_url, caption1, image2_url, caption2]: a 2×2 group."""
    return [SuiteItem("cola", str(k), "cola", (SuiteImage(Path(a).name), SuiteImage(Path(c).name)), (b, d),
                      ((0, 0), (1, 1)), str(k)) for k, (a, b, c, d) in enumerate(json.loads(path.read_text()))]


def test_compositionality_files(shared_data: Path) -> None:
    root = shared_data / "compositionality"
    valse = {p.stem: every_lint(_valse(p)) for p in sorted((root / "valse").glob("*.json"))}
    assert len(valse) == 11
    # actant swap often keeps every word of the caption (articles and verb forms change in the rest): over a
    # quarter of its foils are BoW-identical artifacts (296 of 1,042 in the release)
    swap = valse["actant-swap"]
    assert swap["bow"].flagged / swap["bow"].negatives > 0.25  # type: ignore[attr-defined]
    pp = {p.stem: every_lint(_sugarcrepe_pp(p)) for p in sorted((root / "sugarcrepe_pp").glob("*.json"))}
    assert len(pp) == 5
    # the paraphrase is a positive: comparisons are 2 per item
    assert pp["swap_obj"]["length"].comparisons == 2 * len(pp["swap_obj"]["table"].items)  # type: ignore[attr-defined]
    cola = every_lint(_cola(root / "cola" / "COLA_multiobjects_matching_benchmark.json"))
    assert len(cola["table"].items) == 210  # type: ignore[attr-defined]
    # a 2×2 group: every text is a positive, both sides hold the same texts
    assert cola["bow"].flagged == 0 and cola["tv"].tv == 0.0 and cola["length"].mean == 0.0  # type: ignore[attr-defined]
