"""The run manifest reads back what it wrote, refuses a newer one, and names a field of the wrong kind."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from vlaudit.errors import InputError
from vlaudit.files import write_manifest
from vlaudit.results.manifest import MANIFEST_SCHEMA_VERSION, RunManifest


def test_recorded_paths_and_numpy_numbers_are_written_as_json_and_read_back(tmp_path: Path) -> None:
    manifest = RunManifest(command="vca score", arguments={"images": tmp_path / "images", "seed": np.int64(3)},
                           record={"n_items": np.int64(2), "mean": np.float64(0.5), "missing": float("nan")},
                           packages={"numpy": "2", "torch": None}, git_commit="abc")
    data = json.loads(write_manifest(tmp_path, manifest).read_text())
    assert data["arguments"] == {"images": str(tmp_path / "images"), "seed": 3}
    assert data["n_items"] == 2 and data["mean"] == 0.5 and data["missing"] is None  # never NaN
    again = RunManifest.from_dict(data, path=tmp_path / "manifest.json")
    assert again.to_dict() == data and again.packages == {"numpy": "2", "torch": None}


def test_a_newer_manifest_is_refused_and_a_wrong_field_is_named() -> None:
    with pytest.raises(InputError, match="newer than this vlaudit reads"):
        RunManifest.from_dict({"schema_version": MANIFEST_SCHEMA_VERSION + 1, "command": "x", "arguments": {}})
    with pytest.raises(InputError, match="field 'arguments'.*JSON object"):
        RunManifest.from_dict({"schema_version": 1, "command": "x", "arguments": ["seed"]})
    with pytest.raises(InputError, match=r"field 'packages\.torch'"):
        RunManifest.from_dict({"schema_version": 1, "command": "x", "arguments": {}, "packages": {"torch": 2}})
    # a manifest from before the command was a top-level key names it in its arguments
    assert RunManifest.from_dict({"arguments": {"command": "features"}}).command == "features"


# ------------------------------------------------------------------------ a scoring run's typed record


def _scoring_record(**changes: object):
    from vlaudit.results.backend_description import (
        BackendDescription,
        PrefixCacheDecision,
        PrefixCacheEstimate,
    )
    from vlaudit.results.scoring_record import ScoringRunRecord

    description = BackendDescription.of({"spec": "hf:m", "family": "qwen2_vl", "revision": None, "dtype": "float32",
                                         "pixel_budget": {"min_pixels": None, "max_pixels": 3136},
                                         "verbalizer_ids": {"yesno": [9, 8]}, "commit_hash": "c0"})
    decision = PrefixCacheDecision(enabled=False, reason="saves little", override=None,
                                   cost=PrefixCacheEstimate(False, 60, 9, 1.5, 4, 400))
    fields = dict(model="hf:m", spec="hf:m", backend=description, model_fingerprint="f" * 64,
                  model_fingerprint_by_interface={"yesno": "e" * 64}, prompt_template_sha256="d" * 64,
                  example_prompts={"yesno/image": "<img> Is it? Answer:", "yesno/text": "Is it? Answer:"},
                  contexts=["original", "text"], interfaces=["yesno"],
                  context_parameters={"blank_rgb": [128, 128, 128], "pad_fraction": 0.1, "irre": "tiles"},
                  seed=np.int64(5), n_items=2, executor={"executor": "local", "prefetch": True}, prefix_cache=decision,
                  model_files={"local": {"files": {"config.json": 12}}})
    return ScoringRunRecord.of(**{**fields, **changes})


def test_a_scoring_runs_record_writes_the_bytes_of_the_plain_dict_it_replaced(tmp_path: Path) -> None:
    """The typed record writes manifest.json byte for byte as the runner's plain dict did (the keys, their order
    and values: the runner's dict before the type, spelled out here), and reads back from it."""
    from vlaudit.results.scoring_record import SCORING_RECORD_KEYS, ScoringRunRecord

    record = _scoring_record()
    facts = record.backend.to_dict()
    plain = {"model": "hf:m", "spec": "hf:m", "backend": facts, "model_fingerprint": "f" * 64,
             "model_fingerprint_by_interface": {"yesno": "e" * 64}, "revision": None, "dtype": "float32",
             "pixel_budget": {"min_pixels": None, "max_pixels": 3136}, "prompt_template_sha256": "d" * 64,
             "example_prompts": {"yesno/image": "<img> Is it? Answer:", "yesno/text": "Is it? Answer:"},
             "contexts": ["original", "text"], "interfaces": ["yesno"],
             "context_parameters": {"blank_rgb": [128, 128, 128], "pad_fraction": 0.1, "irre": "tiles"},
             "seed": 5, "n_items": 2, "executor": {"executor": "local", "prefetch": True},
             "prefix_cache": {"enabled": False, "reason": "saves little", "estimate": False, "override": None,
                              "prefix_tokens": 60, "suffix_tokens": 9, "queries_per_image": 1.5, "batch_size": 4,
                              "call_overhead_tokens": 400},
             "model_files": {"local": {"files": {"config.json": 12}}}}
    assert tuple(plain) == SCORING_RECORD_KEYS
    written = {}
    for name, value in (("typed", record), ("plain", plain)):
        (tmp_path / name).mkdir()
        manifest = RunManifest(command="vca score", arguments={"seed": 5}, record=value, packages={"numpy": "2"},
                               git_commit="abc")
        written[name] = write_manifest(tmp_path / name, manifest).read_bytes()
    assert written["typed"] == written["plain"]
    data = json.loads(written["typed"])
    assert ScoringRunRecord.from_dict(data) == record  # read back from the manifest's top level
    assert ScoringRunRecord.from_dict(data).to_dict() == plain
    assert _scoring_record(prefix_cache=None, model_files=None).to_dict()["prefix_cache"] is None
    with pytest.raises(ValueError, match="arguments"):  # still no clash with the manifest's own keys
        RunManifest(command="x", arguments={}, record={"arguments": {}})


def test_a_scoring_records_wrong_field_is_named() -> None:
    from vlaudit.results.scoring_record import ScoringRunRecord

    data = _scoring_record().to_dict()
    for key, bad, message in (("seed", "5", "whole number"), ("contexts", "original", "list of names"),
                              ("backend", {"family": "x"}, "spec"), ("executor", None, "JSON object"),
                              ("model_fingerprint_by_interface", {"yesno": 3}, "text")):
        with pytest.raises(InputError, match=message) as caught:
            ScoringRunRecord.from_dict({**data, key: bad}, path="run/manifest.json")
        assert "run/manifest.json" in str(caught.value) and key in str(caught.value)
    with pytest.raises(TypeError, match="executor"):
        _scoring_record(executor={"threads": object()})
