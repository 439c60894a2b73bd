"""The run manifest: one type for every ``manifest.json`` vlaudit writes (a leaf module).

A run folder (``vca score``, ``vca score-dual``, ``cycles score-mllm``, ``features``) and a built dataset
(``data factorial``) describe themselves with one :class:`RunManifest`: the schema version, the command, its
arguments as recorded (for a run, its spec: resolved paths and content fingerprints,
:mod:`vlaudit.scoring.run.spec`), what the command adds (model id, revision, dtype, pixel budget, prompt
template hash, context constants, counts, a dataset's image hashes, ...), the package versions and the git
commit of vlaudit. It is written by one writer, :func:`vlaudit.files.write_manifest`. It lives here, below
``builders/`` and ``scoring/``, so that both can write it.
"""

from __future__ import annotations

import subprocess
from collections.abc import Mapping
from dataclasses import dataclass, field
from importlib import metadata
from pathlib import Path
from typing import Protocol, runtime_checkable

from vlaudit.errors import InputError
from vlaudit.results.versioned import JsonObject, JsonValue, check_schema_version, to_json

MANIFEST_FILE = "manifest.json"
#: 1: the fields of :class:`RunManifest` (earlier manifests carry no ``schema_version``)
MANIFEST_SCHEMA_VERSION = 1
#: the keys every manifest has (a record's keys are written beside them)
MANIFEST_KEYS = ("schema_version", "command", "arguments", "packages", "git_commit")

PACKAGES = ("vlaudit", "torch", "transformers", "tokenizers", "pillow", "numpy", "pyarrow", "open_clip_torch")


def package_versions() -> dict[str, str | None]:
    versions: dict[str, str | None] = {}
    for name in PACKAGES:
        try:
            versions[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            versions[name] = None
    return versions


def git_commit() -> str | None:
    """HEAD of the checkout vlaudit runs from (None outside a git checkout)."""
    root = Path(__file__).resolve().parents[2]
    try:
        done = subprocess.run(["git", "-C", str(root), "rev-parse", "HEAD"], capture_output=True, text=True,
                              timeout=10, check=False)
    except (OSError, subprocess.SubprocessError):
        return None
    return done.stdout.strip() or None if done.returncode == 0 else None


@runtime_checkable
class ManifestRecord(Protocol):
    """A command's typed record (:class:`~vlaudit.results.scoring_record.ScoringRunRecord`, the records of
    :mod:`vlaudit.results.run_records`): ``to_dict()`` gives its keys, in order, as written at the top level."""

    def to_dict(self) -> JsonObject: ...


def _object(value: JsonValue, *, path: str | Path, name: str) -> JsonObject:
    if value is None:
        return {}
    if not isinstance(value, Mapping):
        raise InputError("must be a JSON object", path=path, field=name)
    return {str(key): item for key, item in value.items()}


def _text(value: JsonValue, *, path: str | Path, name: str) -> str | None:
    if value is None or isinstance(value, str):
        return value
    raise InputError("must be text or null", path=path, field=name)


@dataclass(frozen=True)
class RunManifest:
    """A run folder's ``manifest.json``.

    ``record`` holds what the command adds; its keys are written at the top level beside the common ones
    (the readers of a run — the factorial analysis, the HTML report, ``read_features`` — read them there).
    A command's record is typed (a :class:`ManifestRecord`: a yes/no scoring run's
    :class:`~vlaudit.results.scoring_record.ScoringRunRecord`, a features folder's, a ``vca score-dual`` run's
    and the ``data factorial`` dataset's in :mod:`vlaudit.results.run_records`) or an open mapping; a manifest
    read back holds an open mapping (each record's ``from_dict`` reads its own from it). ``arguments`` is open
    (each command records its own spec): values JSON can hold, or paths and numpy scalars, written as JSON by
    :func:`~vlaudit.results.versioned.to_json` (a manifest read back holds JSON values only); ``packages`` maps a package to its installed version (None: not installed).
    """

    command: str
    arguments: Mapping[str, object]
    record: ManifestRecord | Mapping[str, object] = field(default_factory=dict)
    packages: dict[str, str | None] = field(default_factory=package_versions)
    git_commit: str | None = field(default_factory=git_commit)
    schema_version: int = MANIFEST_SCHEMA_VERSION

    def __post_init__(self) -> None:
        clash = sorted(set(self.record_items()) & set(MANIFEST_KEYS))
        if clash:
            raise ValueError(f"a manifest record may not redefine {clash}")

    def to_dict(self) -> JsonObject:
        return {"schema_version": self.schema_version, "command": self.command,
                **{key: to_json(value) for key, value in self.record_items().items()},
                "arguments": to_json(self.arguments), "packages": to_json(self.packages),
                "git_commit": self.git_commit}

    def record_items(self) -> Mapping[str, object]:
        """The record's keys and values as written at the manifest's top level."""
        return self.record.to_dict() if isinstance(self.record, ManifestRecord) else self.record

    @classmethod
    def from_dict(cls, data: Mapping[str, JsonValue], *, path: str | Path = "<manifest>") -> RunManifest:
        """Read a manifest back (one written before ``schema_version`` existed reads as version 0; one from a
        newer vlaudit is refused); a field of the wrong kind is an InputError naming it."""
        version = check_schema_version(data, MANIFEST_SCHEMA_VERSION, path=path, what="a run manifest", oldest=0)
        arguments = _object(data.get("arguments"), path=path, name="arguments")
        command = _text(data.get("command"), path=path, name="command") or \
            _text(arguments.get("command"), path=path, name="arguments.command") or ""
        packages = {name: _text(value, path=path, name=f"packages.{name}")
                    for name, value in _object(data.get("packages"), path=path, name="packages").items()}
        return cls(command=command, arguments=arguments, record={k: v for k, v in data.items() if k not in MANIFEST_KEYS},
                   packages=packages, git_commit=_text(data.get("git_commit"), path=path, name="git_commit"),
                   schema_version=version)
