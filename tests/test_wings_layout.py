"""The wings grouped by role (docs/architecture.md "Wings grouped by role"), and the script that moves them.

``tools/move_wings.py`` moves the flat files of backends/, results/ and scoring/ into folders by role and
rewrites every reference by module path. Its rewriter is checked on known answers here whatever the layout;
the layout itself is checked once the script has run (before, those tests are skipped, naming the command).
"""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest

REPO = Path(__file__).resolve().parents[1]
SCRIPT = REPO / "tools" / "move_wings.py"
APPLIED = (REPO / "vlaudit" / "backends" / "hf" / "mllm.py").is_file()
needs_layout = pytest.mark.skipif(not APPLIED, reason="the wings are not moved yet: run python tools/move_wings.py")
needs_script = pytest.mark.skipif(not SCRIPT.is_file(), reason="tools/move_wings.py is gone (the moves are made)")


def _script() -> ModuleType:
    spec = importlib.util.spec_from_file_location("move_wings", SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["move_wings"] = module
    spec.loader.exec_module(module)
    return module


@needs_script
def test_the_rewriter_moves_dotted_paths_registry_strings_and_file_paths() -> None:
    move_wings = _script()
    rewrite = move_wings.rewriter_for(REPO, set(move_wings.MERGES["vlaudit/scoring/run/folder.py"]))
    assert rewrite('"hf": ("vlaudit.backends.hf_mllm:load_backend", "…")') == (
        '"hf": ("vlaudit.backends.hf.mllm:load_backend", "…")')
    assert rewrite('mock.patch("vlaudit.scoring.runner.plan_run")') == 'mock.patch("vlaudit.scoring.run.runner.plan_run")'
    assert rewrite("see `backends/openai_endpoint_http.py`") == "see `backends/openai/pool.py`"
    assert rewrite("vlaudit/results/vca.py") == "vlaudit/results/vca/outputs.py"
    # the old module vlaudit.results.vca is the new package: a class of it goes to outputs, a new module stays
    assert rewrite(":class:`vlaudit.results.vca.ScoringSummary`") == ":class:`vlaudit.results.vca.outputs.ScoringSummary`"
    assert rewrite("vlaudit.results.vca.audit.RunAudit") == "vlaudit.results.vca.audit.RunAudit"
    assert rewrite("vlaudit.results.vca_audit.RunAudit") == "vlaudit.results.vca.audit.RunAudit"
    # merged pieces go to the file they joined
    assert rewrite("from vlaudit.scoring.finished_run import finished_summary") == (
        "from vlaudit.scoring.run.folder import finished_summary")
    assert rewrite("x = HFMLLMBackend; y = hf_mllm.VllmMLLMBackend") == "x = HfMllmBackend; y = hf_mllm.VllmMllmBackend"
    assert rewrite("the loader is read from vlaudit.backends.hf_mllm.") == "the loader is read from vlaudit.backends.hf.mllm."
    # names that only start like a moved module are left alone
    assert rewrite("vlaudit.backends.registry vlaudit.scoring.runners_x") == (
        "vlaudit.backends.registry vlaudit.scoring.runners_x")


@needs_script
def test_the_rewriter_splits_from_package_imports_and_keeps_the_local_name() -> None:
    move_wings = _script()
    rewrite = move_wings.rewriter_for(REPO, set())
    assert rewrite("    from vlaudit.backends import base, hf_mllm\n") == (
        "    from vlaudit.backends import base\n    from vlaudit.backends.hf import mllm as hf_mllm\n")
    assert rewrite("from vlaudit.results import (\n    columns,\n    vca_checks as checks,\n)\n") == (
        "from vlaudit.results import columns\nfrom vlaudit.results.vca import checks\n")
    text = "from vlaudit.backends import real_tokenizers\nimport vlaudit.backends.tiny_mllm as tiny\n"
    assert rewrite(rewrite(text)) == rewrite(text)  # a second run changes nothing


@needs_script
def test_a_merge_keeps_every_docstring_and_drops_the_pieces_imports_of_each_other() -> None:
    move_wings = _script()
    first = '"""The folder."""\n\nfrom __future__ import annotations\n\nimport os\n\nA = os.sep\n'
    second = ('"""The rerun."""\n\nfrom __future__ import annotations\n\nimport os\n\n'
              "from vlaudit.scoring.run_folder import A\n\n\ndef b() -> str:\n    return A + os.sep\n")
    merged = move_wings.merged_text([first, second], {"vlaudit.scoring.run_folder"})
    assert merged.startswith('"""The folder.\n\nThe rerun.\n"""\n\nfrom __future__ import annotations\n')
    assert merged.count("import os") == 1 and "run_folder" not in merged
    namespace: dict[str, object] = {}
    exec(compile(merged, "merged", "exec"), namespace)  # noqa: S102 - the known-answer merge runs
    assert namespace["b"]() == "/" + "/"  # type: ignore[operator]


@needs_layout
def test_no_flat_wing_is_left() -> None:
    backends = {p.name for p in (REPO / "vlaudit" / "backends").glob("*.py")}
    assert not {name for name in backends if name.startswith(("hf_", "vllm_", "openai_", "tiny_", "mistral_"))}
    assert not list((REPO / "vlaudit" / "results").glob("vca_*.py"))
    assert not list((REPO / "vlaudit" / "scoring").glob("run_*.py"))
    for old in ("vlaudit.backends.hf_mllm", "vlaudit.results.vca_audit", "vlaudit.scoring.runner"):
        assert importlib.util.find_spec(old) is None, old


@needs_layout
@needs_script
def test_the_move_script_says_it_is_applied() -> None:
    done = subprocess.run([sys.executable, str(SCRIPT), "--check"], cwd=REPO, capture_output=True, text=True,
                          check=True)
    assert "already applied" in done.stdout
