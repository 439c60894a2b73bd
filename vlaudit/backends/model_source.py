"""Where a transformers model comes from — a local folder or a hub id — checked before any weights load.

``transformers.from_pretrained`` reports a missing folder as "Repo id must be in the form …" and, for a hub
id that is not cached while offline, only after its retries. :func:`check_model_source` says what is wrong
at once: the folder does not exist, or the hub model is not in the local cache and ``HF_HUB_OFFLINE`` (or
``TRANSFORMERS_OFFLINE``) forbids downloading it.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

from huggingface_hub import constants, try_to_load_from_cache

from vlaudit.errors import InputError

# what the hub accepts as a repo id: "name" or "namespace/name" of letters, digits, '-', '_', '.'
_HUB_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]*(/[A-Za-z0-9][A-Za-z0-9_.-]*)?$")
_TRUE = {"1", "ON", "YES", "TRUE"}


def hub_offline() -> bool:
    """True when the environment forbids hub downloads (``HF_HUB_OFFLINE`` or ``TRANSFORMERS_OFFLINE``)."""
    return any(os.environ.get(name, "").strip().upper() in _TRUE for name in ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE"))


def cached_on_hub(repo_id: str, revision: str | None = None) -> bool:
    """Whether ``repo_id`` (at ``revision``) has its config.json in the local Hugging Face cache."""
    try:
        found = try_to_load_from_cache(repo_id, "config.json", revision=revision)
    except ValueError:  # not a valid repo id or revision: nothing of it can be cached
        return False
    return isinstance(found, str)


def check_model_source(prefix: str, name: str, revision: str | None = None) -> None:
    """Raise :class:`InputError` (field ``--model``) when ``PREFIX:NAME`` cannot be loaded without trying.

    ``name`` is a local folder when it exists or cannot be a hub id (absolute, ``./``, ``~``, ``..``, more
    than one ``/``); otherwise a hub id, which must be cached when the hub is offline."""
    path = Path(name).expanduser()
    spec = f"{prefix}:{name}"
    if path.exists():
        if not path.is_dir():
            raise InputError(f"{spec}: a model is a folder (config.json, weights, processor), not a file",
                             path=name, field="--model")
        return
    if not _HUB_ID.match(name) or ".." in name or name.startswith("."):
        raise InputError(f"{spec}: the model folder does not exist", path=name, field="--model")
    if hub_offline() and not cached_on_hub(name, revision):
        at = f" at revision {revision!r}" if revision else ""
        raise InputError(f"{spec}: no folder {name!r} here, and hub model {name!r}{at} is not in the local "
                         f"Hugging Face cache ({constants.HF_HUB_CACHE}) while the hub is offline (HF_HUB_OFFLINE); "
                         f"download it where the hub is reachable, or give a local folder ({prefix}:/path/to/model)",
                         field="--model")
