"""``openai:`` against a misbehaving server of the tests' own (tests/endpoint_server.py, loopback): NaN and
infinite log-probs refused, a 200 with a body that is not JSON retried and then one line, a rate-limited server
whose reruns make progress until the run is complete, ``Retry-After`` holding every request to its server, and what
the server reports about itself recorded in the manifest and compared with what the user said.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pyarrow.parquet as pq
import pytest
from endpoint_server import VERSION, EndpointServer
from PIL import Image

from vlaudit.backends.base import YesNoRequest
from vlaudit.backends.openai.pool import EndpointRunError
from vlaudit.backends.options import EndpointOptions
from vlaudit.backends.prompt.verbalizers import PROBE_QUESTION
from vlaudit.backends.registry import ModelRef, load_backend


@pytest.fixture
def server():
    """``server(**settings)``: a running EndpointServer, shut down after the test."""
    running: list[EndpointServer] = []

    def start(**settings) -> EndpointServer:
        running.append(EndpointServer(**settings))
        return running[-1]

    yield start
    for one in running:
        one.close()


def _image(seed: int = 0) -> Image.Image:
    return Image.fromarray(np.random.default_rng(seed).integers(0, 256, size=(12, 16, 3), dtype=np.uint8))


def _bench(root: Path, n_images: int = 2, questions: int = 2) -> Path:
    (root / "images").mkdir(parents=True)
    rows = []
    for i in range(n_images):
        _image(i).save(root / "images" / f"img{i}.png")
        rows += [{"item_id": f"i{i}_{j}", "image": f"img{i}.png", "question": f"Is the cat left {i}{j}?",
                  "label": "yes" if j == 0 else "no", "dataset": "toy", "split": "test"} for j in range(questions)]
    (root / "items.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    return root


def _score_args(url: str, bench: Path, out: Path, *more: str) -> list[str]:
    return ["vca", "score", "--model", f"openai:{url}#tiny-qwen", "--benchmark", str(bench / "items.jsonl"),
            "--images", str(bench / "images"), "--out", str(out), "--backoff", "0", *more]


def _cached_keys(run: Path) -> set[str]:
    return {json.loads(line)["key"] for path in (run / "cache").glob("chunk-*.jsonl")
            for line in path.read_text().splitlines()[:-1]}  # the last line seals the chunk


def test_nan_and_infinite_log_probs_are_refused_in_one_line(server, cli, one_error_line, tmp_path) -> None:
    bench = _bench(tmp_path / "bench", n_images=1)
    srv = server()
    srv.faults.extend([None, ("logprob", float("nan"))])  # the load's probe answers; the first row's is NaN
    line = one_error_line(*cli(*_score_args(srv.url, bench, tmp_path / "nan")))
    assert "the server returned the log-prob nan for ' yes' in request" in line
    assert "no NaN or infinite margin" in line
    assert not (tmp_path / "nan" / "summary.json").exists() and not (tmp_path / "nan" / "margins.parquet").exists()
    srv.faults.append(("logprob", float("inf")))  # at the probe: the load refuses the server
    line = one_error_line(*cli(*_score_args(srv.url, bench, tmp_path / "inf")))
    assert "the log-prob inf for ' yes' in the probe request" in line
    srv.faults.extend([None, ("logprob", float("-inf"))])  # top_logprobs: the k-th (the censoring floor) too
    line = one_error_line(*cli(*_score_args(srv.url, bench, tmp_path / "floor", "--logprob-token-ids", "off")))
    assert "the log-prob -inf for" in line


def test_a_200_whose_body_is_not_json_is_retried_then_one_line(server, cli, one_error_line, tmp_path) -> None:
    bench = _bench(tmp_path / "bench", n_images=1)
    srv = server()
    assert cli(*_score_args(srv.url, bench, tmp_path / "clean"))[0] == 0
    srv.model_faults.append("badjson")  # the connection probe (the model listing) once
    srv.faults.extend([None, "badjson", "badjson"])  # then two scoring requests
    code, _, stderr = cli(*_score_args(srv.url, bench, tmp_path / "retried"))
    assert code == 0, stderr
    assert not srv.model_faults and not srv.faults
    assert (tmp_path / "retried" / "margins.parquet").read_bytes() == \
        (tmp_path / "clean" / "margins.parquet").read_bytes()
    srv.model_faults.append("badjson")
    line = one_error_line(*cli(*_score_args(srv.url, bench, tmp_path / "once", "--max-retries", "0")))
    assert f"cannot reach the server at {srv.url}: listing models" in line
    assert "failed after 1 attempt: HTTP 200 with a body that is not JSON" in line


def _not_the_probe(body: dict) -> bool:
    return PROBE_QUESTION in json.dumps(body["messages"])


def test_a_rate_limited_server_makes_progress_on_every_rerun_until_complete(server, cli, tmp_path) -> None:
    bench = _bench(tmp_path / "bench")
    reference = tmp_path / "reference"
    assert cli(*_score_args(server().url, bench, reference))[0] == 0
    # every 4th scoring request is refused (429) and no request is retried: each run stops at the first refusal,
    # in the middle of its one chunk; the requests finished before it are recorded, so each rerun goes further
    srv = server(throttle=4, spare=_not_the_probe)
    run = tmp_path / "run"
    args = _score_args(srv.url, bench, run, "--max-retries", "0", "--chunk-size", "64", "--concurrency", "1")
    progress = []
    for _ in range(12):
        code, _, stderr = cli(*args)
        progress.append(len(_cached_keys(run)))
        if code == 0:
            break
        assert code == 3, stderr
        assert "HTTP 429: rate limit reached" in stderr and "rerun the same command" in stderr
    assert code == 0, stderr
    assert srv.n_throttled >= 3
    assert all(later > earlier for earlier, later in zip(progress, progress[1:], strict=False)), progress
    summary = json.loads((run / "summary.json").read_text())
    assert progress[-1] == summary["n_unique_units"] == 12
    assert _margins(run) == _margins(reference)  # the same rows as one uninterrupted run (on another server)


def _margins(run: Path) -> list[dict]:
    return [{k: v for k, v in row.items() if k != "model"} for row in pq.read_table(run / "margins.parquet").to_pylist()]


def test_retry_after_holds_every_request_to_that_server(server) -> None:
    srv = server(throttle=1, retry_after="30", spare=_not_the_probe)  # every scoring request: 429, wait 30 s
    replica = server()
    backend = load_backend(ModelRef(f"openai:{srv.url}#tiny-qwen", EndpointOptions(
        max_retries=0, backoff=0.0, replicas=(replica.url,))), interfaces=("yesno",))
    now = [1000.0]
    waited: list[float] = []

    def sleep(seconds: float) -> None:
        waited.append(seconds)
        now[0] += seconds

    backend.pool.sleep, backend.pool.clock = sleep, lambda: now[0]
    with pytest.raises(EndpointRunError, match="HTTP 429"):  # round-robin: the first request goes to srv
        backend.score([YesNoRequest("a", "Is it?", None, "yesno")])
    assert waited == []  # no try left: nothing to wait for
    srv.throttle = None
    backend.score([YesNoRequest("b", "Is it?", None, "yesno")])  # to the replica: not held
    assert waited == [] and replica.n_chat == 1  # the load probes the first endpoint only
    backend.score([YesNoRequest("c", "Is it?", None, "yesno")])  # to srv again: it waits out the 30 s first
    assert waited == [30.0]
    backend.score([YesNoRequest("d", "Is it?", None, "yesno")])
    backend.score([YesNoRequest("e", "Is it?", None, "yesno")])
    assert waited == [30.0]  # the hold has passed


def test_what_the_server_reports_is_recorded_and_checked_against_what_the_user_said(server, cli, one_error_line,
                                                                                    tmp_path) -> None:
    bench = _bench(tmp_path / "bench", n_images=1)
    srv = server()  # reports no dtype, as vLLM's listing does not
    code, _, stderr = cli(*_score_args(srv.url, bench, tmp_path / "said", "--served-dtype", "fp32"))
    assert code == 0 and "warning" not in stderr, stderr
    backend = json.loads((tmp_path / "said" / "manifest.json").read_text())["backend"]
    assert backend["served"] == {"root": "/models/tiny-qwen", "max_model_len": 4096}  # no dtype: none reported
    assert backend["server"] == {"version": VERSION, "owned_by": None, "dtype": None, "dtype_reported_by": None,
                                 "dtype_said": "float32", "dtype_checked": False}
    # a server that reports its dtype, another than the user said: recorded, part of the margins, and a warning
    srv = server(dtype="torch.bfloat16")
    code, _, stderr = cli(*_score_args(srv.url, bench, tmp_path / "other", "--served-dtype", "float32"))
    assert code == 0, stderr
    (warning,) = [line for line in stderr.splitlines() if line.startswith("warning:")]
    assert "reports that it runs the model in bfloat16 (/v1/models), not the float32 of --served-dtype" in warning
    backend = json.loads((tmp_path / "other" / "manifest.json").read_text())["backend"]
    assert backend["served"]["dtype"] == "bfloat16" and backend["server"]["dtype_said"] == "float32"
    line = one_error_line(*cli(*_score_args(srv.url, bench, tmp_path / "auto", "--served-dtype", "auto")))
    assert "field '--served-dtype': say the dtype the server runs the model in" in line


def test_vllms_dev_mode_server_info_names_the_served_dtype() -> None:
    from vlaudit.backends.openai.server_report import canonical_dtype, server_dtype

    info = {"vllm_config": {"model_config": {"dtype": "torch.float32", "max_model_len": 4096}}}
    assert server_dtype({"id": "m"}, info) == ("float32", "/server_info")
    assert server_dtype({"id": "m", "dtype": "bf16"}, info) == ("bfloat16", "/v1/models")
    assert server_dtype({"id": "m"}, None) == (None, None)
    assert canonical_dtype("torch.float8_e4m3fn") == "float8_e4m3fn" and canonical_dtype("") is None
