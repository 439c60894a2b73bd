"""Whether the Hugging Face hub can be reached, asked once and quickly, so that nothing retries it for minutes.

Without ``HF_HUB_OFFLINE`` on a machine that cannot reach the hub, the hub libraries retried for minutes
before failing (``hf:`` 3 min 17 s, ``open_clip:`` 1 min 05 s, ``hf-dataset:`` 26 s). Before a hub
name is resolved, :func:`offline_unless_reachable` opens one TCP connection to the hub's host (``HF_ENDPOINT``,
or the HTTPS proxy when one is set) within :data:`HUB_PROBE_SECONDS`; when that fails, the process is put in
the hub libraries' offline mode (what ``HF_HUB_OFFLINE=1`` does), so a cached model or dataset loads from the
cache and one that is not cached fails at once, in one line naming the way out (:func:`offline_reason`).
"""

from __future__ import annotations

import functools
import os
import socket
import sys
import threading
from urllib.parse import urlsplit

from huggingface_hub import constants

_TRUE = {"1", "ON", "YES", "TRUE"}


def hub_offline() -> bool:
    """True when the environment forbids hub downloads (``HF_HUB_OFFLINE`` or ``TRANSFORMERS_OFFLINE``)."""
    return any(os.environ.get(name, "").strip().upper() in _TRUE for name in ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE"))


#: seconds the one connection to the hub's host may take before the hub counts as unreachable
HUB_PROBE_SECONDS = 3.0
_PROXIES = ("HTTPS_PROXY", "https_proxy", "ALL_PROXY", "all_proxy")
_switched_offline: list[str] = []  # why this process was put offline (empty: it was not)


def _hub_address() -> tuple[str, int] | None:
    """(host, port) the hub's HTTPS requests connect to first: the proxy when one is set, else ``HF_ENDPOINT``."""
    proxy = next((os.environ[name] for name in _PROXIES if os.environ.get(name)), None)
    url = urlsplit(proxy if proxy and "://" in proxy else (f"http://{proxy}" if proxy else constants.ENDPOINT))
    if not url.hostname:
        return None
    return url.hostname, url.port or (443 if url.scheme == "https" else 80)


@functools.lru_cache(maxsize=1)
def hub_reachable(timeout: float = HUB_PROBE_SECONDS) -> str | None:
    """None when one TCP connection to the hub's host (:func:`_hub_address`) opens within ``timeout`` seconds;
    else why not (the name does not resolve, refused, timed out). Asked once per process."""
    address = _hub_address()
    if address is None:
        return None  # an endpoint this cannot parse: leave it to the hub library
    outcome: list[str | None] = []

    def connect() -> None:
        try:
            socket.create_connection(address, timeout=timeout).close()
            outcome.append(None)
        except OSError as exc:
            outcome.append(f"{type(exc).__name__}: {exc.strerror or exc}")

    probe = threading.Thread(target=connect, daemon=True)  # name resolution has no timeout of its own
    probe.start()
    probe.join(timeout + 0.5)
    reason = outcome[0] if outcome else f"no answer within {timeout:g} s"
    return None if reason is None else f"{address[0]}:{address[1]} cannot be reached ({reason})"


def offline_unless_reachable() -> bool:
    """True when hub downloads are off: set so by the user (``HF_HUB_OFFLINE``), or now, because the hub cannot
    be reached (then ``HF_HUB_OFFLINE=1`` is set for this process and the loaded hub libraries are told, so that
    they read the local cache instead of retrying; see the module docstring)."""
    if hub_offline():
        return True
    reason = hub_reachable()
    if reason is None:
        return False
    os.environ["HF_HUB_OFFLINE"] = "1"
    constants.HF_HUB_OFFLINE = True
    datasets_config = sys.modules.get("datasets.config")
    if datasets_config is not None:  # datasets read the variable when imported
        setattr(datasets_config, "HF_HUB_OFFLINE", True)  # noqa: B010  (a module typed without it)
    _switched_offline.append(reason)
    return True


def offline_reason() -> str:
    """Why the hub is offline, as a message names it."""
    if _switched_offline:
        return (f"the hub {_switched_offline[0]}, so only the local cache is read (set HF_HUB_OFFLINE=1 to skip "
                "this check)")
    return "downloads are off (HF_HUB_OFFLINE=1)"
