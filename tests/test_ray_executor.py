"""Scale-out on Ray: the same shards on actors give a byte-identical margins.parquet; a killed worker's shards
are reported by id, the others kept, and a rerun scores only what is missing."""

from __future__ import annotations

import json

import pytest

ray = pytest.importorskip("ray", reason="Ray is an optional extra: pip install 'vlaudit[ray]'")

pytestmark = [pytest.mark.slow, pytest.mark.usefixtures("one_torch_thread")]

CONTEXTS = ["original", "text", "blank", "mean"]
INTERFACES = ["yesno", "truefalse"]


def _local_run(model, bench, out):
    from vlaudit.backends.options import RunOptions
    from vlaudit.backends.registry import load_backend
    from vlaudit.scoring.run.runner import run_scoring
    from vlaudit.sources.items import read_items

    backend = load_backend(f"hf:{model}", RunOptions(batch_size=3), interfaces=INTERFACES)
    return run_scoring(backend, read_items(bench / "items.jsonl"), images_dir=bench / "images", out_dir=out,
                       contexts=CONTEXTS, interfaces=INTERFACES, chunk_size=5)


def _ray_run(model, bench, out, *, workers=2, on_progress=None, executor_out=None):
    from vlaudit.backends.options import RunOptions
    from vlaudit.backends.registry import BackendLoad, ModelRef
    from vlaudit.scoring.run.ray_executor import RayExecutor
    from vlaudit.scoring.run.runner import run_scoring
    from vlaudit.sources.items import read_items

    executor = RayExecutor(BackendLoad(ModelRef(f"hf:{model}"), RunOptions(batch_size=3),
                                       interfaces=tuple(INTERFACES)), workers=workers, threads=1)
    if executor_out is not None:
        executor_out.append(executor)
    backend = executor.start()
    try:
        return run_scoring(backend, read_items(bench / "items.jsonl"), images_dir=bench / "images", out_dir=out,
                           contexts=CONTEXTS, interfaces=INTERFACES, chunk_size=5, executor=executor,
                           on_progress=on_progress)
    finally:
        executor.shutdown()


def test_a_killed_worker_is_reported_and_a_rerun_redoes_only_its_shards(make_benchmark, tiny_model, local_ray, tmp_path,
                                                                        tmp_path_factory) -> None:
    from vlaudit.scoring.run.shards import IncompleteRunError

    model = tiny_model("qwen2-vl")
    bench = tmp_path / "bench"
    make_benchmark(bench, n_images=8, questions=2)
    _local_run(model, bench, tmp_path / "local")
    executors: list = []
    killed = []

    def kill_first_worker(_done: int) -> None:
        if not killed:
            killed.append(True)
            ray.kill(executors[0].actors[0], no_restart=True)

    with pytest.raises(IncompleteRunError, match=r"shards failed \(shard \d+ \(first key [0-9a-f]+\): worker died"):
        _ray_run(model, bench, tmp_path / "ray", on_progress=kill_first_worker, executor_out=executors)
    assert not (tmp_path / "ray" / "margins.parquet").exists()
    done_before = len(list((tmp_path / "ray" / "cache").glob("chunk-*.jsonl")))
    assert done_before >= 1
    summary = _ray_run(model, bench, tmp_path / "ray")
    assert 0 < summary["n_units_scored_now"] < summary["n_unique_units"]
    assert summary["n_units_from_cache"] + summary["n_units_scored_now"] == summary["n_unique_units"]
    assert (tmp_path / "ray" / "margins.parquet").read_bytes() == (tmp_path / "local" / "margins.parquet").read_bytes()


def test_missing_ray_says_how_to_install(monkeypatch) -> None:
    import builtins

    from vlaudit.errors import MissingDependencyError
    from vlaudit.scoring.run.ray_executor import import_ray

    real_import = builtins.__import__

    def no_ray(name, *args, **kwargs):
        if name == "ray":
            raise ImportError("No module named 'ray'")
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_ray)
    with pytest.raises(MissingDependencyError, match=r"pip install 'vlaudit\[ray\]'"):
        import_ray()


