"""The chunk cache, the deterministic chunk plan, path confinement and the run lock (no model needed)."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st


def test_chunk_cache_appends_whole_chunks_and_drops_temp_files(tmp_path) -> None:
    from vlaudit.scoring.cache import ChunkCache, cache_key

    cache = ChunkCache(tmp_path / "cache")
    assert cache.load() == {}
    key = cache_key("model", "prompt", None, "yesno")
    assert key != cache_key("model", "prompt ", None, "yesno") != cache_key("model", "prompt", "img", "yesno")
    cache.append([{"key": key, "nll_yes": 0.1 + 0.2, "nll_no": 1e-300}])
    (tmp_path / "cache" / ".chunk-000001.jsonl.x.tmp").write_text('{"key": "half')  # a killed write
    again = ChunkCache(tmp_path / "cache")
    records = again.load()
    assert records[key]["nll_yes"] == 0.1 + 0.2 and records[key]["nll_no"] == 1e-300  # exact round trip
    assert again.next_index == 1 and not (tmp_path / "cache" / ".chunk-000001.jsonl.x.tmp").exists()
    assert again.append([{"key": "k2"}]).name == "chunk-000001.jsonl"


class _U:
    def __init__(self, key: str, image: str | None) -> None:
        self.key, self.image_sha256 = key, image


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 30), st.sampled_from([None, "a", "b", "c", "d"])), max_size=60),
       st.integers(1, 7))
def test_chunk_plan_is_a_deterministic_partition(spec, size) -> None:
    from vlaudit.scoring.plan import chunk_units

    units = [_U(f"k{i}-{n}", image) for i, (n, image) in enumerate(spec)]
    chunks = chunk_units(units, size)
    flat = [u.key for chunk in chunks for u in chunk]
    assert sorted(flat) == sorted(u.key for u in units) and len(flat) == len(set(flat))
    assert all(0 < len(chunk) <= size for chunk in chunks)
    assert [[u.key for u in c] for c in chunk_units(list(reversed(units)), size)] == [[u.key for u in c] for c in chunks]
    for image in {u.image_sha256 for u in units if u.image_sha256}:
        holding = [i for i, chunk in enumerate(chunks) if any(u.image_sha256 == image for u in chunk)]
        n = sum(1 for u in units if u.image_sha256 == image)
        assert len(holding) <= -(-n // size) + 1  # an image is split only when it overflows a chunk


@pytest.mark.parametrize("relative", ["../secret.png", "a/../../secret.png", "/etc/passwd"])
def test_image_paths_are_confined(tmp_path, relative) -> None:
    from vlaudit.scoring.plan import ImageFailure, confined_path

    (tmp_path / "images").mkdir()
    with pytest.raises(ImageFailure, match="outside"):
        confined_path(tmp_path / "images", relative)
    assert confined_path(tmp_path / "images", "sub/x.png") == (tmp_path / "images" / "sub" / "x.png").resolve()


def test_run_lock_refuses_a_second_run(tmp_path) -> None:
    from vlaudit.errors import InputError
    from vlaudit.scoring.runner import run_lock

    with run_lock(tmp_path):
        with pytest.raises(InputError, match="another"):
            with run_lock(tmp_path):
                pass
    with run_lock(tmp_path):
        pass


def test_confinement_is_lexical_and_follows_user_symlinks(tmp_path) -> None:
    from vlaudit.scoring.paths import confine

    root = tmp_path / "images"
    (root / "sub").mkdir(parents=True)
    elsewhere = tmp_path / "datasets" / "coco"
    elsewhere.mkdir(parents=True)
    (elsewhere / "a.jpg").write_bytes(b"x")
    (root / "coco").symlink_to(elsewhere, target_is_directory=True)
    assert confine(root, "coco/a.jpg") == root / "coco" / "a.jpg"
    assert (confine(root, "coco/a.jpg")).is_file()
    assert confine(root, "sub/../sub/b.jpg") == root / "sub" / "b.jpg"
    for bad in ("../x.jpg", "sub/../../x.jpg", "/etc/passwd", "", ".", "..\\x.jpg"):
        assert confine(root, bad) is None, bad
