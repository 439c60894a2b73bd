"""Text-only log p(caption) of a ``hf-lm:`` causal LM, cached and resumable (:mod:`vlaudit.scoring.run.cache`).

Each caption's record is keyed by sha256(model fingerprint, caption) — the fingerprint covers the spec,
revision, config, dtype, vocabulary and context token (:attr:`vlaudit.backends.hf.lm.CausalLmScorer.fingerprint`)
— and written in sealed chunks of ``chunk`` captions as they are scored, so a killed run resumes with the
captions not yet written, and a rerun of the same model on the same captions reads every score back.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from vlaudit.backends.hf.text_logprob import TextLogProb
from vlaudit.backends.registry import load_text_backend
from vlaudit.hashing import sha256_json
from vlaudit.scoring.run.cache import ChunkCache


def score_texts(spec: str | Any, texts: Sequence[str], *, cache: str | Path, batch_size: int = 16,
                device: str | None = "cpu", chunk: int = 256, warn: Callable[[str], None] | None = None
                ) -> list[TextLogProb]:
    """log p and scored-token count of every text under ``spec`` (a ``hf-lm:`` spec, or a loaded scorer)."""
    scorer = load_text_backend(spec, device=device, batch_size=batch_size) if isinstance(spec, str) else spec
    fingerprint = scorer.fingerprint
    store = ChunkCache(Path(cache), warn=warn)
    records = store.load()
    keys = [sha256_json({"model": fingerprint, "text": text}) for text in texts]
    todo = sorted({k: t for k, t in zip(keys, texts, strict=True) if k not in records}.items())
    Path(cache).mkdir(parents=True, exist_ok=True)
    for start in range(0, len(todo), chunk):
        part = todo[start:start + chunk]
        scored = scorer.score([text for _, text in part])
        store.append({"key": key, "text": text, "logprob": s.logprob, "tokens": s.tokens}
                     for (key, text), s in zip(part, scored, strict=True))
    return [TextLogProb(float(store.records[k]["logprob"]), int(store.records[k]["tokens"])) for k in keys]
