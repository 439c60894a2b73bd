"""Griffe extension: the public names of ``vlaudit`` and ``vlaudit.api`` are the one list of vlaudit/api/__init__.py.

That list is the ``if TYPE_CHECKING:`` block of vlaudit/api/__init__.py; both modules compute ``__all__`` from
it at run time, which griffe's static reading cannot evaluate, and the facade's ``from vlaudit.api import *``
is a type-checking import griffe does not expand. This extension gives both modules that list as their exports
(read by the same function the package uses) and the facade one alias per name, so ``::: vlaudit`` in
docs/reference/api.md renders every public name and only those.
"""

from __future__ import annotations

from typing import Any

import griffe

from vlaudit.api import _EXPORTS

DOORS = ("vlaudit", "vlaudit.api")


class OneDoor(griffe.Extension):
    """Set the exports of the facade and of vlaudit.api to the one list, before griffe expands them."""

    def on_module_members(self, *, mod: griffe.Module, **kwargs: Any) -> None:
        if mod.path not in DOORS:
            return
        mod.exports = list(_EXPORTS)
        if mod.path == "vlaudit":
            for name, target in _EXPORTS.items():
                if name not in mod.members:
                    mod.set_member(name, griffe.Alias(name, target.replace(":", "."), parent=mod))
