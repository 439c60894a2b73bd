"""Items with several images (MMMU's ``image_1`` … ``image_7``) are scored with every image, in order.

A tiny Qwen2-VL built from config scores an MMMU-layout file (the published Parquet columns, written small)
through ``data items`` → ``vca score``: the prompt holds one image block per image in the item's order, the
answer is the model's own forward on those images (known answer), swapping two images changes it, the cache
resumes the run, and a model that takes one image per query is refused before it loads.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from benchmark_releases import IDS, mmmu_release

from vlaudit.errors import InputError
from vlaudit.scoring.run.plan import donor_paths, images_sha256, plan_run
from vlaudit.sources.images import ImageStore
from vlaudit.sources.items import BenchmarkItem, read_items

pd = pytest.importorskip("pandas")

@pytest.fixture
def mmmu(cli, tmp_path: Path) -> Path:
    """The ITEMS file ``data items --format mmmu`` writes from :func:`mmmu_release` (images beside it)."""
    code, _, err = cli("data", "items", "--format", "mmmu", mmmu_release(tmp_path), "--out", tmp_path / "mmmu.jsonl",
                       "--images", tmp_path / "images")
    assert code == 0, err
    return tmp_path / "mmmu.jsonl"


def _score(cli, model: str, items: Path, out: Path, *more: str) -> tuple[int, str, str]:
    return cli("vca", "score", "--model", model, "--benchmark", items, "--images", items.parent / "images",
               "--out", out, "--interface", "letter", *more)


def test_items_list_every_image_in_order(mmmu: Path) -> None:
    items = {item.item_id: item for item in read_items(mmmu)}
    first, reversed_, single = (items[f"mmmu-{i}"] for i in IDS)
    assert len(first.images) == 3 and first.images[0] == first.image
    assert reversed_.images == first.images[::-1]
    assert single.images == (single.image,)
    assert BenchmarkItem("t", None, "q").images == ()


def test_contexts_of_several_images_blank_each_take_another_items_set_and_refuse_erasures(mmmu: Path) -> None:
    """blank: every image blanked at its own size; mismatch: another item's whole image set; text: none;
    rele/irre: skipped with the reason (their boxes belong to one image). A cache key hashes every image in
    order, and a single image keeps the key it always had."""
    items = read_items(mmmu)
    store = ImageStore(mmmu.parent / "images")
    counts: dict[str, int] = {}

    def prompt_of(question: str, interface: str, n_images: int) -> str:
        counts[question] = n_images
        return f"{'<image>' * n_images}{question}"

    records, units = plan_run(items, store, ["original", "text", "blank", "mismatch", "rele", "irre"], ["yesno"],
                              0, "model", prompt_of)
    by = {(r.item.item_id, r.context): r for r in records}
    first = f"mmmu-{IDS[0]}"
    assert by[(first, "rele")].status == by[(first, "irre")].status == "skipped"
    assert "has 3 images" in str(by[(first, "rele")].error)
    donor = by[(first, "mismatch")].donor_image
    others = {item.images for item in items if item.item_id != first}
    assert donor is not None and donor_paths(donor) in others  # another item's images, in that item's order
    blank = next(u for u in units if u.item.item_id == first and u.context == "blank")
    from vlaudit.scoring.run.shards import UnitTask, render_requests

    (request,) = render_requests(store, [UnitTask.of(blank)], 0)
    assert [im.getpixel((0, 0)) for im in request.images] == [(128, 128, 128)] * 3
    assert [im.size for im in request.images] == [(4, 4), (6, 4), (12, 4)]
    assert by[(first, "original")].key != by[(f"mmmu-{IDS[1]}", "original")].key  # the same images reversed
    assert by[(first, "text")].key == by[(f"mmmu-{IDS[1]}", "text")].key  # no image: the same query
    (only,) = [u for u in units if u.item.item_id == f"mmmu-{IDS[2]}" and u.context == "original"]
    (alone,) = render_requests(store, [UnitTask.of(only)], 0)
    assert images_sha256(alone.images) == only.image_sha256 and alone.more_images == ()
    from vlaudit.hashing import pixels_sha256

    assert only.image_sha256 == pixels_sha256(alone.image)


def _block_lengths(ids: list[int], start: int, pad: int) -> list[int]:
    """The number of image-pad tokens in each vision block of a token sequence, in order."""
    lengths, inside = [], False
    for token in ids:
        if token == start:
            lengths.append(0)
            inside = True
        elif token == pad and inside:
            lengths[-1] += 1
        else:
            inside = False
    return lengths


@pytest.mark.slow
def test_tiny_qwen2_vl_scores_all_images_in_order(cli, mmmu: Path, tiny_model) -> None:
    """The prompt token ids hold one image block per image in the item's order (4, 6, 8 tokens, and 8, 6, 4
    reversed); the letter log-probs are the model's own forward on the prompt with the images in that order
    (known answer); reversing the images changes them; the text context is one query for both items."""
    import torch

    from vlaudit.backends.registry import load_backend
    from vlaudit.scoring.run.shards import render_requests

    model_dir = tiny_model("qwen2-vl")
    code, _, err = _score(cli, f"hf:{model_dir}", mmmu, mmmu.parent / "run", "--contexts", "original,text,blank")
    assert code == 0, err
    scored = pd.read_parquet(mmmu.parent / "run" / "margins.parquet").set_index(["item_id", "context"])
    first, reversed_ = f"mmmu-{IDS[0]}", f"mmmu-{IDS[1]}"
    assert list(scored.loc[(first, "original"), "logp_options"]) != list(scored.loc[(reversed_, "original"),
                                                                                    "logp_options"])
    assert list(scored.loc[(first, "text"), "logp_options"]) == list(scored.loc[(reversed_, "text"), "logp_options"])

    backend: Any = load_backend(f"hf:{model_dir}", interfaces=["letter"])
    assert backend.max_images > 1
    items = {item.item_id: item for item in read_items(mmmu)}
    tokenizer = backend.tokenizer
    start, pad = tokenizer.convert_tokens_to_ids("<|vision_start|>"), tokenizer.convert_tokens_to_ids("<|image_pad|>")
    store = ImageStore(mmmu.parent / "images")
    from vlaudit.scoring.run.shards import UnitTask

    for item_id, blocks in ((first, [4, 6, 8]), (reversed_, [8, 6, 4])):
        item = items[item_id]
        (request,) = render_requests(store, [UnitTask("k", _question(item), "letter", item, "original", None)], 0)
        prompt = backend.prompt(request.question, "letter", len(request.images))
        assert prompt.count("<|vision_start|>") == 3
        inputs = backend.processor(text=[prompt], images=list(request.images), return_tensors="pt")
        assert _block_lengths(inputs["input_ids"][0].tolist(), start, pad) == blocks
        with torch.no_grad():
            logits = backend.model(**inputs).logits[0, -1].double()
        expected = torch.log_softmax(logits, dim=-1)[list(backend.letter_ids[:3])].tolist()
        assert list(scored.loc[(item_id, "original"), "logp_options"]) == pytest.approx(expected, abs=1e-5)
        assert scored.loc[(item_id, "original"), "n_prompt_tokens"] == inputs["input_ids"].shape[1]


def _question(item: BenchmarkItem) -> str:
    from vlaudit.backends.prompt.letters import item_question

    return item_question(item, "letter")


@pytest.mark.slow
def test_a_killed_multi_image_run_resumes_from_its_cache(cli, mmmu: Path, tiny_model) -> None:
    """A rerun after the results are lost (a kill before the summary) scores nothing again and writes the same
    margins: the cache keys name every image."""
    model = f"hf:{tiny_model('qwen2-vl')}"
    run = mmmu.parent / "run"
    code, _, err = _score(cli, model, mmmu, run, "--contexts", "original,blank,mismatch")
    assert code == 0, err
    before = (run / "margins.parquet").read_bytes()
    (run / "summary.json").unlink()
    (run / "margins.parquet").unlink()
    code, _, err = _score(cli, model, mmmu, run, "--contexts", "original,blank,mismatch")
    assert code == 0, err
    summary = json.loads((run / "summary.json").read_text())
    assert summary["n_units_scored_now"] == 0 and summary["n_units_from_cache"] == summary["n_unique_units"] > 0
    assert (run / "margins.parquet").read_bytes() == before


def test_a_one_image_model_is_refused_before_it_loads(cli, mmmu: Path, one_error_line, monkeypatch) -> None:
    """A planted reference model reads one image per query: the run is refused in one line naming the model,
    the count and an item, before any model loads and without a run folder; ``--skip-multi-image`` scores the
    rest with a warning."""
    from vlaudit.backends.registry import BackendLoad

    run = mmmu.parent / "run"
    with monkeypatch.context() as patched:
        patched.setattr(BackendLoad, "load", lambda self: pytest.fail("the model was loaded"))
        line = one_error_line(*_score(cli, "ref:scene-mcq-mixture", mmmu, run))
    assert "ref:scene-mcq-mixture takes 1 image per query; 2 of 3 items have more" in line
    assert f"mmmu-{IDS[0]}: 3 images" in line and "--skip-multi-image" in line
    assert not run.exists()
    code, out, err = _score(cli, "ref:scene-mcq-mixture", mmmu, run, "--skip-multi-image")
    assert code == 0, err
    assert "2 item(s) with several images left out" in " ".join((out + err).split())
    assert set(pd.read_parquet(run / "margins.parquet")["item_id"]) == {f"mmmu-{IDS[2]}"}


def test_a_loaded_one_image_backend_is_refused_by_the_runner(mmmu: Path, tmp_path: Path) -> None:
    """The API with a backend already loaded asks the backend itself (``max_images``; 1 when it does not say)."""
    import vlaudit
    from vlaudit.backends.registry import load_backend

    backend: Any = load_backend("ref:scene-mcq-mixture", interfaces=["letter"])
    spec = vlaudit.ScoreSpec.of(model="ref:scene-mcq-mixture", benchmark=mmmu, images=mmmu.parent / "images",
                                out=tmp_path / "api-run", interfaces=("letter",))
    with pytest.raises(InputError, match="takes 1 image per query; 2 of 3 items have more"):
        vlaudit.score_margins(spec, backend=backend)


def test_a_dual_encoder_refuses_items_with_several_images(cli, mmmu: Path, one_error_line) -> None:
    line = one_error_line(*cli("vca", "score-dual", "--model", "ref:tiny-open-clip", "--benchmark", mmmu,
                               "--images", mmmu.parent / "images", "--out", mmmu.parent / "dual"))
    assert "takes 1 image per query; 2 of 3 items have more" in line and "dual encoder" in line


def test_a_served_model_gets_every_image_as_an_image_part_in_order(cli, mmmu: Path) -> None:
    """``openai:``: the user turn holds one ``image_url`` part per image, in the item's order, and the log-probs
    are the ones the (small, real) server planted for exactly those messages; the reversed item sends its
    images reversed."""
    import base64
    import io

    from endpoint_server import EndpointServer
    from PIL import Image

    srv = EndpointServer()
    try:
        code, _, err = _score(cli, f"openai:{srv.url}#tiny-qwen", mmmu, mmmu.parent / "run", "--contexts",
                              "original,text")
        assert code == 0, err
        scored = pd.read_parquet(mmmu.parent / "run" / "margins.parquet").set_index(["item_id", "context"])
        for item_id, sizes in ((f"mmmu-{IDS[0]}", [(4, 4), (6, 4), (12, 4)]),
                               (f"mmmu-{IDS[1]}", [(12, 4), (6, 4), (4, 4)])):
            (body,) = [b for b in srv.requests if len(b["messages"][-2]["content"]) == 4
                       and [Image.open(io.BytesIO(base64.b64decode(part["image_url"]["url"].split(",")[1]))).size
                            for part in b["messages"][-2]["content"][:3]] == sizes]
            planted = srv.planted(body["messages"])
            assert list(scored.loc[(item_id, "original"), "logp_options"]) == \
                pytest.approx([planted[f" {letter}"] for letter in "ABC"])
    finally:
        srv.close()


@pytest.mark.parametrize(("model_type", "expected"), [("llava", 1), ("qwen2_vl", 7), ("gemma3", 7)])
def test_an_hf_familys_image_count_is_read_from_its_config_alone(tmp_path: Path, model_type: str,
                                                                  expected: int) -> None:
    """Before any weights load: a folder holding only a config says how many images one query takes."""
    from vlaudit.backends.registry import ModelRef, max_images_of

    (tmp_path / "config.json").write_text(json.dumps({"model_type": model_type}))
    assert max_images_of(ModelRef(f"hf:{tmp_path}")) == expected


@pytest.mark.parametrize("prefix", ["hf", "vllm"])
def test_a_one_image_family_or_engine_is_refused_without_loading(cli, mmmu: Path, one_error_line, prefix: str) -> None:
    """An ``hf:`` family that takes one image (LLaVA-1.5: a folder holding only its config, so loading it would
    fail otherwise) and the ``vllm:`` engine are refused by name with the count, before anything loads."""
    folder = mmmu.parent / "llava"
    folder.mkdir()
    (folder / "config.json").write_text(json.dumps({"model_type": "llava"}))
    line = one_error_line(*_score(cli, f"{prefix}:{folder}", mmmu, mmmu.parent / "run"))
    assert f"{prefix}:{folder} takes 1 image per query; 2 of 3 items have more" in line


def test_stability_of_a_skip_multi_image_run_resamples_only_what_it_scored(cli, mmmu: Path) -> None:
    """``vca stability`` re-reads the ITEMS file: the items the run left out (``--skip-multi-image``) stay out,
    rather than being shown their first image only."""
    run = mmmu.parent / "run"
    code, _, err = _score(cli, "ref:scene-mcq-mixture", mmmu, run, "--skip-multi-image", "--batch-size", "4")
    assert code == 0, err
    code, _, err = cli("vca", "stability", run, "--out", mmmu.parent / "stability", "--sample", "3")
    assert code == 0, err
    stability = json.loads((mmmu.parent / "stability" / "stability.json").read_text())
    assert stability["sample"]["n_items"] == 1


@pytest.mark.slow
@pytest.mark.parametrize("family", ["llava-onevision", "internvl", "gemma3", "qwen2.5-vl"])
def test_every_multi_image_family_takes_the_images_of_one_query(tiny_model, family: str) -> None:
    """The other families that take several images (tiny, built from config): three images make a longer
    prompt than one, and a query of three scored in one batch with a one-image query gives what it gives
    alone (each prompt is handed its own images)."""
    import numpy as np
    from PIL import Image

    from vlaudit.backends.base import YesNoRequest
    from vlaudit.backends.registry import load_backend

    images = [Image.fromarray(np.random.default_rng(k).integers(0, 256, size=(32, 32 + 16 * k, 3), dtype=np.uint8))
              for k in range(3)]
    backend: Any = load_backend(f"hf:{tiny_model(family)}", interfaces=["yesno"])
    assert backend.max_images == 7
    question = "Is <image 1> left of <image 2>?"
    several = YesNoRequest("several", question, images[0], more_images=tuple(images[1:]))
    alone = backend.score([several])[0]
    together, one = backend.score([several, YesNoRequest("one", question, images[1])])
    assert together.margin == pytest.approx(alone.margin, abs=1e-5)
    assert alone.n_prompt_tokens > one.n_prompt_tokens
