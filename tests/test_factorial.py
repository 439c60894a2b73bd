"""The evidence-source factorial (VCA §10): build invariants, failing checks, and the analysis by hand."""

from __future__ import annotations

import csv
import dataclasses
import hashlib
import json
import shutil
from collections import Counter
from pathlib import Path

import numpy as np
import pytest
from PIL import Image
from scipy.stats import t as student_t
from typer.testing import CliRunner

import vlaudit.builders.factorial as fx
import vlaudit.commands.data_scenes  # noqa: F401  (registers `data factorial`)
import vlaudit.commands.factorial  # noqa: F401  (registers `vca factorial`)
from vlaudit.commands._apps import app
from vlaudit.errors import InputError
from vlaudit.files import write_table
from vlaudit.sources.items import read_items
from vlaudit.stats.bootstrap import bootstrap_indices, expanded_tail, percentile_interval
from vlaudit.stats.intervals import wilson_bounds, wilson_interval


@pytest.fixture(scope="module")
def full(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict]:
    out = tmp_path_factory.mktemp("factorial")
    result = CliRunner().invoke(app, ["data", "factorial", "--out", str(out)])
    assert result.exit_code == 0, result.output
    return out, json.loads((out / "manifest.json").read_text())


def test_full_build_counts_and_probe_accounting(full: tuple[Path, dict]) -> None:
    out, manifest = full
    items = read_items(out / "items.jsonl")
    assert len(items) == 1800 and manifest["stems"] == 200 and manifest["seed"] == 20260724
    assert manifest["stems_per_relation"] == {"above": 50, "below": 50, "left of": 50, "right of": 50}
    assert manifest["probes"] == {"original": 1800, "text": 600, "blank": 600, "total": 3000, "without_dedup": 5400}
    assert len(list((out / "images").glob("*.png"))) == 600
    cells = Counter((i.extra["visual_state"], i.extra["text_state"]) for i in items)
    assert len(cells) == 9 and set(cells.values()) == {200}
    agreement = [i for i in items if i.extra["agreement"]]
    assert len(agreement) == 400 and Counter(i.label for i in agreement) == {"yes": 200, "no": 200}
    with Image.open(out / items[0].image) as image:
        assert image.size == (512, 512) and image.mode == "RGB"


def test_texts_bit_identical_and_images_shared(full: tuple[Path, dict]) -> None:
    out, _ = full
    items = read_items(out / "items.jsonl")
    texts: dict[tuple[str, str], set[bytes]] = {}
    images: dict[tuple[str, str], set[str]] = {}
    for item in items:
        key_t = (item.extra["stem_id"], item.extra["text_state"])
        texts.setdefault(key_t, set()).add(item.question.encode("utf-8"))
        images.setdefault((item.extra["stem_id"], item.extra["visual_state"]), set()).add(item.image)
    assert len(texts) == 600 and all(len(v) == 1 for v in texts.values())
    assert len(images) == 600 and all(len(v) == 1 for v in images.values())
    digests = {k: hashlib.sha256((out / next(iter(v))).read_bytes()).hexdigest() for k, v in images.items()}
    assert len(set(digests.values())) == 600  # every (stem, visual state) is its own picture


def test_geometry_and_direction_balance(full: tuple[Path, dict]) -> None:
    out, _ = full
    subject_left = Counter()
    for item in read_items(out / "items.jsonl"):
        if item.extra["text_state"] != "none":
            continue
        (sx, sy, sw, sh), (ox, oy, ow, oh) = item.boxes["subject"], item.boxes["object"]
        dx, dy = (sx + sw / 2) - (ox + ow / 2), (sy + sh / 2) - (oy + oh / 2)
        horizontal = item.relation in ("left of", "right of")
        along, across = (dx, dy) if horizontal else (dy, dx)
        if item.extra["visual_state"] == "none":
            assert along == 0 and abs(across) > 0.05 * 512
        else:
            assert abs(along) > 0.05 * 512 and across == 0
            subject_left[(horizontal, along < 0)] += 1
        for box in (item.boxes["subject"], item.boxes["object"]):
            assert box[0] >= 0 and box[1] >= 0 and box[0] + box[2] <= 512 and box[1] + box[3] <= 512
    assert subject_left[(True, True)] == subject_left[(True, False)] == 100
    assert subject_left[(False, True)] == subject_left[(False, False)] == 100


