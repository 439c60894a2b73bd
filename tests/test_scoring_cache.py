"""The chunk cache, the deterministic chunk plan, path confinement and the run lock (no model needed)."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st


def test_chunk_cache_appends_whole_chunks_and_drops_temp_files(tmp_path) -> None:
    from vlaudit.scoring.run.cache import ChunkCache, cache_key

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


def _sealed_cache(directory, n_chunks: int = 5):
    from vlaudit.scoring.run.cache import ChunkCache

    cache = ChunkCache(directory)
    cache.load()
    for chunk in range(n_chunks):
        cache.append([{"key": f"k{chunk}-{i}", "nll_yes": 0.1 * i + chunk, "nll_no": 1 / (3 + i)} for i in range(3)])
    return cache


def test_damaged_chunks_are_moved_aside_with_a_warning_and_the_rest_is_kept(tmp_path) -> None:
    """What a disk fault or an interrupted copy leaves: each damaged chunk is named, moved to cache/damaged/
    and dropped whole (its records get scored again); whole chunks are read as written."""
    from vlaudit.scoring.run.cache import ChunkCache

    directory = tmp_path / "cache"
    _sealed_cache(directory)
    chunk = [directory / f"chunk-{i:06d}.jsonl" for i in range(5)]
    original = [path.read_bytes() for path in chunk]
    chunk[0].write_bytes(original[0][: len(original[0]) // 2])  # truncated mid-line
    chunk[1].write_bytes(original[1][: original[1].rindex(b"\n", 0, len(original[1]) - 1) + 1])  # seal cut off
    assert b"2.1" in original[2]
    chunk[2].write_bytes(original[2].replace(b"2.1", b"2.9", 1))  # one digit changed: still valid JSON
    chunk[3].write_bytes(b"")  # created, never filled
    warnings: list[str] = []
    cache = ChunkCache(directory, warn=warnings.append)
    records = cache.load()
    assert sorted(records) == [f"k4-{i}" for i in range(3)] and records["k4-1"]["nll_yes"] == 0.1 + 4
    assert len(warnings) == 4 and all("scored again" in w for w in warnings)
    for path, why in zip(chunk[:4], ("truncated", "no seal", "checksum", "empty"), strict=True):
        assert any(str(path) in w and why in w for w in warnings), (path, why, warnings)
        assert not path.exists() and (directory / "damaged" / path.name).exists()
    assert (directory / "damaged" / "chunk-000002.jsonl").read_bytes() != original[2]  # kept for inspection
    assert cache.next_index == 5 and cache.append([{"key": "new", "nll_yes": 1.0, "nll_no": 2.0}]).name == \
        "chunk-000005.jsonl"
    assert ChunkCache(directory).load().keys() == {*records, "new"}  # nothing left to move aside
    assert [d["reason"] for d in cache.damaged][2].startswith("checksum")


class _U:
    def __init__(self, key: str, image: str | None) -> None:
        self.key, self.image_sha256 = key, image


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 30), st.sampled_from([None, "a", "b", "c", "d"])), max_size=60),
       st.integers(1, 7))
def test_chunk_plan_is_a_deterministic_partition(spec, size) -> None:
    from vlaudit.scoring.run.plan import chunk_units

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
    from vlaudit.sources.images import ImageFailure, confined_path

    (tmp_path / "images").mkdir()
    with pytest.raises(ImageFailure, match="outside"):
        confined_path(tmp_path / "images", relative)
    assert confined_path(tmp_path / "images", "sub/x.png") == (tmp_path / "images" / "sub" / "x.png").resolve()


def test_run_lock_refuses_a_second_run(tmp_path) -> None:
    from vlaudit.errors import InputError
    from vlaudit.scoring.run.folder import run_lock

    with run_lock(tmp_path):
        with pytest.raises(InputError, match="another"):
            with run_lock(tmp_path):
                pass
    with run_lock(tmp_path):
        pass


def test_confinement_is_lexical_and_follows_user_symlinks(tmp_path) -> None:
    from vlaudit.sources.image_paths import confine

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
