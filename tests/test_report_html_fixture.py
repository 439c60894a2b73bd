"""A small fabricated run folder in the demo's issue-12 summary schema, for the report tests.

:func:`build_run_folder` writes ``summary.json`` (cycles per encoder/scorer/family/split, rank sweep, VCA runs,
known answers, timings, versions), a ``vca report``-style ``items.csv`` with a margins table, an items table and
PNG images, a strict cycles table with scores that fail it, and a ``factorial.json``. One question and one
caption carry a ``<script>`` tag: the report must show it as text.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
from PIL import Image

HOSTILE = '<script>window.__pwned = 1</script> & "quoted"'
SPATIAL, BAG = "ref:scene-clip-spatial", "ref:scene-clip-bag"
CONTEXTS = ("original", "text", "blank", "mean", "mismatch", "rele", "irre")


def _png(path: Path, colour: tuple[int, int, int], seed: int) -> None:
    rng = np.random.default_rng(seed)
    pixels = np.full((48, 64, 3), colour, dtype=np.uint8)
    x, y = rng.integers(4, 40), rng.integers(4, 24)
    pixels[y:y + 16, x:x + 16] = (250, 250, 250)
    path.parent.mkdir(parents=True, exist_ok=True)
    Image.fromarray(pixels).save(path)


def _cell(acc: float, half: float, n: int = 40, tie_rate: float = 0.0) -> dict:
    return {"n": n, "cycle_acc": acc, "ci": [acc - half, acc + half], "tie_rate": tie_rate}


def _encoder(left_right: float) -> dict:
    def families(coarse: float, strict: float) -> dict:
        return {"coco-object-coarse": {"test": _cell(coarse, 0.05)},
                "coco-strict-left-right": {"test": _cell(strict, 0.08)}}

    additive = {f: {"test": _cell(0.5, 0.0, tie_rate=1.0)} for f in ("coco-object-coarse", "coco-strict-left-right")}
    return {"scorers": {"additive": {"families": additive},
                        "zero-shot": {"families": families(0.93, left_right - 0.1)},
                        "probe-rank-64": {"families": families(0.95, left_right)}}}


def summary() -> dict:
    runs = []
    for model, acc, dcc in (("ref:scene-vqa-grounded", 0.88, 0.81), ("ref:scene-vqa-prior", 0.71, 0.12)):
        cu = acc - dcc
        runs.append({"model": model, "dataset": "gsr-like", "interface": "yesno", "n": 120, "acc": acc,
                     "dep": dcc + 0.05, "dcc": dcc, "cu": cu,
                     "ci": {k: [v - 0.04, v + 0.04] for k, v in (("acc", acc), ("dep", dcc + 0.05), ("dcc", dcc),
                                                                  ("cu", cu))}})
    return {
        "config": {"seed": 0, "seeds": [0, 1, 2], "quick": True},
        "cycles": {"encoders": {SPATIAL: _encoder(0.87), BAG: _encoder(0.51)},
                   "rank_sweep": {m: {"coco-strict-left-right": {str(r): v for r, v in zip(
                       (1, 4, 16, 64), (0.52, 0.61, 0.8, 0.86) if m == SPATIAL else (0.5, 0.49, 0.51, 0.5),
                       strict=True)}} for m in (SPATIAL, BAG)}},
        "vca": {"runs": runs},
        "factorial": [{"model": "ref:scene-vqa-grounded", "stems": 8, "correct": 15, "cu": 2, "cu_rate": 0.13,
                       "responsive_rate": 1.0, "flip_rate": 0.5}],
        "known_answers": [
            {"check": "bag encoder: coco-strict-left-right probe CycleAcc within 0.5 ± 0.1", "expected": "[0.4, 0.6]",
             "observed": 0.51, "passed": True},
            {"check": "mixture VQA: D-CC interval contains the planted fraction", "expected": 0.6,
             "observed": [0.55, 0.66], "passed": True},
            {"check": "a deliberately failing row", "expected": "≥ 0.9", "observed": 0.42, "passed": False},
        ],
        "timings": {"cycles": 12.5, "vca": 20.25},
        "versions": {"vlaudit": "0.1.0", "torch": "2.x"},
    }


def _vca_files(root: Path) -> None:
    from vlaudit.tables import write_jsonl, write_parquet, write_table

    model, dataset = "ref:scene-vqa-prior", "gsr-like"
    items, item_rows, margin_rows = [], [], []
    for k in range(4):
        item_id = f"item-{k}"
        question = HOSTILE if k == 0 else f"Is the square to the left of the circle? ({k})"
        items.append({"item_id": item_id, "image": f"images/img{k}.png", "question": question, "label": "yes",
                      "dataset": dataset})
        _png(root / "inputs" / "images" / f"img{k}.png", (40 + 50 * k, 90, 160), k)
        cu = k < 3
        item_rows.append({"model": model, "dataset": dataset, "interface": "yesno", "item_id": item_id,
                          "group_id": None, "label": "yes", "pred": "yes", "correct": True, "g_img": -0.1 * k
                          if cu else 0.3, "dep": not cu, "dcc": not cu, "cu": cu, "wrong_dep": False})
        for j, context in enumerate(CONTEXTS):
            margin_rows.append({"model": model, "dataset": dataset, "item_id": item_id, "context": context,
                                "interface": "yesno", "margin": 1.0 - 0.1 * j, "label": "yes"})
    write_jsonl(root / "inputs" / "items.jsonl", items)
    write_table(root / "vca" / "report" / "items.csv", item_rows)
    import pyarrow as pa

    write_parquet(root / "vca" / "run" / "margins.parquet", pa.Table.from_pylist(margin_rows))
    manifest = {"model": model, "revision": "abc123", "seed": 0, "contexts": list(CONTEXTS),
                "interfaces": ["yesno"], "n_items": 4, "git_commit": "0123456789abcdef",
                "packages": {"torch": "2.x"},
                "arguments": {"benchmark": str(root / "inputs" / "items.jsonl"), "images": str(root / "inputs")}}
    (root / "vca" / "run" / "manifest.json").write_text(json.dumps(manifest))


def _cycle_files(root: Path) -> None:
    from vlaudit.tables import write_jsonl, write_table

    cycles, scores = [], []
    for k in range(3):
        a, b = f"{2 * k}", f"{2 * k + 1}"
        for image in (a, b):
            _png(root / "scenes" / "images" / f"{int(image):012d}.png", (200, 120 + 20 * k, 60), 10 + int(image))
        cycles.append({"cycle_id": f"coco-strict-left-right/test/{k:06d}", "family": "coco-strict-left-right",
                       "split": "test", "image_1": a, "caption_1": f"c{a}", "image_2": b, "caption_2": f"c{b}",
                       "text_1": HOSTILE if k == 0 else "a cup to the left of a dog",
                       "text_2": "a dog to the left of a cup",
                       "file_name_1": f"{int(a):012d}.png", "file_name_2": f"{int(b):012d}.png"})
        # matched pairs below their swaps: Δ = (0 + 0) − (1 + 1) = −2 (a failed cycle)
        scores += [{"image_id": a, "caption_id": f"c{a}", "score": 0.0},
                   {"image_id": b, "caption_id": f"c{b}", "score": 0.0},
                   {"image_id": a, "caption_id": f"c{b}", "score": 1.0},
                   {"image_id": b, "caption_id": f"c{a}", "score": 1.0 + k}]
    write_jsonl(root / "cycles" / "coco.jsonl", cycles)
    write_table(root / "cycles" / "scores_coco_zero-shot.csv", scores)


def _factorial(root: Path) -> None:
    model = {"model": "ref:scene-vqa-grounded", "dataset": "factorial", "stems": 8, "correct": 15, "cu": 2,
             "cu_rate": 0.13, "cu_rate_ci": [0.04, 0.38], "responsive_rate": 1.0, "responsive_rate_ci": [0.34, 1.0],
             "responsive_rate_all_correct": 0.93, "responsive_rate_all_correct_ci": [0.7, 0.99],
             "flip_rate": 0.5, "flip_rate_ci": [0.09, 0.9],
             "effects": {k: {"mean": m, "ci": [m - 0.2, m + 0.2], "positive_share": 0.9}
                         for k, m in (("delta_v_pos", 1.2), ("delta_v_neg", 1.1), ("delta_v_none", 0.9))}}
    path = root / "factorial" / "report" / "factorial.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"models": [model], "pooled": {}, "stems": 8}))


def build_run_folder(root: Path) -> Path:
    """Write the whole fixture under ``root`` and return it."""
    root.mkdir(parents=True, exist_ok=True)
    (root / "summary.json").write_text(json.dumps(summary(), ensure_ascii=False))
    _vca_files(root)
    _cycle_files(root)
    _factorial(root)
    return root


def test_fixture_folder_is_discovered(tmp_path: Path) -> None:
    from vlaudit.report.html_discover import discover

    art = discover(build_run_folder(tmp_path / "run"))
    assert art.summary is not None and not art.problems
    assert [p.name for p in art.vca_items] == ["items.csv"]
    assert [p.name for p in art.margins] == ["margins.parquet"]
    assert [p.name for p in art.cycle_tables] == ["coco.jsonl"]
    assert [p.name for p in art.score_tables] == ["scores_coco_zero-shot.csv"]
    assert len(art.factorials) == 1 and len(art.manifests) == 1 and len(art.known_answers) == 3