def test_same_seed_identical_bytes(tmp_path: Path) -> None:
    a = fx.build_factorial(tmp_path / "a", n_per_relation=2)
    fx.build_factorial(tmp_path / "b", n_per_relation=2)
    fx.build_factorial(tmp_path / "c", n_per_relation=2, seed=1)
    assert a["items"] == 72 and a["probes"]["total"] == 120
    for name in ("items.jsonl", "manifest.json", "images/fx-left-001_Vn.png"):
        assert (tmp_path / "a" / name).read_bytes() == (tmp_path / "b" / name).read_bytes()
    assert (tmp_path / "a/items.jsonl").read_bytes() != (tmp_path / "c/items.jsonl").read_bytes()


def test_data_factorial_writes_what_build_factorial_writes_with_a_run_manifest(tmp_path: Path) -> None:
    """`data factorial` and the library's build_factorial write the same bytes; manifest.json is the one
    manifest type (versioned, with the command and its arguments) and keeps the design at its top level."""
    from vlaudit.results.manifest import RunManifest

    out = tmp_path / "fx"
    fx.build_factorial(out, seed=7, n_per_relation=1)
    built = {str(p.relative_to(out)): p.read_bytes() for p in sorted(out.rglob("*")) if p.is_file()}
    shutil.rmtree(out)
    result = CliRunner().invoke(app, ["data", "factorial", "--out", str(out), "--seed", "7", "--stems", "1"])
    assert result.exit_code == 0, result.output
    assert {str(p.relative_to(out)): p.read_bytes() for p in sorted(out.rglob("*")) if p.is_file()} == built
    data = json.loads((out / "manifest.json").read_text())
    manifest = RunManifest.from_dict(data)
    assert manifest.schema_version == 1 and manifest.command == "data factorial" == fx.FACTORIAL_COMMAND
    assert manifest.arguments == {"seed": 7, "stems": 1}  # not the folder: same seed, same bytes anywhere
    assert manifest.to_dict() == data and list(data)[:2] == ["schema_version", "command"]
    assert data["seed"] == 7 and data["n_per_relation"] == 1 and data["stems"] == 4
    assert len(data["image_sha256"]) == 12 and "packages" in data and "git_commit" in data


def _small_items() -> list:
    stems = fx.make_stems(n_per_relation=2)
    paths = {(s.stem_id, v): f"images/{s.stem_id}_{v}.png" for s in stems for v in fx.STATES}
    return fx.factorial_items(stems, paths)


def _corrupt(items: list, item_id: str, **changes: object) -> list:
    return [dataclasses.replace(i, **changes) if i.item_id == item_id else i for i in items]


@pytest.mark.parametrize("corruption, message", [
    (lambda xs: xs[:-1], "nine cells"),
    (lambda xs: _corrupt(xs, "fx-left-000-Vm-Tp", question=xs[0].question + " "), "differs across visual states"),
    (lambda xs: _corrupt(xs, "fx-left-000-Vn-Tp", image="images/fx-left-000_pos.png"), "reuse one image"),
    (lambda xs: [dataclasses.replace(i, image="images/x.png") if i.item_id.startswith("fx-above-001-V")
                 else i for i in xs], "three distinct images"),
    (lambda xs: [dataclasses.replace(i, boxes={"subject": i.boxes["object"], "object": i.boxes["subject"]})
                 if i.item_id.startswith("fx-left-000-Vp") else i for i in xs], "geometry"),
    (lambda xs: [i for i in xs if not i.item_id.startswith("fx-below-001")], "direction balance"),
    (lambda xs: [dataclasses.replace(i, extra={**i.extra, "text_control_id": "shared"})
                 if i.item_id.startswith("fx-left-000") else i for i in xs], "no-image controls"),
])
def test_checks_fail_on_corrupted_builds(corruption, message: str) -> None:
    items = _small_items()
    assert fx.check_factorial(items)["probes"]["total"] == 8 * 15
    with pytest.raises(fx.FactorialCheckError, match=message):
        fx.check_factorial(corruption(items))


