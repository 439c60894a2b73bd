"""The set-up's installer (tools/install.py): uv, told the indexes pip is configured with, so a machine whose pip
reads a mirror or a local wheel folder installs from there and not from PyPI."""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
spec = importlib.util.spec_from_file_location("setup_install", REPO / "tools" / "install.py")
assert spec is not None and spec.loader is not None
install = importlib.util.module_from_spec(spec)
spec.loader.exec_module(install)


def test_pip_settings_follow_pips_precedence_and_lists() -> None:
    """A PIP_* variable (``:env:``) wins over the [install] section, which wins over [global]; several URLs or
    folders separated by whitespace become one flag each; the index strategy is pip's best match."""
    listed = (":env:.find-links='/env/wheels'\n"
              + "global.find-links='/global/wheels'\n"
              + "global.extra-index-url='file:///a/simple file:///b/simple'\n"
              + "install.index-url='https://mirror.example/simple'\n"
              + "global.index-url='https://ignored.example/simple'\n"
              + "global.cert='/etc/ssl/bundle.pem'\n"
              + "global.timeout='60'\n")
    settings = install.pip_settings(listed)
    assert settings == {"find-links": "/env/wheels", "extra-index-url": "file:///a/simple file:///b/simple",
                        "index-url": "https://mirror.example/simple", "cert": "/etc/ssl/bundle.pem"}
    assert install.uv_arguments(settings) == [
        "--index-strategy", "unsafe-best-match", "--default-index", "https://mirror.example/simple",
        "--index", "file:///a/simple", "--index", "file:///b/simple", "--find-links", "/env/wheels"]
    assert install.uv_arguments({}) == ["--index-strategy", "unsafe-best-match"]


def _wheel(folder: Path, name: str) -> Path:
    """A minimal pure-Python wheel ``name`` 1.0 whose module says its own name."""
    module = name.replace("-", "_")
    dist = f"{module}-1.0"
    path = folder / f"{dist}-py3-none-any.whl"
    folder.mkdir(parents=True, exist_ok=True)
    files = {f"{module}.py": f"NAME = {name!r}\n",
             f"{dist}.dist-info/METADATA": f"Metadata-Version: 2.1\nName: {name}\nVersion: 1.0\n",
             f"{dist}.dist-info/WHEEL": "Wheel-Version: 1.0\nGenerator: test\nRoot-Is-Purelib: true\nTag: py3-none-any\n"}
    record = "".join(f"{file},,\n" for file in files) + f"{dist}.dist-info/RECORD,,\n"
    with zipfile.ZipFile(path, "w") as archive:
        for file, text in files.items():
            archive.writestr(file, text)
        archive.writestr(f"{dist}.dist-info/RECORD", record)
    return path


@pytest.mark.skipif(install.uv_binary() is None, reason="uv is installed by make setup")
def test_packages_come_from_the_index_and_folder_pip_is_configured_with(tmp_path: Path) -> None:
    """Two packages that exist only in a local simple index (pip's ``index-url``, from a config file) and a
    local wheel folder (``PIP_FIND_LINKS``) install into a fresh environment, with no network."""
    wheel = _wheel(tmp_path / "files", "probe-index")
    (tmp_path / "simple" / "probe-index").mkdir(parents=True)
    (tmp_path / "simple" / "probe-index" / "index.html").write_text(
        f'<html><body><a href="{wheel.as_uri()}">{wheel.name}</a></body></html>\n')
    _wheel(tmp_path / "folder", "probe-folder")
    config = tmp_path / "pip.conf"
    config.write_text(f"[global]\nindex-url = {(tmp_path / 'simple').as_uri()}\n")
    uv = install.uv_binary()
    subprocess.run([uv, "venv", "-q", str(tmp_path / "target")], check=True)
    target = tmp_path / "target" / "bin" / "python"
    env = {**os.environ, "PIP_CONFIG_FILE": str(config), "PIP_FIND_LINKS": str(tmp_path / "folder"),
           "UV_CACHE_DIR": str(tmp_path / "cache"), "UV_OFFLINE": "1"}
    done = subprocess.run([sys.executable, str(REPO / "tools" / "install.py"), "--python", str(target),
                           "probe-index", "probe-folder"], env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    said = subprocess.run([str(target), "-c", "import probe_index, probe_folder; print(probe_index.NAME, "
                           "probe_folder.NAME)"], capture_output=True, text=True, check=True).stdout
    assert said.split() == ["probe-index", "probe-folder"]
