"""The planted scene-VQA reference models: protocol, mechanism, retraining, and the VCA known answers."""

from __future__ import annotations

import numpy as np
import pytest

from vlaudit.backends.base import YesNoBackend, YesNoRequest
from vlaudit.builders.benchmark_items import question_for, statement_text


def _scene(tmp_path, n=12, seed=5):
    from vlaudit.builders.scenes import render_scenes
    from vlaudit.files import read_json

    render_scenes(tmp_path / "scenes", n, seed=seed)
    return tmp_path / "scenes", read_json(tmp_path / "scenes" / "scene_graphs.json")


def test_category_prior_is_antisymmetric_and_inverse_consistent():
    from vlaudit.reference.scene_vqa import PRIOR_CATEGORIES, category_prior

    for a in PRIOR_CATEGORIES:
        for b in PRIOR_CATEGORIES:
            if a == b:
                assert category_prior(a, b, "left of") is None
                continue
            assert category_prior(a, b, "left of") == (not category_prior(a, b, "right of"))
            assert category_prior(a, b, "left of") == category_prior(b, a, "right of")
            assert category_prior(a, b, "above") == category_prior(b, a, "below")
    assert category_prior("dog", "cat", "behind") is None


@pytest.mark.parametrize("name", ["scene-vqa-grounded", "scene-vqa-prior"])
def test_shipped_models_score_literal_margins(name, tmp_path):
    from PIL import Image

    from vlaudit.backends.registry import backend_kind, load_backend

    assert backend_kind(f"ref:{name}") == "yesno"
    backend = load_backend(f"ref:{name}")
    assert isinstance(backend, YesNoBackend) and backend.spec == f"ref:{name}"
    image = Image.new("RGB", (160, 120), (240, 230, 210))
    q = question_for(statement_text("dog", "to the left of", "cat"))
    requests = [YesNoRequest("a", q, image, "yesno"), YesNoRequest("b", q, None, "yesno"),
                YesNoRequest("c", q, image, "truefalse")]
    results = backend.score(requests)
    assert [r.key for r in results] == ["a", "b", "c"]
    for r in results:
        assert r.margin == pytest.approx(r.nll_no - r.nll_yes)
        assert r.nll_yes > 0 and r.nll_no > 0
    assert results[0].prompt.startswith("<image> ") and not results[1].prompt.startswith("<image>")
    assert results[2].prompt.endswith("Answer true or false:")
    assert results[1].margin == (0.0 if name == "scene-vqa-grounded" else results[0].margin)
    again = backend.score(requests[:1])[0]
    assert again.margin == results[0].margin  # deterministic
    assert backend.describe()["family"].startswith("scene-vqa")


def test_shipped_weights_are_small():
    from vlaudit.reference.scene_vqa import WEIGHTS_DIR

    total = sum(p.stat().st_size for p in WEIGHTS_DIR.iterdir() if p.is_file())
    assert 0 < total <= 4 * 2**20


def test_mixture_mechanism_is_exact(tmp_path):
    from PIL import Image

    from vlaudit.backends.options import PlantedOptions
    from vlaudit.backends.registry import ModelRef, load_backend
    from vlaudit.reference.scene_vqa import category_prior
    from vlaudit.reference.scene_vqa_mixture import IMAGE_MARGIN, PRIOR_MARGIN, image_types, parse_statement

    scenes, graphs = _scene(tmp_path)
    mixture = load_backend(ModelRef("ref:scene-vqa-mixture", PlantedOptions(scenes=str(scenes))))
    assert len(image_types()) == round(0.4 * 32)
    checked = {"image": 0, "prior": 0}
    for image_id, graph in graphs.items():
        objs = list(graph["objects"].values())
        names = [o["name"] for o in objs]
        a, b = objs[0], objs[1]
        if names.count(a["name"]) != 1 or names.count(b["name"]) != 1 or a["name"] == b["name"]:
            continue
        left = a["x"] + a["w"] / 2 < b["x"] + b["w"] / 2
        q = question_for(statement_text(a["name"], "to the left of", b["name"]))
        assert parse_statement(q) == (a["name"], "left of", b["name"])
        with Image.open(scenes / "images" / f"{int(image_id):012d}.jpg") as handle:
            image = handle.convert("RGB")
        blank = Image.new("RGB", image.size, (128, 128, 128))
        m_o, m_t, m_b = (r.margin for r in mixture.score([YesNoRequest("o", q, image), YesNoRequest("t", q, None),
                                                           YesNoRequest("b", q, blank)]))
        if mixture.reads_image(q):
            checked["image"] += 1
            assert m_o == pytest.approx(IMAGE_MARGIN if left else -IMAGE_MARGIN)
            assert m_t == 0.0 and m_b == 0.0
        else:
            checked["prior"] += 1
            prior = PRIOR_MARGIN if category_prior(a["name"], b["name"], "left of") else -PRIOR_MARGIN
            assert m_o == pytest.approx(prior) and m_t == pytest.approx(prior) and m_b == pytest.approx(prior)
    assert checked["image"] and checked["prior"]