def test_failed_build_writes_nothing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    real = fx.factorial_items
    monkeypatch.setattr(fx, "factorial_items", lambda stems, paths: real(stems, paths)[:-1])
    with pytest.raises(fx.FactorialCheckError):
        fx.build_factorial(tmp_path / "x", n_per_relation=2)
    assert not (tmp_path / "x" / "items.jsonl").exists() and not (tmp_path / "x" / "images").exists()
    assert [p.name for p in (tmp_path / "x").iterdir()] == []


# ---- the analysis on a synthetic margins table whose answers can be computed by hand --------------------

S = {"pos": 1.0, "neg": -1.0, "none": 0.0}


def _margins(item, stem_index: int, model: str) -> dict[str, float]:
    """original/text/blank margins of three synthetic models (see the test docstring)."""
    sv, st = S[item.extra["visual_state"]], S[item.extra["text_state"]]
    if model == "redundant":  # image and text agree and the text alone is stronger: every success is C-U
        return {"original": 2 * sv + 1.5 * st, "text": 4 * st, "blank": 4 * st - 1}
    if model == "half":  # responsive to the image on even stems only
        c = 1.0 if stem_index % 2 == 0 else 0.0
        return {"original": 1.5 * st + c * sv, "text": 2 * st, "blank": 0.0}
    return {"original": 1.0, "text": 1.0, "blank": 1.0}  # "yes-man": always yes, identical everywhere


@pytest.fixture(scope="module")
def analysed(tmp_path_factory: pytest.TempPathFactory) -> tuple[dict, Path]:
    root = tmp_path_factory.mktemp("fx_analysis")
    fx.build_factorial(root / "fx", n_per_relation=4)
    items = read_items(root / "fx" / "items.jsonl")
    stems = sorted({i.extra["stem_id"] for i in items})
    rows = []
    for model in ("redundant", "half", "yes-man"):
        for item in items:
            for context, m in _margins(item, stems.index(item.extra["stem_id"]), model).items():
                rows.append({"model": model, "dataset": "factorial", "item_id": item.item_id, "context": context,
                             "interface": "yesno", "nll_yes": 1.0, "nll_no": 1.0 + m, "margin": m,
                             "label": item.label})
    write_table(root / "run" / "margins.parquet", rows)
    result = CliRunner().invoke(app, ["vca", "factorial", str(root / "run"), "--items", str(root / "fx/items.jsonl"),
                                      "--out", str(root / "out"), "--resamples", "400"])
    assert result.exit_code == 0, result.output
    assert "Evidence-source factorial" in result.output
    return json.loads((root / "out" / "factorial.json").read_text()), root


def test_analysis_counts_by_hand(analysed: tuple[dict, Path]) -> None:
    """16 stems → 32 agreement decisions per model.

    redundant: m = 2·s_V + 1.5·s_T, text 4·s_T, blank 4·s_T − 1 → all 32 correct and C-U (r_t = 4 > 3.5),
    reversal moves the margin by 4 (responsive, and it crosses zero: flip), the neutral image gives 1.5 < 3.5.
    half: m = 1.5·s_T + c·s_V with c = 1 on even stems, text 2·s_T, blank 0 → C-U exactly where c = 0
    (16 decisions), none of them responsive. yes-man: every margin 1 → 16 correct (the + cells), all C-U
    (G = 0), unresponsive.
    """
    result, _ = analysed
    models = {m["model"]: m for m in result["models"]}
    red, half, yes = models["redundant"], models["half"], models["yes-man"]
    assert (red["correct"], red["cu"], red["cu_responsive"], red["cu_flip"], red["cu_neutral_exceed"]) == (32, 32, 32, 32, 32)
    assert (half["correct"], half["cu"], half["cu_responsive"], half["cu_flip"], half["cu_neutral_exceed"]) == (32, 16, 0, 0, 0)
    assert (yes["correct"], yes["cu"], yes["cu_responsive"], yes["cu_flip"]) == (16, 16, 0, 0)
    assert half["cu_rate"] == 0.5 and half["nonresponsive_mass"] == 0.5 and half["responsive_rate_all_correct"] == 0.5
    # the Wilson interval is design-effect corrected over the 16 stems: half's C-U decisions come in whole
    # stems (2 of 2 on odd stems, 0 of 2 on even ones), so v = 16/15·16/32² and n_eff = p(1 − p)/v = 15, read
    # with t_15: wider than the item-level Wilson(16, 32), which treats a stem's two decisions as independent
    t15 = float(student_t.ppf(0.975, 15))
    assert half["cu_rate_ci"] == pytest.approx([float(b) for b in wilson_bounds(7.5, 15, z=t15)])
    assert half["cu_rate_ci"][0] < wilson_interval(16, 32)[0] and half["cu_rate_ci"][1] > wilson_interval(16, 32)[1]
    # 32 of 32: no spread, n_eff = n, only the quantile is t_15
    assert red["responsive_rate_ci"] == pytest.approx([float(b) for b in wilson_bounds(32, 32, z=t15)])
    pooled = result["pooled"]
    assert (pooled["correct"], pooled["cu"], pooled["cu_responsive"]) == (80, 64, 32)
    assert pooled["cu_rate"] == 0.8 and pooled["cu_rate_macro"] == pytest.approx(2.5 / 3)
    assert pooled["responsive_rate"] == 0.5 and pooled["responsive_rate_macro"] == pytest.approx(1 / 3)
    lo, hi = pooled["cu_rate_ci"]
    assert 0.5 < lo < 0.8 < hi < 1.0


