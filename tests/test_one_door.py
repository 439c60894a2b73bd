"""One door: the public names are one list (the ``if TYPE_CHECKING:`` block of vlaudit/api/__init__.py), and the
facade ``import vlaudit`` serves exactly that list, lazily."""

from __future__ import annotations

import subprocess
import sys

import pytest

import vlaudit
import vlaudit.api
from vlaudit.api import _exports


def test_the_facade_serves_the_api_list_and_nothing_else() -> None:
    assert vlaudit.__all__ == vlaudit.api.__all__
    assert dir(vlaudit) == sorted(vlaudit.api.__all__) == dir(vlaudit.api)
    assert len(set(vlaudit.__all__)) == len(vlaudit.__all__)
    for name in ("score_margins", "ScoreSpec", "ModelRef", "HfOptions", "InputError", "GQA_SWAP_REASONS"):
        assert getattr(vlaudit, name) is getattr(vlaudit.api, name)
    assert vlaudit.GQA_SWAP_REASONS is __import__("vlaudit.builders.cycles.gqa_rules", fromlist=["_"]).REASONS
    for door in (vlaudit, vlaudit.api):
        with pytest.raises(AttributeError, match="no attribute 'rows_of'"):
            door.rows_of  # noqa: B018


def test_a_public_name_that_is_also_a_submodule_name_stays_the_public_one() -> None:
    """``vlaudit.api.suites`` is a module and ``vlaudit.suites`` its function: importing the module (as a test or a
    library module does) sets the package attribute, and the facade still serves the function."""
    import vlaudit.api.model_registry
    import vlaudit.api.suites

    assert callable(vlaudit.suites) and vlaudit.suites.__module__ == "vlaudit.api.suites"
    assert callable(vlaudit.model_registry) and vlaudit.model_registry.__module__ == "vlaudit.api.model_registry"
    assert [row["name"] for row in vlaudit.suites()]


def test_the_list_is_read_from_a_planted_block() -> None:
    """A name made public is one import line in the block; an alias keeps its public name."""
    source = ("from typing import TYPE_CHECKING\nimport os\nif TYPE_CHECKING:\n"
              "    from vlaudit.files import write_json\n"
              "    from vlaudit.builders.cycles.gqa_rules import REASONS as SWAPS, REASONS as AGAIN\n"
              "    from vlaudit.version import __version__\n"
              "X = 1\n")
    assert _exports(source) == {"write_json": "vlaudit.files:write_json",
                                "SWAPS": "vlaudit.builders.cycles.gqa_rules:REASONS",
                                "AGAIN": "vlaudit.builders.cycles.gqa_rules:REASONS",
                                "__version__": "vlaudit.version:__version__"}


@pytest.mark.parametrize("line", ["import vlaudit.files", "from . import files", "X = 1"])
def test_the_list_refuses_what_is_not_a_from_import(line: str) -> None:
    with pytest.raises(TypeError, match="only absolute `from vlaudit.MODULE import NAME` lines"):
        _exports(f"from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    {line}\n")


def test_a_name_loads_only_its_own_module() -> None:
    """The door stays lazy: reading one light name imports its module, not the heavy ones of the others."""
    code = ("import sys, vlaudit\n"
            "assert vlaudit.InputError.__name__ == 'InputError'\n"
            "assert vlaudit.__version__\n"
            "print(sorted(m for m in ('numpy', 'torch', 'pandas', 'transformers') if m in sys.modules))\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "[]"
