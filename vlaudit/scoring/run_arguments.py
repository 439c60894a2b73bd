"""The arguments a ``vca score`` run records in its manifest, built the same way by the CLI and the API.

A rerun into a folder that holds a run is compared with that run by what its arguments *mean*, not how they
were spelled (:func:`vlaudit.scoring.run_folder.changed_arguments`): paths are recorded resolved (``items.jsonl``
given from its folder and ``/abs/items.jsonl`` are one argument), and the items are recorded by a content
fingerprint, so an ITEMS file edited in place is a different run while the same rows given as a file, a
DataFrame or a list are the same run. ``vlaudit vca score`` and :func:`vlaudit.score_margins` both call
:func:`score_arguments`, so a run of one into a folder holding a run of the other with other arguments is
refused.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from vlaudit.backends.registry import parse_spec_or_none
from vlaudit.hashing import sha256_json

# The CLI's defaults of the options that reach the backend loader; the API records the same for an option
# it was not given, so that a default run of either front door records the same arguments.
BACKEND_DEFAULTS: dict[str, Any] = {"dtype": "auto", "device": "auto", "device_map": None, "revision": None,
                                    "min_pixels": None, "max_pixels": None, "trust_remote_code": False,
                                    "prefix_cache": None, "system": None}


def resolved_path(path: str | Path | None) -> str | None:
    """The absolute path with ``~``, ``..`` and symbolic links resolved (None stays None)."""
    return None if path is None else str(Path(path).expanduser().resolve())


def resolved_model_spec(spec: str) -> str:
    """``PREFIX:NAME`` with NAME resolved when it is a local path (``hf:./m`` ≡ ``hf:/abs/m``); hub ids and
    reference names are left as given."""
    parsed = parse_spec_or_none(spec)
    if parsed is not None and Path(parsed.name).expanduser().exists():
        return f"{parsed.prefix}:{resolved_path(parsed.name)}"
    return spec


def items_fingerprint(items: Sequence[Any]) -> str:
    """sha256 of the items' rows (:meth:`BenchmarkItem.to_row`, in order): what the run scores."""
    return sha256_json([item.to_row() for item in items])


def score_arguments(*, model: str, items: Sequence[Any], benchmark: str | Path | None, images: str | Path,
                    out: str | Path, contexts: Sequence[str], interfaces: Sequence[str], seed: int,
                    batch_size: int = 8, chunk_size: int = 64, strict: bool = False,
                    model_name: str | None = None, template: str | Path | None = None,
                    question_templates: Any = None, executor: str = "local", address: str | None = None,
                    workers: int = 1, gpus_per_worker: float = 0.0, threads_per_worker: int | None = None,
                    **backend_options: Any) -> dict[str, Any]:
    """The manifest's ``arguments`` of a scoring run (names as the CLI spells its options).

    ``benchmark`` is the ITEMS file when there is one (None for rows given in memory); ``items_sha256`` (the
    items' content) is what a rerun is compared on. Backend options not given take the CLI's defaults.
    """
    unknown = sorted(set(backend_options) - set(BACKEND_DEFAULTS))
    options = {**BACKEND_DEFAULTS, **{k: v for k, v in backend_options.items() if k in BACKEND_DEFAULTS}}
    return {"model": resolved_model_spec(model), "benchmark": resolved_path(benchmark),
            "items_sha256": items_fingerprint(items), "images": resolved_path(images), "out": resolved_path(out),
            "contexts": list(contexts), "interface": list(interfaces), "batch_size": batch_size, "seed": seed,
            "strict": strict, **options, "model_name": model_name, "chunk_size": chunk_size,
            "executor": executor, "address": address, "workers": workers, "gpus_per_worker": gpus_per_worker,
            "threads_per_worker": threads_per_worker, "template": resolved_path(template),
            "question_templates": question_templates,
            **({"other_backend_options": {k: _plain(backend_options[k]) for k in unknown}} if unknown else {})}


def _plain(value: Any) -> Any:
    """A JSON value as is; anything else (a torch dtype, an object) by its text."""
    return value if value is None or isinstance(value, (str, int, float, bool, list, dict)) else str(value)
