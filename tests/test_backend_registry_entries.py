"""The backend registry holds one frozen entry per prefix, registered once; a model spec is cut only by the
parser (``parse_spec``), and ``vlaudit models list`` prints what the entries say.

Registering each backend once with everything about it follows inspect_ai's ``@modelapi``
(UKGovernmentBEIS/inspect_ai @ 3f5bf2b3 : src/inspect_ai/model/_registry.py)."""

from __future__ import annotations

import ast
import importlib.util
import pickle
import tomllib
from pathlib import Path

import pytest

import vlaudit
from vlaudit.api.model_registry import ModelRegistry, backend_row, model_registry
from vlaudit.backends import registry
from vlaudit.backends.options import DualOptions, EndpointOptions, HfOptions, PlantedOptions, VllmOptions
from vlaudit.backends.registry import (
    REGISTRY,
    BackendEntry,
    BackendRegistry,
    ModelRef,
    UnknownBackendError,
    backend_entries,
    backend_kind,
    load_text_backend,
    options_classes,
    parse_spec,
    parse_spec_or_none,
    register,
    require_kind,
)
from vlaudit.errors import InputError

PACKAGE = Path(vlaudit.__file__).parent
ROOT = PACKAGE.parent

#: the prefixes in the order registered (the order every "one of ..." message lists them in)
PREFIXES = ("hf", "hf-clip", "open_clip", "ref", "openai", "vllm", "hf-lm")

#: where ``.partition(":")`` may cut a string: the spec parser, and a VL-CheckList ``key: value`` line
#: (not a model spec)
ALLOWED_CUTS = {("vlaudit/backends/registry.py", "parse_spec_or_none"),
                ("vlaudit/sources/suites/vl_checklist.py", "read_corpus_yaml")}


def _entry(prefix: str) -> BackendEntry:
    entry = REGISTRY.get(prefix)
    assert entry is not None, prefix
    return entry


def test_one_entry_per_prefix_in_registration_order() -> None:
    entries = backend_entries()
    assert tuple(e.prefix for e in entries) == PREFIXES
    assert tuple(e.prefix for e in backend_entries(text=True)) == ("hf-lm",)
    assert registry.available_backends() == "hf:, hf-clip:, open_clip:, ref:, openai:, vllm:"
    assert {e.prefix for e in entries if e.config_only} == {"hf", "vllm"}
    assert {e.prefix for e in entries if e.images_of} == {"hf", "openai"}
    assert {e.prefix: dict(e.options_by_kind) if e.options_by_kind else e.options for e in entries} == {
        "hf": (HfOptions,), "hf-clip": (DualOptions,), "open_clip": (DualOptions,),
        "ref": {"yesno": (HfOptions, PlantedOptions), "features": (DualOptions,)},
        "openai": (EndpointOptions,), "vllm": (VllmOptions,), "hf-lm": ()}


def test_every_named_function_exists_without_importing_its_module() -> None:
    """Each ``module:function`` of an entry names a module on the path that defines the function (read from
    its source: resolving the names would import torch)."""
    for entry in backend_entries():
        for target in (entry.loader, entry.kind, entry.images_of, entry.unknown_name):
            if target is None or ":" not in target:
                continue
            module, function = target.split(":")
            found = importlib.util.find_spec(module)
            assert found is not None and found.origin is not None, target
            assert f"def {function}(" in Path(found.origin).read_text(encoding="utf-8"), target


def test_a_prefix_is_registered_once() -> None:
    fresh = BackendRegistry()
    first = BackendEntry("toy", "toy.module:load_backend", "features", "a toy", options=(DualOptions,))
    assert fresh.register(first) is first
    with pytest.raises(ValueError, match=r"backend prefix toy: is registered twice \(toy.module:load_backend "
                                         r"and other:load_backend\)"):
        fresh.register(BackendEntry("toy", "other:load_backend", "features", "another", options=(DualOptions,)))
    assert fresh.entries() == (first,)
    before = backend_entries()
    with pytest.raises(ValueError, match="registered twice"):
        register(_entry("hf"))
    assert backend_entries() == before