def test_mixture_needs_its_scenes(monkeypatch):
    from vlaudit.backends.registry import load_backend
    from vlaudit.errors import InputError

    monkeypatch.delenv("VLAUDIT_MIXTURE_SCENES", raising=False)
    with pytest.raises(InputError, match="VLAUDIT_MIXTURE_SCENES"):
        load_backend("ref:scene-vqa-mixture")


def test_training_statements_carry_no_prior_for_grounded():
    """Grounded training text predicts nothing: every form is true and false equally often."""
    import tempfile
    from collections import Counter
    from pathlib import Path

    from vlaudit.builders.scenes import DEFAULT_OBJECTS, SCENE_COLORS, render_scenes
    from vlaudit.files import read_json
    from vlaudit.reference.scene_vqa_train import scene_statements

    with tempfile.TemporaryDirectory() as tmp:
        render_scenes(tmp, 60, seed=99)
        graphs = read_json(Path(tmp) / "scene_graphs.json")
    rng = np.random.default_rng(0)
    counts: Counter = Counter()
    prior_hits = []
    for graph in graphs.values():
        for q, label, *_ in scene_statements(graph, set(), rng, 20, categories=tuple(DEFAULT_OBJECTS),
                                            colors=SCENE_COLORS, prior_follow=None):
            form = "presence" if "There is" in q else ("relation" if " of the " in q or "above" in q
                                                       or "below" in q else "colour")
            counts[(form, label)] += 1
            if form == "relation":
                from vlaudit.reference.scene_vqa import category_prior
                from vlaudit.reference.scene_vqa_mixture import parse_statement

                s, r, o = parse_statement(q)
                prior_hits.append(category_prior(s, o, r) == label)
    for form in ("presence", "colour", "relation"):
        yes, no = counts[(form, True)], counts[(form, False)]
        assert abs(yes - no) / (yes + no) < 0.1, (form, yes, no)
    assert abs(np.mean(prior_hits) - 0.5) < 0.08


def test_short_retrain_moves_in_the_right_direction():
    from vlaudit.reference.scene_vqa_train import build_training_set, train_perception

    data = build_training_set("grounded", seed=3, n_scenes=40, per_image=4, factorial_per_relation=2)
    _, config, curve = train_perception(seed=3, steps=60, batch_images=8, data=data, log=lambda _: None,
                                        log_every=20)
    assert config["kind"] == "grounded-reader"
    assert curve[-1]["loss"] < curve[0]["loss"]
    assert curve[-1]["shape_acc"] > curve[0]["shape_acc"]


def test_count_prior_learns_the_planted_prior():
    """Counted on prior statements, the prior model's answer follows the category-pair prior."""
    from vlaudit.reference.scene_vqa import category_prior
    from vlaudit.reference.scene_vqa_train import PRIOR_FOLLOW, build_training_set, count_prior

    counts = count_prior(build_training_set("prior", seed=4, n_scenes=60, per_image=8, factorial_per_relation=2))
    agree = total = 0
    for key, (yes, no) in counts.items():
        kind, *rest = key.split("|")
        if kind == "relation":
            s, r, o = rest
            follows_yes = category_prior(s, o, r)
            agree += yes if follows_yes else no
            total += yes + no
    assert abs(agree / total - PRIOR_FOLLOW) < 0.1


@pytest.mark.slow  # ~15 s: the demo's whole VCA stage (quick)
def test_demo_vca_stage_known_answers(tmp_path):
    from vlaudit.demo.vca import VcaStageConfig, run_vca_stage
    from vlaudit.results.versioned import to_json

    result = run_vca_stage(tmp_path / "vca", VcaStageConfig.quick(), log=lambda _: None)
    failed = [row for row in result.known_answers if not row.passed]
    assert not failed, failed
    assert {r.model for r in result.runs} == {"ref:scene-vqa-grounded", "ref:scene-vqa-prior",
                                              "ref:scene-vqa-mixture", "ref:scene-mcq-grounded",
                                              "ref:scene-mcq-prior", "ref:scene-mcq-mixture"}
    assert {r.interface for r in result.runs if "scene-mcq" in r.model} == {"letter"}
    for run in result.runs:
        assert set(to_json(run)) >= {"model", "dataset", "interface", "n", "acc", "dep", "dcc", "cu", "ci"}
        assert run.cu is not None and run.acc is not None and run.dcc is not None
        assert run.cu == pytest.approx(run.acc - run.dcc)
    assert (tmp_path / "vca" / "scene-vqa-grounded" / "report" / "vca.json").is_file()
    assert (tmp_path / "vca" / "factorial" / "report" / "factorial.json").is_file()


def test_perception_training_is_deterministic_from_its_seed():
    from vlaudit.reference.scene_vqa_train import build_training_set, train_perception

    data = build_training_set("grounded", seed=2, n_scenes=12, per_image=2, factorial_per_relation=1)
    nets = [train_perception(seed=2, steps=4, batch_images=4, data=data, log=lambda _: None)[0] for _ in range(2)]
    first, second = (n.state_dict() for n in nets)
    assert all(bool((first[k] == second[k]).all()) for k in first)
