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