def test_effects_and_nested_validation_by_hand(analysed: tuple[dict, Path]) -> None:
    result, _ = analysed
    models = {m["model"]: m for m in result["models"]}
    red, half, yes = (models[k] for k in ("redundant", "half", "yes-man"))
    for t in ("pos", "neg", "none"):
        assert red["effects"][f"delta_v_{t}"]["mean"] == 4 and red["effects"][f"delta_v_{t}"]["ci"] == [4, 4]
        assert half["effects"][f"delta_v_{t}"]["mean"] == 1 and half["effects"][f"delta_v_{t}"]["positive_share"] == 0.5
        assert yes["effects"][f"delta_v_{t}"]["mean"] == 0
    assert red["effects"]["delta_t_pos"]["mean"] == 3 and red["effects"]["delta_t_text_only"]["mean"] == 8
    assert red["effects"]["interaction"]["mean"] == 0
    lo, hi = half["effects"]["delta_v_pos"]["ci"]
    assert 0 <= lo < 1 < hi <= 2
    n = red["nested"]
    assert (n["image_tpr"], n["text_fpr"], n["auroc_vca_correct"], n["auroc_confidence_correct"]) == (1, 0, 1, 1)
    n = half["nested"]  # image cells credited only where c = 1; zero-margin image cells answer "yes"
    assert (n["image_tpr"], n["text_fpr"], n["n_correct_image"], n["n_correct_text"]) == (0.5, 0, 24, 32)
    assert n["auroc_vca_correct"] == 1 and n["auroc_confidence_correct"] == 0
    assert yes["nested"]["auroc_vca_correct"] == 0.5 and yes["control_reuse_max_abs_diff"] == 0


def test_pooled_interval_resamples_stems_with_all_models(analysed: tuple[dict, Path]) -> None:
    """Reference loop: draw stem ids, keep every model's two agreement decisions of each drawn stem."""
    result, root = analysed
    stems = sorted({i.extra["stem_id"] for i in read_items(root / "fx/items.jsonl")})
    cu = np.array([2 + 2 * (k % 2) + 1 for k in range(len(stems))], dtype=float)  # redundant + half + yes-man
    correct = np.full(len(stems), 2 + 2 + 1, dtype=float)
    idx = bootstrap_indices(len(stems), 400, 20260724)
    samples = np.array([cu[row].sum() / correct[row].sum() for row in idx])
    # the expanded percentile interval over the 16 stems: the same resamples read at the small-k tails
    assert result["pooled"]["cu_rate_ci"] == pytest.approx(list(percentile_interval(samples, 1 - 2 * expanded_tail(0.95, 16))))
    assert expanded_tail(0.95, 16) < 0.025
    with (root / "out" / "factorial_models.csv").open(newline="") as handle:
        table = list(csv.DictReader(handle))
    assert [r["model"] for r in table] == ["half", "redundant", "yes-man", "pooled"]
    assert float(table[-1]["cu_rate"]) == 0.8


