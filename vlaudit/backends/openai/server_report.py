"""What an ``openai:`` server says about itself, recorded in the run's manifest (``backend.server``) and checked
against what the user said (``--served-dtype``).

vLLM's model listing (``GET /v1/models``) reports the model's ``root`` and ``max_model_len`` (already recorded
in ``backend.served``), its ``GET /version`` the vLLM version; it reports the dtype it runs the model in only
on ``GET /server_info`` (``vllm_config.model_config.dtype``), a route of its development mode
(``VLLM_SERVER_DEV_MODE=1``; vLLM @ 0.32.0 : vllm/entrypoints/serve/dev/server_info/api_router.py). Another
server may put a ``dtype`` in its listing. A dtype the server reports is part of what the margins are
(``backend.served.dtype``, in every cache key); the dtype the user said and the server's version are records
only (``backend.server``). When both the user and the server name a dtype and they differ, a warning says so:
vLLM's ``--dtype auto`` serves a float32 checkpoint in bfloat16, whose margins differ by ~1e-3 nat.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from vlaudit.backends.dtypes import parse_dtype
from vlaudit.backends.openai.pool import EndpointPool, EndpointRunError
from vlaudit.errors import InputError


def canonical_dtype(value: object) -> str | None:
    """A reported dtype's canonical name (``torch.bfloat16``, ``bf16`` → ``bfloat16``); the text as reported
    when it is no name vlaudit knows; None for none."""
    if not isinstance(value, str) or not value.strip():
        return None
    text = value.strip().removeprefix("torch.")
    try:
        return parse_dtype(text)
    except InputError:
        return text


def _optional_json(pool: EndpointPool, path: str) -> Any:
    """The JSON of ``GET path`` on the first endpoint's root, or None where the server has no such route."""
    try:
        response = pool.request("GET", path, what=f"reading {path}", endpoint=0, root=True)
    except EndpointRunError:
        return None
    return response.json() if response.status_code < 400 else None


def server_dtype(listed: Mapping[str, Any], info: Any) -> tuple[str | None, str | None]:
    """(the dtype the server reports, where it says it): its model listing's ``dtype``, else vLLM's
    ``/server_info``; (None, None) when it reports none."""
    dtype = canonical_dtype(listed.get("dtype"))
    if dtype is not None:
        return dtype, "/v1/models"
    config = info.get("vllm_config") if isinstance(info, Mapping) else None
    model = config.get("model_config") if isinstance(config, Mapping) else None
    dtype = canonical_dtype(model.get("dtype")) if isinstance(model, Mapping) else None
    return (dtype, "/server_info") if dtype is not None else (None, None)


def read_server_report(pool: EndpointPool, listed: Mapping[str, Any], said: str | None
                       ) -> tuple[str | None, dict[str, Any], str | None]:
    """(the dtype the server reports, the ``backend.server`` record, a warning or None) for the model entry
    ``listed`` of the first endpoint's listing and the dtype the user ``said`` (``--served-dtype``)."""
    version = _optional_json(pool, "/version")
    info = _optional_json(pool, "/server_info?config_format=json")
    dtype, source = server_dtype(listed, info)
    record = {"version": version.get("version") if isinstance(version, Mapping) else None,
              "owned_by": listed.get("owned_by"), "dtype": dtype, "dtype_reported_by": source,
              "dtype_said": said}
    warning = None
    if said is not None and dtype is not None and said != dtype:
        warning = (f"the server at {pool.urls[0]} reports that it runs the model in {dtype} ({source}), not the "
                   f"{said} of --served-dtype: its margins are {dtype}'s (restart it with --dtype {said}, or "
                   f"rerun with --served-dtype {dtype})")
    elif said is not None and dtype is None:
        record["dtype_checked"] = False  # the server reports none: what the user said is recorded unchecked
    return dtype, record, warning
