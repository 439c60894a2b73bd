"""Shared image-prefix reuse is decided per run from what it saves (issue: distance to the forward limit)."""

from __future__ import annotations

import json

import pytest

from vlaudit.backends.hf.prefix_cache import CALL_OVERHEAD_TOKENS, prefix_cache_decision

pytestmark = pytest.mark.usefixtures("one_torch_thread")


def test_small_images_with_few_questions_turn_reuse_off() -> None:
    # The tiny smoke model: ~37 prefix tokens, 2 questions × 2 interfaces per image.
    decision = prefix_cache_decision(prefix_tokens=37, suffix_tokens=12, queries_per_image=4, batch_size=8)
    assert not decision["enabled"] and decision["estimate"] is False
    assert "less than" in decision["reason"]


def test_real_size_images_with_several_questions_turn_reuse_on() -> None:
    # 448×448 → 256 image tokens (+ system turn), 4 questions × 2 interfaces per image.
    decision = prefix_cache_decision(prefix_tokens=277, suffix_tokens=14, queries_per_image=8, batch_size=16)
    assert decision["enabled"] and decision["queries_per_image"] == 8
    assert decision["call_overhead_tokens"] == CALL_OVERHEAD_TOKENS


def test_one_query_per_image_never_reuses_and_overrides_win() -> None:
    assert not prefix_cache_decision(prefix_tokens=5000, suffix_tokens=10, queries_per_image=1,
                                     batch_size=8)["enabled"]
    forced = prefix_cache_decision(prefix_tokens=10, suffix_tokens=10, queries_per_image=4, batch_size=8,
                                   override=True)
    assert forced["enabled"] and not forced["estimate"] and "forced on" in forced["reason"]
    off = prefix_cache_decision(prefix_tokens=5000, suffix_tokens=10, queries_per_image=8, batch_size=8,
                                override=False)
    assert not off["enabled"] and off["estimate"]
    unsupported = prefix_cache_decision(prefix_tokens=5000, suffix_tokens=10, queries_per_image=8, batch_size=8,
                                        override=True, supported=False)
    assert not unsupported["enabled"]


def test_the_run_records_its_decision_and_margins_do_not_depend_on_it(make_benchmark, tiny_model, tmp_path, tmp_path_factory,
                                                                     no_network) -> None:
    import pyarrow.parquet as pq

    from vlaudit.backends.options import RunOptions
    from vlaudit.backends.registry import load_backend
    from vlaudit.scoring.run.runner import run_scoring
    from vlaudit.sources.items import read_items

    bench = tmp_path / "bench"
    make_benchmark(bench, n_images=3, questions=3)
    items = read_items(bench / "items.jsonl")
    model = tiny_model("qwen2-vl")
    margins = {}
    for name, override in (("auto", None), ("on", True), ("off", False)):
        backend = load_backend(f"hf:{model}", RunOptions(batch_size=4, prefix_cache=override))
        run_scoring(backend, items, images_dir=bench / "images", out_dir=tmp_path / name,
                    contexts=["original", "blank"], interfaces=["yesno", "truefalse"])
        manifest = json.loads((tmp_path / name / "manifest.json").read_text())
        decision = manifest["backend"]["prefix_cache_decision"]
        assert decision["queries_per_image"] == 6 and decision["prefix_tokens"] > 0
        assert decision["override"] is override and manifest["backend"]["prefix_cache"] == decision["enabled"]
        margins[name] = {(r["item_id"], r["context"], r["interface"]): r["margin"]
                         for r in pq.read_table(tmp_path / name / "margins.parquet").to_pylist()}
        # the decision is not part of the cache key: the three runs share keys
        assert manifest["model_fingerprint"] == json.loads(
            (tmp_path / "auto" / "manifest.json").read_text())["model_fingerprint"]
    assert margins["auto"].keys() == margins["on"].keys() == margins["off"].keys()
    assert max(abs(margins["on"][k] - margins["off"][k]) for k in margins["on"]) < 1e-5