def test_analysis_bad_input(analysed: tuple[dict, Path]) -> None:
    from vlaudit.analysis.vca.factorial import run_factorial_analysis
    from vlaudit.files import read_records
    from vlaudit.sources.factorial_runs import read_factorial_inputs

    _, root = analysed
    rows = [r for r in read_records(root / "run/margins.parquet")
            if not (r["model"] == "half" and r["item_id"] == "fx-left-000-Vn-Tn")]
    write_table(root / "bad" / "margins.parquet", rows)
    with pytest.raises(InputError, match="lacks 1 factorial items"):
        run_factorial_analysis(read_factorial_inputs(root / "bad", items=root / "fx/items.jsonl"),
                               out_dir=root / "bad_out")
    items = read_records(root / "fx/items.jsonl")
    write_table(root / "bad_items.jsonl", items[:-1])
    with pytest.raises(InputError, match="items for cell"):
        run_factorial_analysis(read_factorial_inputs(root / "run", items=root / "bad_items.jsonl"),
                               out_dir=root / "bad_out")
    assert not (root / "bad_out").exists()


def test_several_run_dirs_pool_like_one_margins_file(analysed: tuple[dict, Path]) -> None:
    """One `vca score` run per model (the usual layout) gives the same per-model and pooled results."""
    from vlaudit.files import read_records

    result, root = analysed
    rows = read_records(root / "run/margins.parquet")
    dirs = []
    for model in ("redundant", "half", "yes-man"):
        write_table(root / f"run_{model}" / "margins.parquet", [r for r in rows if r["model"] == model])
        dirs.append(str(root / f"run_{model}"))
    out = CliRunner().invoke(app, ["vca", "factorial", *dirs, "--items", str(root / "fx/items.jsonl"),
                                   "--out", str(root / "out_split"), "--resamples", "400"])
    assert out.exit_code == 0, out.output
    split = json.loads((root / "out_split" / "factorial.json").read_text())
    assert split["pooled"] == result["pooled"]
    assert [m["model"] for m in split["models"]] == [m["model"] for m in result["models"]]
    assert [m["cu_rate_ci"] for m in split["models"]] == [m["cu_rate_ci"] for m in result["models"]]
    twice = CliRunner().invoke(app, ["vca", "factorial", dirs[0], dirs[0], "--items", str(root / "fx/items.jsonl"),
                                     "--out", str(root / "out_twice")])
    assert twice.exit_code != 0 and "is also in" in str(twice.exception)
    assert not (root / "out_twice").exists()


def test_runner_plan_scores_15_unique_probes_per_stem(tmp_path: Path) -> None:
    """The scoring runner's own planning step deduplicates the shared text-only and blank probes (§10)."""
    from vlaudit.scoring.run.plan import plan_run
    from vlaudit.sources.images import ImageStore

    fx.build_factorial(tmp_path / "fx", n_per_relation=1)
    items = read_items(tmp_path / "fx" / "items.jsonl")
    records, units = plan_run(items, ImageStore(tmp_path / "fx"), ["original", "text", "blank"], ["yesno"], 0,
                              "fingerprint", lambda question, interface, image: f"{image}|{question}|{interface}")
    assert len(records) == 3 * len(items) == 108 and all(r.status == "ok" for r in records)
    assert Counter(u.context for u in units) == {"original": 36, "text": 12, "blank": 12}
    assert len(units) == 15 * 4  # 200 stems → 3,000 probes per model
    for unit in units:
        if unit.context != "original":  # one shared control per (stem, text state), used by its 3 visual states
            assert {r.item.extra["text_control_id"] for r in unit.records} == {unit.item.extra["text_control_id"]}
            assert len(unit.records) == 3


# VCA §10 / Table 8: the answer each cell's relation sources support, worked out by hand for all nine cells
# (the image decides where it states a relation; with the aligned image the note decides; nothing → no).
HAND_LABELS = {
    ("pos", "pos"): "yes", ("pos", "neg"): "yes", ("pos", "none"): "yes",
    ("neg", "pos"): "no", ("neg", "neg"): "no", ("neg", "none"): "no",
    ("none", "pos"): "yes", ("none", "neg"): "no", ("none", "none"): "no",
}


