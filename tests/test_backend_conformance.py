"""Every registered backend passes the same named conformance checks (the model is
scikit-learn's ``check_estimator``): protocol, describe, shapes/dtypes, determinism, batch-order invariance,
and — for yes/no backends — the verbalizer ids that ``vlaudit models verbalizers`` reports.

The registry's prefixes are reached through the reference models (``ref:tiny-*`` load through ``hf:``,
``hf-clip:`` and ``open_clip:``; the planted ones through their own loaders), plus ``hf:`` folders of the tiny
families no reference model uses (Gemma 3, InternVL, and Ministral: the mistral-common path of ``hf:``). All offline: tiny models are built from config into a temporary cache.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from PIL import Image

from vlaudit.backends.base import FeatureBackend, YesNoBackend
from vlaudit.backends.conformance import FEATURE_CHECKS, YES_NO_CHECKS, check_backend, yes_no_requests
from vlaudit.backends.options import PlantedOptions, RunOptions
from vlaudit.backends.registry import BackendLoad, ModelRef, backend_entries, backend_kind, parse_spec
from vlaudit.backends.tiny.families import MLLM_FAMILIES
from vlaudit.reference.models import REFERENCE_MODELS, all_reference_names, reference_spec

pytestmark = pytest.mark.usefixtures("one_torch_thread")

INTERFACES = ("yesno", "truefalse")
QUESTIONS = ("Is the red circle to the left of the blue square?", "Is the dog above the chair?")
TEXTS = ("a red circle left of a blue square", "a dog above a chair", "a cat", "two people on a bench")
MIXTURES = ("scene-vqa-mixture", "scene-vqa-reader", "scene-vqa-prior-table")
#: every tiny MLLM family no reference model reaches (Ministral: the mistral-common path of hf:)
HF_ONLY_FAMILIES = [f for f in MLLM_FAMILIES if f not in {family for _, family in REFERENCE_MODELS.values()}]
#: every registered backend: the reference models, and hf: of the other tiny families
CASES = [f"ref:{name}" for name in all_reference_names()] + [f"hf:tiny-{f}" for f in HF_ONLY_FAMILIES]


@pytest.fixture(scope="module")
def module_cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("conformance")


@pytest.fixture(scope="module")
def scenes(module_cache: Path) -> Path:
    """A few procedural scenes: the images every backend sees, and what the mixture models read."""
    from vlaudit.builders.scenes import render_scenes

    render_scenes(module_cache / "scenes", 3, seed=11)
    return module_cache / "scenes"


@pytest.fixture(scope="module")
def images(scenes: Path) -> list[Image.Image]:
    out = []
    for path in sorted((scenes / "images").glob("*.jpg"))[:2]:
        with Image.open(path) as handle:
            out.append(handle.convert("RGB"))
    return out


_LOADED: dict[str, object] = {}


def _spec_and_options(case: str, cache: Path, scenes: Path) -> BackendLoad:
    """The model to load and how (a tiny folder or the mixture's scenes where needed)."""
    if case.startswith("hf:tiny-"):
        family = case.removeprefix("hf:tiny-")
        if family == "ministral":
            pytest.importorskip("mistral_common", reason="the [ministral] extra is not installed")
        from vlaudit.backends.tiny.mllm import build_tiny_mllm

        folder = cache / case.removeprefix("hf:")
        if not folder.is_dir():
            build_tiny_mllm(family, folder, seed=0)
        return BackendLoad(ModelRef(f"hf:{folder}"), RunOptions(device="cpu"), interfaces=tuple(INTERFACES))
    name = case.removeprefix("ref:")
    model = ModelRef(case, PlantedOptions(scenes=str(scenes))) if name in MIXTURES else ModelRef(case)
    if backend_kind(case) == "features":
        return BackendLoad(model, RunOptions(device="cpu") if name in REFERENCE_MODELS else None)
    return BackendLoad(model, RunOptions(device="cpu"), interfaces=tuple(INTERFACES))


@pytest.fixture
def backend(request: pytest.FixtureRequest, module_cache: Path, scenes: Path,
            monkeypatch: pytest.MonkeyPatch) -> object:
    """The loaded backend of the test's case (loaded once per module)."""
    monkeypatch.setenv("VLAUDIT_CACHE", str(module_cache / "ref-cache"))
    case = request.param
    load = _spec_and_options(case, module_cache, scenes)
    if case not in _LOADED:
        _LOADED[case] = load.load()
    return _LOADED[case]


#: prefixes whose backend needs a server, checked with check_backend where one runs
CHECKED_ELSEWHERE = {"openai": "tests/test_openai_endpoint.py, against a loopback server of the tests' own",
                     "vllm": "tests/vllm/test_vllm_backend.py (check_backend on a real engine, in the vLLM venv)"}
YES_NO_CASES = [c for c in CASES if backend_kind(c) == "yesno"]
FEATURE_CASES = [c for c in CASES if c not in YES_NO_CASES]


def test_the_cases_cover_every_registered_backend(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """A new prefix or reference model without a conformance case fails here."""
    monkeypatch.setenv("VLAUDIT_CACHE", str(tmp_path))
    assert {c.removeprefix("ref:") for c in CASES if c.startswith("ref:")} == set(all_reference_names())
    reached = {"ref"} | {parse_spec(reference_spec(name)).prefix for name in REFERENCE_MODELS}
    assert reached | set(CHECKED_ELSEWHERE) == {entry.prefix for entry in backend_entries(text=False)}


@pytest.mark.parametrize("check", list(YES_NO_CHECKS))
@pytest.mark.parametrize("backend", YES_NO_CASES, indirect=True)
def test_yes_no_backend_conforms(backend: YesNoBackend, check: str, images: list[Image.Image]) -> None:
    YES_NO_CHECKS[check](backend, yes_no_requests(images, QUESTIONS, INTERFACES))


@pytest.mark.parametrize("check", list(FEATURE_CHECKS))
@pytest.mark.parametrize("backend", FEATURE_CASES, indirect=True)
def test_feature_backend_conforms(backend: FeatureBackend, check: str, images: list[Image.Image]) -> None:
    FEATURE_CHECKS[check](backend, images, TEXTS)


@pytest.mark.parametrize("backend", YES_NO_CASES, indirect=True)
def test_verbalizer_ids_are_what_models_verbalizers_reports(backend: YesNoBackend, cli, module_cache: Path,
                                                            scenes: Path, monkeypatch: pytest.MonkeyPatch,
                                                            images: list[Image.Image]) -> None:
    spec = backend.spec  # hf:FOLDER for a tiny family
    monkeypatch.setenv("VLAUDIT_MIXTURE_SCENES", str(scenes))
    code, out, err = cli("models", "verbalizers", spec, "--interface", ",".join(INTERFACES))
    assert code == 0, err
    found = re.search(r"token ids \(yesno, truefalse\): (\d+)/(\d+)/(\d+)/(\d+)", out)
    assert found, out
    reported = [int(v) for v in found.groups()]
    assert reported == [i for name in INTERFACES for i in backend.verbalizer_ids[name]]
    for result, request in zip(backend.score(yes_no_requests(images[:1], QUESTIONS[:1], INTERFACES)),
                               yes_no_requests(images[:1], QUESTIONS[:1], INTERFACES), strict=True):
        assert (result.yes_token_id, result.no_token_id) == tuple(backend.verbalizer_ids[request.interface])


def test_check_backend_names_the_broken_property(images: list[Image.Image]) -> None:
    """A backend whose margin depends on its batch position fails 'batch_order' with a message saying so."""
    from vlaudit.backends.base import YesNoBackendBase, YesNoResult
    from vlaudit.backends.conformance import ConformanceError
    from vlaudit.hashing import sha256_text

    class PositionDependent(YesNoBackendBase):
        spec = "fake:position"
        verbalizer_ids = dict.fromkeys(INTERFACES, (0, 1))

        def describe(self) -> dict:
            return {"spec": self.spec}

        def prompt(self, question: str, interface: str, with_image: bool) -> str:
            return question

        def score(self, requests):
            return [YesNoResult(r.key, 0.0, float(i), float(i), 0, 1, r.question, sha256_text(r.question), 1)
                    for i, r in enumerate(requests)]

    with pytest.raises(ConformanceError, match="fake:position: check 'batch_order'"):
        check_backend(PositionDependent(), images, questions=QUESTIONS, interfaces=INTERFACES)
    with pytest.raises(ConformanceError, match="check 'protocol'.*lacks.*verbalizer_ids"):
        YES_NO_CHECKS["protocol"](object.__new__(type("NoIds", (YesNoBackendBase,), {})), [])


def test_the_runner_and_the_extractor_refuse_a_backend_that_lacks_a_member(tmp_path: Path) -> None:
    """A user's own backend missing a protocol member is refused up front, naming what it lacks."""
    from vlaudit.errors import InputError
    from vlaudit.scoring.features import FeatureInputs, write_features
    from vlaudit.scoring.run.runner import run_scoring

    class OnlyScores:
        spec = "fake:only-scores"

        def score(self, requests):
            return []

    with pytest.raises(InputError, match=r"OnlyScores is not a YesNoBackend: it lacks .*prefetch_prompts, "
                                         r"prepare.*YesNoBackendBase"):
        run_scoring(OnlyScores(), [], images_dir=tmp_path, out_dir=tmp_path / "run", contexts=["original"],
                    interfaces=["yesno"])
    with pytest.raises(InputError, match="OnlyScores is not a FeatureBackend: it lacks batch_size, describe"):
        write_features(OnlyScores(), FeatureInputs(), tmp_path / "features")
    assert not (tmp_path / "run").exists() and not (tmp_path / "features").exists()
