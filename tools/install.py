"""``pip install`` for the set-up (Makefile), done by uv with pip's own index configuration.

Usage: ``VENV/bin/python tools/install.py ARGS`` installs into that interpreter's environment (or into the one
``--python PATH`` names); ARGS are ``pip install`` arguments (``-c FILE``, ``-r FILE``, ``-e .``,
``--no-deps``, requirements).

Why uv: it installs the main environment in about 30 s where pip took 4 min on the same local wheels (it
unpacks in parallel, does not byte-compile, and a second build links files from its cache). Why this
wrapper: uv reads ``UV_*`` settings, not pip's, so on a machine whose pip is configured with a mirror or a
local wheel folder, bare uv would go to PyPI instead (here: download multi-GB torch builds that lie on
disk). The wrapper hands uv the indexes pip would use — ``index-url``, ``extra-index-url`` and
``find-links`` from pip's configuration files and ``PIP_*`` variables (``pip config list``), and ``cert``
as ``SSL_CERT_FILE`` — and resolves across them as pip does: the best version over every index
(``--index-strategy unsafe-best-match``; uv's default takes the first index that has the package).
Where uv is not installed in the environment, the same arguments go to pip.
"""

from __future__ import annotations

import ast
import os
import subprocess
import sys

# pip's precedence: a PIP_* variable over the [install] section over [global] (pip's ConfigOptionParser).
SCOPES = (":env:", "install", "global")
KEYS = ("index-url", "extra-index-url", "find-links", "cert")


def pip_settings(config_list: str) -> dict[str, str]:
    """The value pip uses for each of KEYS, from the output of ``pip config list`` (``scope.key='value'``)."""
    found: dict[tuple[str, str], str] = {}
    for line in config_list.splitlines():
        name, sep, value = line.partition("=")
        scope, _, key = name.rpartition(".")
        if sep and scope in SCOPES and key in KEYS:
            found[(scope, key)] = ast.literal_eval(value)
    settings = {}
    for key in KEYS:
        for scope in SCOPES:
            if (scope, key) in found:
                settings[key] = found[(scope, key)]
                break
    return settings


def uv_arguments(settings: dict[str, str]) -> list[str]:
    """uv's flags for pip's settings; pip separates several URLs or folders by whitespace."""
    args = ["--index-strategy", "unsafe-best-match"]
    if "index-url" in settings:
        args += ["--default-index", settings["index-url"]]
    for url in settings.get("extra-index-url", "").split():
        args += ["--index", url]
    for place in settings.get("find-links", "").split():
        args += ["--find-links", place]
    return args


def uv_binary() -> str | None:
    try:
        import uv  # the uv wheel's Python shim, installed into the venv by the Makefile
    except ImportError:
        return None
    return str(uv.find_uv_bin())


def main(argv: list[str]) -> int:
    uv = uv_binary()
    if uv is None:
        print("tools/install.py: uv is not installed here; installing with pip", file=sys.stderr)
        return subprocess.call([sys.executable, "-m", "pip", "install", "-q", *argv])
    listed = subprocess.run([sys.executable, "-m", "pip", "config", "list"], capture_output=True, text=True,
                            check=True).stdout
    settings = pip_settings(listed)
    env = dict(os.environ)
    if "cert" in settings:
        env.setdefault("SSL_CERT_FILE", settings["cert"])
    target = [] if "--python" in argv else ["--python", sys.executable]
    command = [uv, "pip", "install", "-q", *target, *uv_arguments(settings), *argv]
    return subprocess.call(command, env=env)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