@pytest.mark.parametrize(("keywords", "message"), [
    ({"prefix": "a:b"}, "a non-empty word without ':'"),
    ({"prefix": ""}, "a non-empty word without ':'"),
    ({"kind": "embeddings"}, "expected one of yesno, features, text or 'module:function'"),
    ({"options": ()}, "takes options classes"),
    ({"kind": "m:kind_of"}, "give options_by_kind for each"),
])
def test_a_malformed_entry_is_refused(keywords: dict[str, object], message: str) -> None:
    settings: dict[str, object] = {"prefix": "toy", "loader": "m:f", "kind": "features", "summary": "s",
                                   "options": (DualOptions,)} | keywords
    with pytest.raises(ValueError, match=message):
        BackendEntry(**settings)  # type: ignore[arg-type]  # the malformed values are the point


@pytest.mark.parametrize(("spec", "prefix", "name", "options"), [
    ("hf:Qwen/Qwen2-VL-2B-Instruct", "hf", "Qwen/Qwen2-VL-2B-Instruct", HfOptions),
    ("openai:http://127.0.0.1:8000/v1#Qwen/Qwen2-VL-7B-Instruct", "openai",
     "http://127.0.0.1:8000/v1#Qwen/Qwen2-VL-7B-Instruct", EndpointOptions),
    ("open_clip:local-dir:/m", "open_clip", "local-dir:/m", DualOptions),
    ("ref:tiny-clip", "ref", "tiny-clip", DualOptions),
    ("ref:tiny-qwen2-vl", "ref", "tiny-qwen2-vl", HfOptions),
])
def test_a_model_ref_carries_its_parsed_spec(spec: str, prefix: str, name: str, options: type) -> None:
    ref = ModelRef(spec)
    assert (ref.prefix, ref.name, ref.entry) == (prefix, name, _entry(prefix))
    assert type(ref.options) is options
    parsed = parse_spec(spec)
    assert (parsed.prefix, parsed.name, parsed.entry, str(parsed)) == (prefix, name, _entry(prefix), spec)


def test_a_model_ref_parses_its_spec_once(monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[str] = []
    real = registry.parse_spec
    monkeypatch.setattr(registry, "parse_spec", lambda spec, **kw: calls.append(spec) or real(spec, **kw))
    ref = ModelRef("hf:/models/m")
    assert (ref.prefix, ref.name, ref.entry.prefix, ref.prefix, ref.name) == ("hf", "/models/m", "hf", "hf",
                                                                            "/models/m")
    assert calls == ["hf:/models/m"]
    # what makes two refs the same is the spec and options (the parse is no field), and it survives a pickle
    # (a Ray actor receives its ref so)
    again = pickle.loads(pickle.dumps(ref))
    assert again == ref == ModelRef("hf:/models/m", HfOptions()) and again.entry == ref.entry
    assert "parsed" not in repr(ref)


def test_the_public_functions_read_the_entries() -> None:
    assert [backend_kind(s) for s in ("hf:x", "vllm:x", "openai:u#m", "hf-clip:x", "open_clip:x",
                                      "ref:tiny-open-clip", "ref:scene-vqa-grounded")] == \
        ["yesno", "yesno", "yesno", "features", "features", "features", "yesno"]
    assert options_classes("ref:scene-vqa-grounded") == (HfOptions, PlantedOptions)
    assert options_classes("ref:scene-clip-spatial") == (DualOptions,)
    assert registry.max_images_of(ModelRef("ref:tiny-clip")) == 1
    with pytest.raises(InputError, match=r"unknown reference multimodal LLM 'tiny-qwen2vl' \(did you mean "
                                         r"'tiny-qwen2-vl'\?\)"):
        require_kind("ref:tiny-qwen2vl", "yesno")
    with pytest.raises(InputError, match=r"'hf-clip:x' is not a multimodal LLM"):
        require_kind("hf-clip:x", "yesno")


@pytest.mark.parametrize("spec", ["hf-lm:gpt2", "nosuch:thing", "hf:", "hf", ":x"])
def test_an_image_text_spec_of_no_such_prefix_lists_the_prefixes(spec: str) -> None:
    with pytest.raises(UnknownBackendError) as caught:
        parse_spec(spec)
    assert str(caught.value) == (f"unknown model spec {spec!r}; expected PREFIX:NAME with PREFIX one of hf:, "
                                 "hf-clip:, open_clip:, ref:, openai:, vllm: ('vlaudit models list' says what "
                                 "each serves)")


def test_text_specs_parse_apart() -> None:
    parsed = parse_spec("hf-lm:gpt2", text=True)
    assert (parsed.prefix, parsed.name, parsed.kind) == ("hf-lm", "gpt2", "text")
    with pytest.raises(InputError, match=r"unknown text model spec 'hf:gpt2'; expected PREFIX:NAME with PREFIX "
                                         r"one of hf-lm:") as caught:
        load_text_backend("hf:gpt2")
    assert caught.value.field == "--lm"
    assert parse_spec_or_none("fake:bright") is None and parse_spec_or_none("hf:") is None
    assert parse_spec_or_none("hf-lm:gpt2") == parsed


def _cuts(source: str, path: str) -> set[tuple[str, str]]:
    """(path, enclosing function) of every ``x.partition(":")`` / ``x.rpartition(":")`` in ``source``."""
    found: set[tuple[str, str]] = set()

    def visit(node: ast.AST, function: str) -> None:
        for child in ast.iter_child_nodes(node):
            inner = child.name if isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef) else function
            if (isinstance(child, ast.Call) and isinstance(child.func, ast.Attribute)
                    and child.func.attr in ("partition", "rpartition") and child.args
                    and isinstance(child.args[0], ast.Constant) and child.args[0].value == ":"):
                found.add((path, function))
            visit(child, inner)

    visit(ast.parse(source), "<module>")
    return found


