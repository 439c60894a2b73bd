"""The set-up path is part of what is tested: pins, idempotency, lazy imports, fresh-clone dry run."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]


def test_every_install_uses_the_one_constraints_file() -> None:
    """pip installs the pinned uv, uv (tools/install.py) everything else: every one of those lines passes the
    environment's one constraints file, torch and torchvision go in first, and uv is pinned too."""
    makefile = (REPO / "Makefile").read_text()
    lines = [line.strip() for line in makefile.splitlines() if re.match(r"\t\$\((PIP\) install|INSTALL\))", line)]
    assert len(lines) == 3, lines
    assert all("-c constraints.txt" in line for line in lines)
    assert lines[0].endswith(" uv"), "pip installs only the installer"
    assert "torch==2.14.1 torchvision==0.29.1" in lines[1], "torch and torchvision must be installed first"
    assert "VLLM_PIP := $(VLLM_VENV)/bin/pip install -q -c constraints-vllm.txt" in makefile
    assert "VLLM_INSTALL := $(VLLM_VENV)/bin/python tools/install.py -c constraints-vllm.txt" in makefile
    constraints = (REPO / "constraints.txt").read_text()
    assert re.search(r"^torch==2\.14\.1$", constraints, re.M)
    assert re.search(r"^torchvision==0\.29\.1$", constraints, re.M)
    uv_pins = {re.search(r"^uv==([\d.]+)$", (REPO / name).read_text(), re.M).group(1)  # type: ignore[union-attr]
               for name in ("constraints.txt", "constraints-vllm.txt")}
    assert len(uv_pins) == 1, uv_pins


@pytest.mark.skipif(shutil.which("make") is None, reason="make is not installed")
def test_second_setup_reinstalls_nothing() -> None:
    if not (REPO / ".venv" / ".vlaudit-installed").exists():
        pytest.skip("not running inside the Makefile's venv")
    # `make -q` exits 0 only when the target is up to date, i.e. a second run would do nothing.
    assert subprocess.run(["make", "-q", "setup"], cwd=REPO).returncode == 0


@pytest.mark.skipif(shutil.which("make") is None or shutil.which("git") is None, reason="needs make and git")
def test_fresh_clone_runs_the_whole_setup(tmp_path: Path) -> None:
    if not (REPO / ".git").exists():
        pytest.skip("not a git checkout")
    clone = tmp_path / "clone"
    subprocess.run(["git", "clone", "-q", str(REPO), str(clone)], check=True)
    plan = subprocess.run(["make", "-n", "test"], cwd=clone, capture_output=True, text=True, check=True).stdout
    steps = [line for line in plan.splitlines() if line.strip()]
    venv = next(i for i, s in enumerate(steps) if "-m venv .venv" in s)
    torch = next(i for i, s in enumerate(steps) if "torch==2.14.1" in s)
    package = next(i for i, s in enumerate(steps) if '-e ".[dev,ray,hf]"' in s)
    ruff = next(i for i, s in enumerate(steps) if "ruff check" in s)
    vllm_tests = next(i for i, s in enumerate(steps) if "-m pytest tests/vllm" in s)
    main_suite = next(i for i, s in enumerate(steps) if "-m pytest -n" in s)
    assert venv < torch < package < ruff < main_suite and vllm_tests < main_suite



@pytest.mark.skipif(shutil.which("make") is None, reason="make is not installed")
@pytest.mark.parametrize("target", ["test", "test-fast"])
def test_the_suite_runs_on_every_core_with_its_groups_kept_together(target: str) -> None:
    """``make test`` and ``make test-fast`` run pytest on every core (pytest-xdist, pinned in the dev extra),
    sending each ``xdist_group`` to one worker so a heavy shared fixture is built once; ``WORKERS=0`` runs
    it in one process."""
    def pytest_step(*overrides: str) -> str:
        plan = subprocess.run(["make", "-n", target, *overrides], cwd=REPO, capture_output=True, text=True,
                              check=True).stdout
        return next(line for line in plan.splitlines() if "-m pytest" in line and "tests/vllm" not in line)

    assert "-n auto --dist loadgroup" in pytest_step()
    assert "-n 0 --dist loadgroup" in pytest_step("WORKERS=0")
    assert re.search(r"^pytest-xdist==[\d.]+$", (REPO / "constraints.txt").read_text(), re.M)
    assert '"pytest-xdist"' in (REPO / "pyproject.toml").read_text()

def test_help_does_not_import_heavy_libraries() -> None:
    code = (
        "import sys\n"
        "from typer.testing import CliRunner\n"
        "from vlaudit.cli import app\n"
        "r = CliRunner().invoke(app, ['--help'])\n"
        "assert r.exit_code == 0, r.output\n"
        "heavy = [m for m in ('torch', 'transformers', 'open_clip', 'cv2', 'matplotlib', 'numpy', 'pyarrow')"
        " if m in sys.modules]\n"
        "print(','.join(heavy))\n"
    )
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True)
    assert out.stdout.strip() == "", f"--help imported heavy modules: {out.stdout.strip()}"


@pytest.mark.slow  # ~10 s: a pytest run on two xdist workers in its own process
def test_loadgroup_keeps_a_module_fixture_on_one_worker(tmp_path: Path) -> None:
    """The grouping of tests/conftest.py really reaches pytest-xdist's scheduler: a module-scoped fixture used by
    tests that --dist loadgroup would otherwise spread over both workers is set up once, and every test that
    uses it reports its group in its id (``ID@GROUP``)."""
    (tmp_path / "conftest.py").write_text(
        "import importlib.util\n"
        f"spec = importlib.util.spec_from_file_location('suite_conftest', {str(REPO / 'tests' / 'conftest.py')!r})\n"
        "suite = importlib.util.module_from_spec(spec)\n"
        "spec.loader.exec_module(suite)\n"
        "pytest_collection_modifyitems = suite.pytest_collection_modifyitems\n")
    log = tmp_path / "setups.log"
    (tmp_path / "test_heavy.py").write_text(
        "import os\nimport pytest\n\n"
        "@pytest.fixture(scope='module')\n"
        "def heavy():\n"
        f"    with open({str(log)!r}, 'a') as f:\n"
        "        f.write(f'{os.getpid()}\\n')\n\n"
        + "".join(f"def test_uses_{k}(heavy, request):\n    assert request.node.nodeid.endswith('@test_heavy.py')\n\n"
                  f"def test_alone_{k}():\n    pass\n\n" for k in range(6)))
    done = subprocess.run([sys.executable, "-m", "pytest", "-q", "-n", "2", "--dist", "loadgroup", "-p",
                           "no:cacheprovider", str(tmp_path)], cwd=tmp_path, capture_output=True, text=True,
                          timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr
    assert len(log.read_text().split()) == 1, log.read_text()


@pytest.mark.skipif(shutil.which("make") is None, reason="make is not installed")
def test_make_lets_python_write_its_bytecode_caches() -> None:
    """A container's PYTHONDONTWRITEBYTECODE=1 would make every process of the run (test workers, Ray actors,
    vLLM engines, command-line tests) compile torch and the tests from source again: the Makefile drops it."""
    env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1"}
    shown = subprocess.run(["make", "--no-print-directory", "--eval",
                            "show-bytecode-setting: ; @echo \"[$${PYTHONDONTWRITEBYTECODE-unset}]\"",
                            "show-bytecode-setting"], cwd=REPO, env=env, capture_output=True, text=True, check=True)
    assert shown.stdout.strip() == "[unset]"
