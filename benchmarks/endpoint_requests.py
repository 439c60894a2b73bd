"""Requests/s of the ``openai:`` backend against a local OpenAI-compatible server (``make bench`` row).

The server is the tests' own (tests/endpoint_server.py: stdlib ThreadingHTTPServer on 127.0.0.1, planted
log-probs; in a process of its own), answering each chat request after ``--service-ms`` (a stand-in for the model's forward pass, which
a real server runs concurrently). Ours: the backend at ``--concurrency`` requests in flight. The baseline, in
the same process and on the same server: the same backend one request at a time (what a scoring loop that
waits for each answer gets). Figures: ``speedup`` = ours / baseline requests/s (≤ concurrency by
construction), ``identical`` (both read the same margins, bit for bit), requests/s of both, and
``overhead_ms`` — the client-and-server cost of one request with no service time, one at a time.

    .venv/bin/python benchmarks/endpoint_requests.py [--requests 160] [--concurrency 8] [--service-ms 20]
"""

from __future__ import annotations

import argparse
import contextlib
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests"))  # the tests' loopback server


@contextlib.contextmanager
def served(delay: float) -> Iterator[str]:
    """The base URL of the tests' server answering after ``delay`` s, run in a process of its own."""
    code = ("import sys, time; from endpoint_server import EndpointServer; "
            f"s = EndpointServer(delay={delay!r}); print(s.url, flush=True); sys.stdin.read()")
    process = subprocess.Popen([sys.executable, "-c", code], cwd=REPO / "tests", stdin=subprocess.PIPE,
                               stdout=subprocess.PIPE, text=True)
    try:
        assert process.stdout is not None
        yield process.stdout.readline().strip()
    finally:
        process.kill()
        process.wait()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--requests", type=int, default=160)
    parser.add_argument("--concurrency", type=int, default=8)
    parser.add_argument("--service-ms", type=float, default=20.0)
    args = parser.parse_args()

    import numpy as np
    from PIL import Image

    from vlaudit.backends.base import YesNoRequest
    from vlaudit.backends.options import EndpointOptions
    from vlaudit.backends.registry import ModelRef, load_backend

    rng = np.random.default_rng(0)
    images = [Image.fromarray(rng.integers(0, 256, size=(56, 56, 3), dtype=np.uint8)) for _ in range(8)]
    requests = [YesNoRequest(f"r{i}", f"Is the cat left of the dog {i}?", images[i % 8] if i % 3 else None, "yesno")
                for i in range(args.requests)]
    def rate(url: str, concurrency: int) -> tuple[float, list[float]]:
        backend = load_backend(ModelRef(f"openai:{url}#tiny-qwen", EndpointOptions(concurrency=concurrency)),
                               interfaces=["yesno"])
        backend.score(requests[:concurrency])  # warm-up: connections opened, first-use imports done
        start = time.perf_counter()
        results = backend.score(requests)
        seconds = time.perf_counter() - start
        backend.pool.close()
        return len(requests) / seconds, [r.margin for r in results]

    # each server in its own process, as a real one is (in this process it would share the client's GIL)
    with served(0.0) as instant, served(args.service_ms / 1000) as serving:
        overhead_rps, _ = rate(instant, 1)  # no service time: what one request costs the client and the server
        baseline_rps, baseline = rate(serving, 1)
        ours_rps, ours = rate(serving, args.concurrency)
    print(f"requests={len(requests)} service_ms={args.service_ms:g} concurrency={args.concurrency} "
          f"baseline_rps={baseline_rps:.1f} ours_rps={ours_rps:.1f}")
    print(f"speedup={ours_rps / baseline_rps:.2f} identical={ours == baseline} ours_rps={ours_rps:.1f} "
          f"overhead_ms={1000 / overhead_rps:.2f}")


if __name__ == "__main__":
    main()
