"""Where a transformers model comes from — a local folder or a hub id — checked before any weights load.

``transformers.from_pretrained`` reports a missing folder as "Repo id must be in the form …" and, for a hub
id that is not cached while offline, only after its retries. :func:`check_model_source` says what is wrong
at once: the folder does not exist, or the hub model is not in the local cache and ``HF_HUB_OFFLINE`` (or
``TRANSFORMERS_OFFLINE``) forbids downloading it.

Without ``HF_HUB_OFFLINE`` on a machine that cannot reach the hub, the hub libraries retried for minutes
before failing (``hf:`` 3 min 17 s, ``open_clip:`` 1 min 05 s, ``hf-dataset:`` 26 s). Before a hub
id is resolved, :func:`offline_unless_reachable` opens one TCP connection to the hub's host (``HF_ENDPOINT``,
or the HTTPS proxy when one is set) with a :data:`HUB_PROBE_SECONDS` limit; when it fails, the process is put
in the hub libraries' offline mode (what ``HF_HUB_OFFLINE=1`` does), so a cached model loads from the cache and
one that is not cached fails at once in one line naming the way out.
"""

from __future__ import annotations

import re
from pathlib import Path

from huggingface_hub import constants, try_to_load_from_cache

from vlaudit.errors import InputError
from vlaudit.sources.hub_access import hub_offline, offline_reason, offline_unless_reachable

__all__ = ["cached_on_hub", "check_model_source", "hub_offline", "offline_reason", "offline_unless_reachable"]

# what the hub accepts as a repo id: "name" or "namespace/name" of letters, digits, '-', '_', '.'
_HUB_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]*(/[A-Za-z0-9][A-Za-z0-9_.-]*)?$")


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
    if cached_on_hub(name, revision):
        offline_unless_reachable()  # cached: loads from the cache without retrying an unreachable hub
        return
    if offline_unless_reachable():
        at = f" at revision {revision!r}" if revision else ""
        raise InputError(f"{spec}: no folder {name!r} here, and hub model {name!r}{at} is not in the local "
                         f"Hugging Face cache ({constants.HF_HUB_CACHE}) while {offline_reason()}; download it "
                         f"where the hub is reachable (into that cache, or a folder), then run with "
                         f"HF_HUB_OFFLINE=1 or give the local folder ({prefix}:/path/to/model)", field="--model")
