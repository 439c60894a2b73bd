"""``ref:<name>`` loaded: a trained reference through its own loader, a tiny random one through its family's.

The tiny models' builders (transformers, open_clip) are reached by import path only when a tiny model is asked
for, so loading a planted scene model imports neither (:mod:`vlaudit.reference.models` builds the tiny ones).
"""

from __future__ import annotations

from vlaudit.backends.base import Backend
from vlaudit.backends.options import BackendOptions, RunOptions
from vlaudit.backends.registry import loader_keywords, parse_spec
from vlaudit.reference.catalogue import TRAINED_MODELS, resolve

#: builds a tiny reference model into the cache (if needed) and returns its ordinary spec
REFERENCE_SPEC = "vlaudit.reference.models:reference_spec"


def load_backend(name: str, options: BackendOptions, run: RunOptions, *, seed: int = 0,
                 **wording: object) -> Backend:
    """Load ``ref:<name>``: a trained reference through its loader (which takes the options as keywords), a
    tiny one through the ordinary backend of its family. ``wording``: the yes/no loader's ``interfaces``,
    ``question_templates`` and ``weights``."""
    if name in TRAINED_MODELS:
        kind = TRAINED_MODELS[name].kind
        backend = resolve(TRAINED_MODELS[name].loader)(
            name, **loader_keywords(options, run, yesno=kind == "yesno"), **wording)
    else:
        tiny = parse_spec(resolve(REFERENCE_SPEC)(name, seed=seed))
        backend = tiny.entry.load_function()(tiny.name, options, run, **wording)
    backend.spec = f"ref:{name}"
    return backend
