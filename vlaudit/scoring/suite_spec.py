"""The run spec of ``vlaudit suite eval`` / :func:`vlaudit.evaluate_suite` (as :mod:`vlaudit.scoring.run.spec`).

One spec scores one suite file with one model into one output folder: its score run lives in ``OUT/features``
(a dual encoder) or ``OUT/run`` (a yes/no MLLM, with the chunk cache), whose manifest records
:meth:`SuiteEvalSpec.recorded`. A rerun with the same spec resumes (an MLLM from its cache) or reads the
finished scores back; another spec into the same folder is refused naming the differing fields, unless
``overwrite``; the operational fields (batch size, device, chunk size) may change freely.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import ClassVar

from vlaudit.backends.model_options import model_ref as options_model_ref
from vlaudit.backends.registry import backend_kind
from vlaudit.hashing import sha256_file
from vlaudit.scoring.run.folder import resolved_model_spec, resolved_path
from vlaudit.scoring.run.parts import ModelRef, RunOptions, operational_names
from vlaudit.scoring.suite_scores import FEATURES_DIR, RUN_DIR


def model_ref(model: str | ModelRef, dtype: str = "auto") -> ModelRef:
    """``model`` as a ModelRef; ``dtype`` other than ``auto`` goes to its backend's options, checked as every
    backend option is (:func:`vlaudit.backends.model_options.model_ref`: refused naming the backend when they
    have no dtype, or when a ModelRef already holds its own options)."""
    return options_model_ref(model, {} if dtype == "auto" else {"dtype": dtype})


@dataclass(frozen=True)
class SuiteEvalSpec:
    """``suite eval``: suite ``suite`` (a registry name) read from ``file`` with reader ``options``, images in
    ``images``, scored by ``model`` into ``out``; ``query`` the yes/no question of an MLLM (one ``{caption}``)."""

    FOLDER_OPTION: ClassVar[str] = "--out"
    CACHED: ClassVar[bool] = True
    COMMAND: ClassVar[str] = "suite eval"
    OPERATIONAL: ClassVar[frozenset[str]] = operational_names(("out",))

    suite: str
    file: Path
    images: Path
    out: Path
    model: ModelRef
    query: str | None = None
    options: Mapping[str, object] = field(default_factory=dict)
    run: RunOptions = RunOptions()

    def __post_init__(self) -> None:
        for name in ("file", "images", "out"):
            object.__setattr__(self, name, Path(getattr(self, name)))
        used = ("batch_size", "device") if self.kind == "features" else ("batch_size", "chunk_size", "device")
        self.run.check_used(used, self.COMMAND)

    @property
    def kind(self) -> str:
        """``"features"`` (a dual encoder) or ``"yesno"`` (an MLLM), from the model spec."""
        return backend_kind(self.model.spec)

    def run_folder(self) -> Path:
        """Where the score run lives: ``OUT/features`` or ``OUT/run``."""
        return self.out / (FEATURES_DIR if self.kind == "features" else RUN_DIR)

    def batch_size(self) -> int:
        return self.run.batch_size or (32 if self.kind == "features" else 8)

    def recorded(self, query: str | None) -> dict[str, object]:
        """The manifest's ``arguments`` (``query``: the checked query of an MLLM, None for a dual encoder)."""
        options = self.model.backend_options
        return {"command": self.COMMAND, "suite": self.suite, "file": resolved_path(self.file),
                "file_sha256": sha256_file(self.file) if self.file.is_file() else None,
                "reader_options": {k: str(v) for k, v in sorted(self.options.items())},
                "images": resolved_path(self.images), "out": resolved_path(self.out),
                "model": resolved_model_spec(self.model.spec), "query": query,
                "dtype": str(getattr(options, "dtype", "auto")), "batch_size": self.batch_size(),
                "device": self.run.device, "chunk_size": self.run.chunk_size}
