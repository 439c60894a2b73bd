"""One run spec shared by the CLI and the Python API, one manifest type.

* the CLI parses its options into exactly the spec the API function takes;
* a run into a folder holding a run with another spec is refused, from either front door, naming the
  differing fields and leaving the other door's files untouched; the same spec resumes;
* the API writes byte for byte what the CLI writes for the same inputs (``Result.save(dir)`` for results;
  the run folder itself for the scoring runs, timings aside).
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from tiny_cycles import two_cycles

pytestmark = pytest.mark.usefixtures("reference_cache")


def _files(folder: Path, *, skip: tuple[str, ...] = ()) -> dict[str, bytes]:
    """Every file under ``folder`` → its bytes (names in ``skip``, relative paths, left out)."""
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*"))
            if p.is_file() and str(p.relative_to(folder)) not in skip}


@pytest.fixture
def refusal(one_error_line):
    """The one refusal line of a command, whitespace folded."""
    return lambda code, out, err: " ".join(one_error_line(code, out, err).split())


# ------------------------------------------------------------------------------------------ the manifest


def test_the_manifest_is_one_versioned_type_with_one_atomic_writer(tmp_path) -> None:
    from vlaudit.scoring.run.manifest import MANIFEST_SCHEMA_VERSION, RunManifest, write_manifest

    manifest = RunManifest(command="vca score", arguments={"seed": 3}, record={"model": "m", "n_items": 2},
                           packages={"numpy": "2"}, git_commit=None)
    (tmp_path / "run").mkdir()
    path = write_manifest(tmp_path / "run", manifest)
    data = json.loads(path.read_text())
    assert data["schema_version"] == MANIFEST_SCHEMA_VERSION == 1
    assert data["command"] == "vca score" and data["model"] == "m" and data["arguments"] == {"seed": 3}
    assert RunManifest.from_dict(data) == manifest
    assert [p.name for p in (tmp_path / "run").iterdir()] == ["manifest.json"]  # no temporary file left
    with pytest.raises(ValueError, match="arguments"):
        RunManifest(command="x", arguments={}, record={"arguments": {}})
    # a manifest written before the type existed reads back as version 0
    assert RunManifest.from_dict({"model": "m", "arguments": {"command": "features"}}).schema_version == 0


# ------------------------------------------------------------------ the CLI builds the spec the API takes


class _Captured(Exception):
    pass


def _parts_spec(function: str, images: Path):
    """The spec built from its parts, as a notebook would build it, for each command line below."""
    from vlaudit import (
        CycleScoreSpec,
        DualOptions,
        DualScoreSpec,
        FeaturesSpec,
        HfOptions,
        ModelRef,
        RunOptions,
        ScoreSpec,
    )

    return {
        "score_margins": lambda: ScoreSpec(model=ModelRef("ref:tiny-qwen2-vl", HfOptions(dtype="fp32")),
                                           benchmark=Path("b.jsonl"), images=images, out=Path("o"),
                                           contexts=("original", "blank"), seed=4),
        "score_dual_margins": lambda: DualScoreSpec(model=ModelRef("ref:tiny-open-clip", DualOptions()),
                                                    benchmark=Path("b.jsonl"), images=images, out=Path("o"),
                                                    no_image="zero"),
        "extract_features": lambda: FeaturesSpec(model=ModelRef("ref:tiny-open-clip"), cycles=Path("c.jsonl"),
                                                 images=images, out=Path("o"), run=RunOptions(batch_size=3)),
        "score_cycles_mllm": lambda: CycleScoreSpec(model=ModelRef("ref:tiny-qwen2-vl"), cycles=Path("c.jsonl"),
                                                    images=images, out=Path("s.csv"), query="Is it {caption}?"),
    }[function]()


@pytest.mark.parametrize(("function", "args"), [
    ("score_margins",
     ["vca", "score", "--model", "ref:tiny-qwen2-vl", "--benchmark", "b.jsonl", "--images", "IMAGES", "--out", "o",
      "--contexts", "original,blank", "--seed", "4", "--dtype", "fp32", "--overwrite"]),
    ("score_dual_margins",
     ["vca", "score-dual", "--model", "ref:tiny-open-clip", "--benchmark", "b.jsonl", "--images", "IMAGES",
      "--out", "o", "--no-image", "zero", "--overwrite"]),
    ("extract_features",
     ["features", "--model", "ref:tiny-open-clip", "--cycles", "c.jsonl", "--images", "IMAGES", "--out", "o",
      "--batch-size", "3", "--overwrite"]),
    ("score_cycles_mllm",
     ["cycles", "score-mllm", "--model", "ref:tiny-qwen2-vl", "--cycles", "c.jsonl", "--images", "IMAGES",
      "--out", "s.csv", "--query", "Is it {caption}?", "--overwrite"]),
])
def test_the_cli_calls_the_api_function_with_the_spec_a_notebook_would_build(function, args, tmp_path, cli,
                                                                              monkeypatch) -> None:
    import vlaudit
    from vlaudit.errors import InputError

    (tmp_path / "images").mkdir()
    monkeypatch.chdir(tmp_path)
    calls = []

    def capture(spec, **options):
        calls.append((spec, options.get("overwrite")))
        raise InputError("captured")

    monkeypatch.setattr(vlaudit, function, capture)  # the facade name the command calls
    code, out, err = cli(*[str(tmp_path / "images") if a == "IMAGES" else a for a in args])
    assert "captured" in err, (code, out, err)
    assert calls == [(_parts_spec(function, tmp_path / "images"), True)]


# ------------------------------------------------------------------------------- reruns, both front doors


def test_score_dual_api_then_cli_then_api(tmp_path, cli, refusal, toy_items) -> None:
    import vlaudit

    items = toy_items(tmp_path / "bench")
    images, run = tmp_path / "bench" / "images", tmp_path / "run"
    vlaudit.score_dual_margins(vlaudit.DualScoreSpec.of(model="ref:tiny-open-clip", benchmark=items,
                                                        images=images, out=run, contexts=("original", "text")))
    manifest = json.loads((run / "manifest.json").read_text())
    assert manifest["schema_version"] == 1 and manifest["command"] == "vca score-dual"
    assert manifest["arguments"]["benchmark"] == str(items.resolve()) and manifest["arguments"]["no_image"]
    api_files = _files(run)
    args = ["vca", "score-dual", "--model", "ref:tiny-open-clip", "--benchmark", items, "--images", images,
            "--out", run, "--contexts", "original,text"]
    line = refusal(*cli(*args, "--no-image", "zero"))
    assert f"{run}, field '--out': holds a run with other arguments (no_image: 'mean-image' → 'zero')" in line
    assert _files(run) == api_files  # the API's run is untouched
    code, _, err = cli(*args, "--batch-size", "5")  # the same spec (batch size is operational): a rerun
    assert code == 0, err
    same = ("manifest.json", "features/manifest.json")  # the manifests record the batch size and the seconds
    assert _files(run, skip=same) == {k: v for k, v in api_files.items() if k not in same}
    cli_files = _files(run)
    with pytest.raises(vlaudit.InputError, match=r"other arguments \(seed: 0 → 2\)"):
        vlaudit.score_dual_margins(vlaudit.DualScoreSpec.of(model="ref:tiny-open-clip", benchmark=items,
                                                            images=images, out=run, contexts=("original",
                                                                                              "text"), seed=2))
    assert _files(run) == cli_files  # the CLI's run is untouched
    code, _, err = cli(*args, "--no-image", "zero", "--overwrite")
    assert code == 0, err
    assert json.loads((run / "manifest.json").read_text())["no_image"] == "zero"


def test_score_mllm_cli_then_api_then_cli(tmp_path, cli, refusal) -> None:
    import vlaudit

    cycles = two_cycles(tmp_path / "data")
    images, out = tmp_path / "data" / "images", tmp_path / "scores.csv"
    run = tmp_path / "scores.csv.run"
    args = ["cycles", "score-mllm", "--model", "ref:tiny-qwen2-vl", "--cycles", cycles, "--images", images,
            "--out", out]
    code, _, err = cli(*args)
    assert code == 0, err
    cli_files = _files(run, skip=("summary.json",))
    scores = out.read_bytes()
    assert json.loads((run / "manifest.json").read_text())["command"] == "cycles score-mllm"
    with pytest.raises(vlaudit.InputError, match=r"other arguments \(query: "):
        vlaudit.score_cycles_mllm(vlaudit.CycleScoreSpec.of(model="ref:tiny-qwen2-vl", cycles=cycles,
                                                            images=images, out=out, query="Is it {caption}?"))
    assert _files(run, skip=("summary.json",)) == cli_files and out.read_bytes() == scores
    result = vlaudit.score_cycles_mllm(vlaudit.CycleScoreSpec.of(model="ref:tiny-qwen2-vl", cycles=cycles,
                                                                 images=images, out=out))
    assert result.summary.n_units_scored_now == 0  # the same spec resumes from the cache
    assert result.schema_version == 1 and result.run_dir == str(run) and result.n_cycles == 2
    assert type(result).from_dict(json.loads(json.dumps(result.to_dict()))) == result  # a typed round trip
    assert _files(run, skip=("summary.json",)) == cli_files and out.read_bytes() == scores
    line = refusal(*cli(*args, "--min-pixels", "64"))
    assert f"{run}, field '--run-dir': holds a run with other arguments (min_pixels: None → 64)" in line


def test_features_api_then_cli(tmp_path, cli, refusal) -> None:
    import vlaudit

    cycles = two_cycles(tmp_path / "data")
    images, feats = tmp_path / "data" / "images", tmp_path / "feats"
    vlaudit.extract_features(vlaudit.FeaturesSpec.of(model="ref:tiny-open-clip", cycles=cycles, images=images,
                                                     out=feats))
    api_files = _files(feats)
    assert json.loads((feats / "manifest.json").read_text())["arguments"]["cycles_sha256"]
    args = ["features", "--model", "ref:tiny-open-clip", "--cycles", cycles, "--images", images, "--out", feats]
    line = refusal(*cli(*args, "--dtype", "float32"))
    assert f"{feats}, field '--out': holds a run with other arguments (dtype: 'auto' → 'float32')" in line
    assert _files(feats) == api_files
    code, _, err = cli(*args)
    assert code == 0, err


# ------------------------------------------------------------------------- byte for byte what the CLI writes


def _same_bytes(api_run, cli_run, folder: Path, *, skip: tuple[str, ...] = ()) -> None:
    """The API's files in ``folder``, then (the folder removed) the CLI's: the same names and bytes."""
    api_run()
    api = _files(folder, skip=skip)
    shutil.rmtree(folder)
    code, _, err = cli_run()
    assert code == 0, err
    assert _files(folder, skip=skip).keys() == api.keys()
    for name, data in api.items():
        assert _files(folder, skip=skip)[name] == data, name


def test_score_margins_writes_what_vca_score_writes(tmp_path, cli, toy_items) -> None:
    import vlaudit

    items = toy_items(tmp_path / "bench")
    images, run = tmp_path / "bench" / "images", tmp_path / "run"
    _same_bytes(lambda: vlaudit.score_margins(vlaudit.ScoreSpec.of(model="ref:tiny-qwen2-vl", benchmark=items,
                                                                   images=images, out=run, seed=1)),
                lambda: cli("vca", "score", "--model", "ref:tiny-qwen2-vl", "--benchmark", items, "--images",
                            images, "--out", run, "--seed", "1"),
                run, skip=("summary.json",))  # summary.json holds timings
    manifest = json.loads((run / "manifest.json").read_text())
    assert manifest["schema_version"] == 1 and manifest["command"] == "vca score"
    assert manifest["arguments"]["command"] == "vca score" and manifest["arguments"]["seed"] == 1
    assert manifest["arguments"]["benchmark"] == str(items.resolve()) and len(manifest["arguments"]["items_sha256"]) == 64


def test_score_dual_margins_writes_what_vca_score_dual_writes(tmp_path, cli, toy_items) -> None:
    import vlaudit

    items = toy_items(tmp_path / "bench")
    images, run = tmp_path / "bench" / "images", tmp_path / "run"
    _same_bytes(lambda: vlaudit.score_dual_margins(vlaudit.DualScoreSpec.of(model="ref:tiny-open-clip",
                                                                            benchmark=items, images=images, out=run)),
                lambda: cli("vca", "score-dual", "--model", "ref:tiny-open-clip", "--benchmark", items,
                            "--images", images, "--out", run),
                run, skip=("features/manifest.json",))  # it records the seconds taken
    assert json.loads((run / "features" / "manifest.json").read_text())["command"] == "features"


def test_features_and_zero_shot_write_what_the_cli_writes(tmp_path, cli) -> None:
    import vlaudit

    cycles = two_cycles(tmp_path / "data")
    images, feats = tmp_path / "data" / "images", tmp_path / "feats"
    _same_bytes(lambda: vlaudit.extract_features(vlaudit.FeaturesSpec.of(model="ref:tiny-open-clip",
                                                                         cycles=cycles, images=images, out=feats)),
                lambda: cli("features", "--model", "ref:tiny-open-clip", "--cycles", cycles, "--images", images,
                            "--out", feats),
                feats, skip=("manifest.json",))
    manifest = json.loads((feats / "manifest.json").read_text())
    assert manifest["schema_version"] == 1 and manifest["command"] == "features"


def test_evaluate_cycles_save_writes_what_cycles_eval_writes(tmp_path, cli) -> None:
    import vlaudit

    cycles = two_cycles(tmp_path / "data")
    scores = tmp_path / "scores.csv"
    pairs = [(r["image_1"], r["caption_1"], 1.0) for r in map(json.loads, cycles.read_text().splitlines())]
    pairs += [(r["image_2"], r["caption_2"], 0.25) for r in map(json.loads, cycles.read_text().splitlines())]
    pairs += [(r[f"image_{a}"], r[f"caption_{b}"], 0.0) for r in map(json.loads, cycles.read_text().splitlines())
              for a, b in ((1, 2), (2, 1))]
    scores.write_text("image_id,caption_id,score\n" + "".join(f"{u},{v},{s}\n" for u, v, s in pairs))
    out = tmp_path / "eval"
    _same_bytes(lambda: vlaudit.evaluate_cycles(cycles, scores, min_cycles=1, n_resamples=50).save(out),
                lambda: cli("cycles", "eval", "--cycles", cycles, "--scores", scores, "--out", out / "eval.json",
                            "--min-cycles", "1", "--resamples", "50"),
                out)
    assert sorted(p.name for p in out.iterdir()) == ["eval.json", "eval.png"]
    assert json.loads((out / "eval.json").read_text())["families"]["f"]["test"]["cycle_acc"] == 1.0


def test_an_evaluation_with_no_family_is_not_saved(tmp_path) -> None:
    import vlaudit

    cycles = two_cycles(tmp_path / "data")
    result = vlaudit.evaluate_cycles(cycles, lambda u, v: [0.0] * len(u), n_resamples=10)  # 2 cycles < 30
    with pytest.raises(vlaudit.InputError, match="no family reached --min-cycles 30"):
        result.save(tmp_path / "out")
    assert not (tmp_path / "out" / "eval.json").exists()


def test_vca_report_save_writes_what_vca_report_writes(tmp_path, cli) -> None:
    import pandas as pd
    from vca_fixtures import SUPPORT_LABELS, SUPPORT_MARGINS, rows_from_arrays

    import vlaudit

    margins = tmp_path / "margins.csv"
    pd.DataFrame(rows_from_arrays(SUPPORT_MARGINS, labels=SUPPORT_LABELS)).to_csv(margins, index=False)
    out = tmp_path / "report"
    _same_bytes(lambda: vlaudit.vca_report(margins, n_resamples=200, seed=3).save(out),
                lambda: cli("vca", "report", margins, "--out", out, "--resamples", "200", "--seed", "3"), out)


def test_build_cycles_writes_what_cycles_build_writes(tmp_path, cli) -> None:
    import vlaudit

    left = [{"name": "dog", "box": [5, 40, 20, 20]}, {"name": "chair", "box": [70, 40, 20, 20]}]
    right = [{"name": "dog", "box": [70, 40, 20, 20]}, {"name": "chair", "box": [5, 40, 20, 20]}]
    rows = [{"image_id": image_id, "width": 100, "height": 100, "objects": objects, "caption_id": f"{image_id}1",
             "caption": f"a dog to the {side} of a chair", "mentions": ["dog", "chair"],
             "triples": [{"subject": "dog", "relation": f"{side} of", "object": "chair"}]}
            for image_id, objects, side in (("a", left, "left"), ("b", right, "right"))]
    pairs = tmp_path / "pairs.jsonl"
    pairs.write_text("".join(json.dumps(r) + "\n" for r in rows))
    out = tmp_path / "built"
    out.mkdir()
    _same_bytes(lambda: vlaudit.build_cycles("jsonl", out=out / "c.jsonl", pairs=pairs, splits="test",
                                             min_cycles=1),
                lambda: (out.mkdir(), cli("cycles", "build", "jsonl", "--pairs", pairs, "--out", out / "c.jsonl",
                                          "--splits", "test", "--min-cycles", "1"))[1],
                out)
    assert (out / "c.jsonl").read_text()


def test_factorial_save_writes_what_vca_factorial_writes(tmp_path, cli) -> None:
    import vlaudit
    from vlaudit.builders.factorial import build_factorial
    from vlaudit.files import write_table
    from vlaudit.sources.items import read_items

    build_factorial(tmp_path / "fx", n_per_relation=2)
    items = tmp_path / "fx" / "items.jsonl"
    sign = {"pos": 1.0, "neg": -1.0, "none": 0.0}
    rows = []
    for item in read_items(items):  # a model that follows the image, then the text
        image, text = sign[item.extra["visual_state"]], sign[item.extra["text_state"]]
        for context, margin in (("original", 2 * image + text), ("text", text), ("blank", text - 0.5)):
            rows.append({"model": "m", "dataset": "factorial", "item_id": item.item_id, "context": context,
                         "interface": "yesno", "nll_yes": 1.0, "nll_no": 1.0 + margin, "margin": margin,
                         "label": item.label})
    write_table(tmp_path / "run" / "margins.parquet", rows)
    first, out = tmp_path / "api_out", tmp_path / "saved"
    result = vlaudit.factorial(tmp_path / "run", items=items, out=first, n_resamples=50, seed=3)
    assert result.schema_version == 1 and result.data["models"][0]["model"] == "m"
    _same_bytes(lambda: result.save(out),
                lambda: cli("vca", "factorial", tmp_path / "run", "--items", items, "--out", out, "--resamples",
                            "50", "--seed", "3"),
                out)
    assert sorted(p.name for p in out.iterdir()) == ["factorial.json", "factorial_effects.csv",
                                                     "factorial_models.csv"]
    assert _files(first) == _files(out)  # the folder the API wrote as it ran holds the same bytes


@pytest.mark.parametrize("spec", ["ScoreSpec", "DualScoreSpec", "FeaturesSpec", "CycleScoreSpec"])
def test_every_spelling_of_a_dtype_is_one_run(spec, tmp_path) -> None:
    """fp32 and float32 (half and float16, bf16 and bfloat16) name one dtype, so one recorded run; an unknown
    spelling is refused when the spec is built, before anything loads."""
    import inspect

    import vlaudit.scoring.run.spec as run_spec
    from vlaudit.errors import InputError

    kind = getattr(run_spec, spec)
    required = {name: tmp_path / name for name, p in inspect.signature(kind.of).parameters.items()
                if p.default is inspect.Parameter.empty}
    required["model"] = "ref:tiny-open-clip"
    for spellings, canonical in ((("fp32", "float32", "FP32"), "float32"), (("half", "fp16", "float16"), "float16"),
                                 (("bf16", "bfloat16"), "bfloat16"), (("auto", None), "auto")):
        assert {kind.of(**required, options={"dtype": s}).model.options.dtype for s in spellings} == {canonical}
    with pytest.raises(InputError, match="unknown dtype 'float64'"):
        kind.of(**required, options={"dtype": "float64"})
