"""``ref:`` reference models: built offline once into the cache, then loaded through the ordinary path."""

from __future__ import annotations

from pathlib import Path

import pytest

from vlaudit.backends.registry import UnknownBackendError, load_backend, parse_spec
from vlaudit.errors import InputError
from vlaudit.reference.models import reference_dir


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
    # one line that names every registered prefix
    with pytest.raises(UnknownBackendError, match=r"^unknown model spec 'nope:thing'; .*hf:, hf-clip:, open_clip:, ref:"):
        parse_spec("nope:thing")
    with pytest.raises(UnknownBackendError):
        parse_spec("hf:")


def test_backend_kind_is_known_before_loading() -> None:
    from vlaudit.backends.registry import backend_kind, require_kind

    assert backend_kind("hf:Qwen/Qwen2-VL-2B-Instruct") == "yesno"
    assert backend_kind("ref:tiny-qwen2-vl") == "yesno"
    for spec in ("hf-clip:openai/clip-vit-base-patch32", "open_clip:ViT-B-32", "ref:tiny-open-clip", "ref:tiny-clip"):
        assert backend_kind(spec) == "features"
        require_kind(spec, "features")
    with pytest.raises(InputError, match="is not a multimodal LLM"):
        require_kind("open_clip:local-dir:/x", "yesno")
    with pytest.raises(InputError, match="is not a dual encoder"):
        require_kind("hf:/some/dir", "features")


def test_vca_score_rejects_a_dual_encoder_before_loading(tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from vlaudit.cli import app

    result = CliRunner().invoke(app, ["vca", "score", "--model", "open_clip:local-dir:/nowhere", "--benchmark",
                                      str(tmp_path / "items.jsonl"), "--images", str(tmp_path), "--out",
                                      str(tmp_path / "run")])
    assert isinstance(result.exception, InputError)
    assert "is not a multimodal LLM" in str(result.exception)
    assert not (tmp_path / "run").exists()