def test_one_cell_label_for_builder_and_nested_validation(full: tuple[Path, dict]) -> None:
    from vlaudit.analysis.vca.factorial import nested_validation

    for (v, t), label in HAND_LABELS.items():
        assert fx.cell_label(v, t) == label, (v, t)
    out, _ = full
    items = read_items(out / "items.jsonl")
    assert all(i.label == HAND_LABELS[(i.extra["visual_state"], i.extra["text_state"])] for i in items)
    assert Counter(i.extra["label_source"] for i in items) == {"image": 1200, "text": 400, "none": 200}
    # a model whose original margin gives every cell's label (+1 yes, −1 no) is correct on all nested cells,
    # including the (V∅, T+) text-source cell that an image-only label would call "no"
    states = fx.STATES
    labelled = np.array([[[1.0 if fx.cell_label(v, t) == "yes" else -1.0 for t in states] for v in states]] * 3)
    nested = nested_validation({"original": labelled, "text": np.zeros_like(labelled),
                                "blank": np.zeros_like(labelled)})
    assert (nested["n_correct_image"], nested["n_correct_text"]) == (6, 6)
    with pytest.raises(ValueError, match="unknown factorial state"):
        fx.cell_label("pos", "maybe")


def test_a_nested_rate_without_its_decisions_says_why_in_the_json_and_the_csv(analysed: tuple[dict, Path],
                                                                               tmp_path: Path) -> None:
    """A model wrong on every nested cell has no correct decision of either source: the credit rates on correct
    decisions and their AUROCs are Missing with the reason, in factorial.json and as text in the CSV column."""
    import copy

    from vlaudit.analysis.vca.factorial import (
        NO_CORRECT_IMAGE,
        ONE_SOURCE_CORRECT,
        csv_rows,
        nested_validation,
    )
    from vlaudit.results.missing import Missing
    from vlaudit.results.vca.outputs import FactorialResult
    from vlaudit.results.versioned import to_json

    states = fx.STATES
    labelled = np.array([[[1.0 if fx.cell_label(v, t) == "yes" else -1.0 for t in states] for v in states]] * 3)
    wrong = nested_validation({"original": -labelled, "text": np.zeros_like(labelled),
                               "blank": np.zeros_like(labelled)})
    assert wrong["image_tpr_correct"] == Missing(NO_CORRECT_IMAGE)
    assert wrong["auroc_vca_correct"] == Missing(ONE_SOURCE_CORRECT) and isinstance(wrong["image_tpr"], float)
    result = copy.deepcopy(analysed[0])
    result["models"][0]["nested"] = to_json(wrong)
    assert result["models"][0]["nested"]["auroc_vca_correct"] == {"missing": ONE_SOURCE_CORRECT}
    assert FactorialResult.from_dict(result).models[0].nested.auroc_vca_correct == Missing(ONE_SOURCE_CORRECT)
    models, _ = csv_rows(result)
    assert models[0]["nested_auroc_vca_correct"] == f"— ({ONE_SOURCE_CORRECT})"
    assert models[1]["nested_auroc_vca_correct"] == "1.0"  # the column is text: one type per CSV column
    write_table(tmp_path / "factorial_models.csv", models)
    with (tmp_path / "factorial_models.csv").open(newline="") as handle:
        assert next(csv.DictReader(handle))["nested_image_tpr_correct"] == f"— ({NO_CORRECT_IMAGE})"


def test_zero_width_pooled_intervals_print_as_a_dash(analysed: tuple[dict, Path]) -> None:
    """The redundant model alone: every C-U decision is responsive, so the pooled responsive rate's stem
    bootstrap gives [100, 100] in every resample, an artefact printed as "—" (the JSON keeps the bounds)."""
    from vlaudit.files import read_records

    _, root = analysed
    rows = [r for r in read_records(root / "run/margins.parquet") if r["model"] == "redundant"]
    write_table(root / "only_redundant" / "margins.parquet", rows)
    out = CliRunner().invoke(app, ["vca", "factorial", str(root / "only_redundant"), "--items",
                                   str(root / "fx/items.jsonl"), "--out", str(root / "out_redundant"),
                                   "--resamples", "200"], env={"COLUMNS": "200"})
    assert out.exit_code == 0, out.output
    result = json.loads((root / "out_redundant" / "factorial.json").read_text())
    assert result["pooled"]["responsive_rate_ci"] == [1.0, 1.0]
    pooled = next(line for line in out.output.splitlines() if line.strip().startswith("pooled"))
    assert "[100.00, 100.00]" not in pooled and "100.00 —" in pooled
    assert "design-effect" in " ".join(out.output.split())
