"""``ref:`` reference models: built offline once into the cache, then loaded through the ordinary path."""

from __future__ import annotations

from pathlib import Path

import pytest

from vlaudit.backends.reference import reference_dir
from vlaudit.backends.registry import UnknownBackendError, load_backend, parse_spec
from vlaudit.errors import InputError


def test_reference_dual_encoder_is_built_once_and_loaded(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                          no_network: None) -> None:
    monkeypatch.setenv("VLAUDIT_CACHE", str(tmp_path))
    backend = load_backend("ref:tiny-clip")
    assert backend.spec == "ref:tiny-clip"
    folder = reference_dir("tiny-clip")
    assert (folder / ".complete").exists()
    stamp = (folder / ".complete").stat().st_mtime_ns
    again = load_backend("ref:tiny-clip")  # cached: no rebuild
    assert (folder / ".complete").stat().st_mtime_ns == stamp
    embeddings = again.encode_texts(["a dog to the left of a chair"])
    assert embeddings.shape[0] == 1
    assert not [p for p in (tmp_path / "ref").iterdir() if p.name.startswith(".")], "staging folder left behind"


def test_unknown_reference_and_prefix_list_what_exists() -> None:
    with pytest.raises(InputError, match="tiny-qwen2-vl"):
        reference_dir("no-such-model")
    with pytest.raises(UnknownBackendError, match=r"(?s)hf-clip:<name>.*open_clip:<name>.*ref:<name>"):
        parse_spec("nope:thing")
    with pytest.raises(UnknownBackendError):
        parse_spec("hf:")
