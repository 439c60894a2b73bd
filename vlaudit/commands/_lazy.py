"""Lazy module handles: how the command modules reach the library without loading it at start-up.

``vlaudit --help`` imports every command module (typer needs their signatures) but must not load numpy,
pyarrow or torch. So a command module names the library modules it calls at module level, as handles::

    if TYPE_CHECKING:
        import vlaudit.scoring.runner as scoring_runner
    else:
        scoring_runner = lazy_module("vlaudit.scoring.runner")

and a command body calls ``scoring_runner.run_plan(...)``: the module is imported, the ordinary way, on that
first attribute access. mypy takes the ``TYPE_CHECKING`` branch, so it checks every command body against the
real module's signatures; at run time that branch never runs (import-linter and grimp skip it too). This is
the only place vlaudit defers an import for weight; below the command layer imports sit at the top of their
module (docs/architecture.md). ``tests/test_architecture.py`` checks that every handle names a module that
exists, ``tests/test_typing.py`` that every handle has its ``TYPE_CHECKING`` twin.
"""

from __future__ import annotations

import importlib
from types import ModuleType
from typing import Any


class LazyModule(ModuleType):
    """Stands for the module of the same name; every attribute is read from that module, imported on demand."""

    def __getattr__(self, attribute: str) -> Any:
        # only called for names the handle itself lacks, i.e. every name of the real module
        return getattr(importlib.import_module(self.__name__), attribute)

    def __setattr__(self, attribute: str, value: Any) -> None:
        # a handle holds nothing of its own: setting a name sets it on the real module (as monkeypatch expects)
        setattr(importlib.import_module(self.__name__), attribute, value)

    def __repr__(self) -> str:
        return f"<lazy module {self.__name__!r}>"


def lazy_module(name: str) -> ModuleType:
    """A handle on module ``name``, imported on first attribute access (nothing is imported now)."""
    return LazyModule(name)
