"""Running the real entry point in-process (its error handling included), for tests of what a user sees."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest


def run_main(args: list[str], capsys: pytest.CaptureFixture, monkeypatch: pytest.MonkeyPatch
             ) -> tuple[int, str, str]:
    """``vlaudit ARGS`` through :func:`vlaudit.cli.main`: (exit status, stdout, stderr)."""
    from vlaudit.cli import main

    monkeypatch.setattr(sys, "argv", ["vlaudit", *args])
    code = 0
    try:
        main()
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
    out, err = capsys.readouterr()
    return code, out, err


def one_error_line(code: int, out: str, err: str) -> str:
    """The single ``error: …`` line of a refused command (exit 2, nothing else on stderr, no traceback)."""
    assert code == 2, (code, out, err)
    assert "Traceback" not in out + err, err
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), err
    return lines[0]


def files_under(root: Path) -> list[str]:
    """Every file below ``root`` as a sorted list of relative paths."""
    return sorted(str(p.relative_to(root)) for p in root.rglob("*") if p.is_file())


def toy_items(root: Path, n_images: int = 2, missing: int = 0) -> Path:
    """ROOT/items.jsonl and ROOT/images/: per image one same-image yes/no group of two items (``missing``
    more images are named by items but have no file). What `vca score` and `vca score-dual` both take."""
    import json

    from PIL import Image

    (root / "images").mkdir(parents=True)
    rows = []
    for i in range(n_images + missing):
        if i < n_images:
            Image.new("RGB", (32 + 8 * i, 24), (40 * i, 90, 200)).save(root / "images" / f"img{i}.png")
        for j, label in enumerate(("yes", "no")):
            rows.append({"item_id": f"i{i}_{j}", "image": f"img{i}.png", "question": f"Is the cat left {j}?",
                         "label": label, "group_id": f"g{i}", "dataset": "toy", "split": "test"})
    path = root / "items.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path