def test_no_code_cuts_a_model_spec_outside_the_parser() -> None:
    """Every ``partition(":")`` in the package is the registry's parser (or the one VL-CheckList line reader,
    not a model spec): the rest ask :func:`parse_spec` or a :class:`ModelRef`."""
    assert _cuts('def f(spec):\n    return spec.partition(":")[2]\n', "x.py") == {("x.py", "f")}
    assert _cuts("g = lambda s: s.rpartition(':')\n", "y.py") == {("y.py", "<module>")}
    found: set[tuple[str, str]] = set()
    for file in sorted(PACKAGE.rglob("*.py")):
        found |= _cuts(file.read_text(encoding="utf-8"), file.relative_to(ROOT).as_posix())
    assert ("vlaudit/backends/registry.py", "parse_spec_or_none") in found
    assert found <= ALLOWED_CUTS, sorted(found - ALLOWED_CUTS)


def test_models_list_prints_every_entry(cli) -> None:
    """Each entry's spec, kind, options classes and summary, as the entries hold them."""
    assert backend_row(_entry("ref")) == ("ref:<name>", "yesno/features (by name)",
                                          "yesno: HfOptions, PlantedOptions; features: DualOptions",
                                          "vlaudit's own small reference models")
    assert backend_row(_entry("hf-lm"))[1:3] == ("text", None)
    assert model_registry().backends == [backend_row(e) for e in backend_entries()]
    assert ModelRegistry.BACKEND_COLUMNS == ("spec", "kind", "options", "serves")
    code, out, _ = cli("models", "list")
    assert code == 0
    joined = " ".join(out.split())
    for entry in backend_entries():
        spec, kind, options, summary = backend_row(entry)
        assert spec in joined and kind in joined and " ".join(summary.split()) in joined, entry.prefix
        classes = (*entry.options, *(c for group in entry.options_by_kind.values() for c in group))
        assert all(c.__name__ in joined for c in classes), entry.prefix
        assert options is None or options in joined, entry.prefix


def test_each_extra_is_a_pyproject_extra_the_missing_package_names() -> None:
    """An entry's pip extra is one of pyproject.toml's, and the backend's own message for a missing package
    names the same install line."""
    pyproject = ROOT / "pyproject.toml"
    if not pyproject.is_file():  # pragma: no cover - an installed package without its sources
        pytest.skip("pyproject.toml is not beside the package")
    extras = tomllib.loads(pyproject.read_text(encoding="utf-8"))["project"]["optional-dependencies"]
    with_extra = [e for e in backend_entries() if e.extra is not None]
    assert [e.prefix for e in with_extra] == ["openai"]
    backend_sources = [p.read_text(encoding="utf-8") for p in (PACKAGE / "backends").rglob("*.py")
                       if p.name != "registry.py"]
    for entry in with_extra:
        assert entry.extra in extras and entry.install == f"pip install 'vlaudit[{entry.extra}]'"
        assert any(str(entry.install) in source for source in backend_sources), entry.prefix
    assert all(e.install is None for e in backend_entries() if e.extra is None)