def test_vca_score_cli_with_ray_workers_is_byte_identical_to_a_local_run(make_benchmark, tiny_model, local_ray,
                                                                         tmp_path, no_network) -> None:
    """`vca score --executor ray`: the same shards on two actors give the local run's margins.parquet byte for
    byte (several shards, two interfaces, four contexts), and the manifest names the executor and the same
    model fingerprint."""
    from typer.testing import CliRunner

    import vlaudit.cli  # noqa: F401  (registers every command)
    from vlaudit.commands._apps import app

    model = tiny_model("qwen2-vl")
    bench = tmp_path / "bench"
    make_benchmark(bench, n_images=6, questions=2)
    args = ["vca", "score", "--model", f"hf:{model}", "--benchmark", str(bench / "items.jsonl"), "--images",
            str(bench / "images"), "--contexts", ",".join(CONTEXTS), "--interface", ",".join(INTERFACES),
            "--batch-size", "3", "--chunk-size", "5"]
    local = CliRunner().invoke(app, [*args, "--out", str(tmp_path / "local")])
    assert local.exit_code == 0, local.output
    remote = CliRunner().invoke(app, [*args, "--out", str(tmp_path / "ray"), "--executor", "ray", "--workers", "2",
                                      "--threads-per-worker", "1"])
    assert remote.exit_code == 0, remote.output
    summary = json.loads((tmp_path / "ray" / "summary.json").read_text())
    assert summary["n_units_scored_now"] == summary["n_unique_units"] > 10
    assert (tmp_path / "ray" / "margins.parquet").read_bytes() == (tmp_path / "local" / "margins.parquet").read_bytes()
    manifest = json.loads((tmp_path / "ray" / "manifest.json").read_text())
    assert manifest["executor"]["executor"] == "ray" and manifest["executor"]["workers"] == 2
    local_manifest = json.loads((tmp_path / "local" / "manifest.json").read_text())
    assert manifest["model_fingerprint"] == local_manifest["model_fingerprint"]


def test_features_on_ray_equal_local_features(write_dual_dataset, local_ray, tmp_path, no_network) -> None:
    from typer.testing import CliRunner

    import vlaudit.cli  # noqa: F401  (registers every command)
    from vlaudit.backends.tiny.dual import build_tiny_dual
    from vlaudit.commands._apps import app

    model = build_tiny_dual("open_clip", tmp_path / "clip", seed=0)
    cycles_path, images_dir = write_dual_dataset(tmp_path)
    args = ["features", "--model", f"open_clip:local-dir:{model}", "--cycles", str(cycles_path), "--images",
            str(images_dir), "--batch-size", "2", "--device", "cpu"]
    local = CliRunner().invoke(app, [*args, "--out", str(tmp_path / "local")])
    assert local.exit_code == 0, local.output
    remote = CliRunner().invoke(app, [*args, "--out", str(tmp_path / "ray"), "--executor", "ray", "--workers", "2",
                                      "--threads-per-worker", "1"])
    assert remote.exit_code == 0, remote.output
    for name in ("images.parquet", "texts.parquet"):
        assert (tmp_path / "ray" / name).read_bytes() == (tmp_path / "local" / name).read_bytes()


def test_items_with_several_images_score_on_ray_as_locally(cli, tiny_model, local_ray, tmp_path) -> None:
    """MMMU items with several images: the workers' model takes them (the planning stand-in says so), and the
    margins are byte-identical to a local run's."""
    from benchmark_releases import mmmu_release

    model = f"hf:{tiny_model('qwen2-vl')}"
    code, _, err = cli("data", "items", "--format", "mmmu", mmmu_release(tmp_path), "--out", tmp_path / "mmmu.jsonl",
                       "--images", tmp_path / "images")
    assert code == 0, err
    common = ["vca", "score", "--model", model, "--benchmark", tmp_path / "mmmu.jsonl", "--images",
              tmp_path / "images", "--interface", "letter", "--contexts", "original,blank"]
    assert cli(*common, "--out", tmp_path / "local")[0] == 0
    code, _, err = cli(*common, "--out", tmp_path / "ray", "--executor", "ray", "--workers", "1")
    assert code == 0, err
    assert (tmp_path / "ray" / "margins.parquet").read_bytes() == (tmp_path / "local" / "margins.parquet").read_bytes()
