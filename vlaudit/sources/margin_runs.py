"""Several MARGINS tables read together for the VCA analyses (``vlaudit vca validity|filter|proxies|wording``):
one interface kept, each (model, dataset) once."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from vlaudit.errors import InputError
from vlaudit.sources.margins import MarginRun, read_margins


def read_margin_runs(paths: Sequence[str | Path], interface: str = "yesno") -> list[MarginRun]:
    """Every run of ``interface`` in the given MARGINS tables; a folder stands for its ``margins.parquet``.

    A (model, dataset) pair given twice is an error naming both files.
    """
    runs: list[MarginRun] = []
    seen: dict[tuple[str, str], str] = {}
    for path in paths:
        path = Path(path)
        if path.is_dir():
            path = path / "margins.parquet"
        if not path.exists():
            raise InputError("no such MARGINS table (or `vca score` folder with margins.parquet)", path=path)
        for run in read_margins(path):
            if run.interface != interface:
                continue
            key = (run.model, run.dataset)
            if key in seen:
                raise InputError(f"model {run.model!r}, dataset {run.dataset!r} is given twice (also in "
                                 f"{seen[key]})", path=path, field="model")
            seen[key] = str(path)
            runs.append(run)
    if not runs:
        raise InputError(f"no {interface!r} runs in {', '.join(str(p) for p in paths)}", field="interface")
    return runs
