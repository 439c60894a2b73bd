"""A run that gave no answer is named: a planted model on items it was not built for, or any
run whose margins are tied under the image for most items, gets a warning in ``vca score``, ``vca report``
(console and ``vca.json``) and the HTML; ``models list`` says which items each planted model understands."""

from __future__ import annotations

from pathlib import Path

import benchmark_releases
import numpy as np
import pytest

import vlaudit
from vlaudit.analysis.vca.choice_run import aligned_run
from vlaudit.analysis.vca.no_answer import no_answer_warning
from vlaudit.api.input_records import as_margin_runs
from vlaudit.api.margins import Margins
from vlaudit.reference.catalogue import TRAINED_MODELS
from vlaudit.sources.margins import read_margins

SAMPLE = Path(__file__).resolve().parents[1] / "docs" / "samples" / "mmstar-sample.parquet"


def _pope_run(root: Path) -> Margins:
    """A POPE release in its published schema, scored by the scene-statement model: it reads none of POPE's
    questions ("Is there a snowboard in the image?"), so every margin is exactly 0."""
    vlaudit.build_benchmark_items("pope", benchmark_releases.pope(root), out=root / "pope.jsonl",
                                  images=root / "images")
    return vlaudit.score_margins(vlaudit.ScoreSpec.of(model="ref:scene-vqa-grounded", benchmark=root / "pope.jsonl",
                                                      images=root / "images", out=root / "run"))


def test_a_planted_model_on_pope_is_named_in_score_report_and_json(tmp_path: Path) -> None:
    margins = _pope_run(tmp_path)
    (line,) = margins.warnings
    assert line.startswith("ref:scene-vqa-grounded · pope · yesno: 3 of 3 items have margin m = 0 in every "
                           "context — no answer")
    assert "`vlaudit models list` says which items it understands" in line
    result = vlaudit.vca_report(margins, n_resamples=50)
    assert line in result.audit.warnings and line in result.audit.runs[0].warnings
    result.save(tmp_path / "report")
    assert line in (tmp_path / "report" / "vca.json").read_text(encoding="utf-8")


def test_the_command_line_prints_the_warning(cli, tmp_path: Path) -> None:
    _pope_run(tmp_path)
    status, out, _ = cli("vca", "report", str(tmp_path / "run" / "margins.parquet"), "--out",
                         str(tmp_path / "report"), "--resamples", "50", "--no-plot")
    assert status == 0 and "warning: ref:scene-vqa-grounded · pope · yesno: 3 of 3 items" in out


def test_uniform_option_log_probs_are_named_and_a_planted_run_that_answers_is_not(tmp_path: Path) -> None:
    items = tmp_path / "mmstar.jsonl"
    vlaudit.build_benchmark_items("mmstar", SAMPLE, out=items, images=tmp_path / "images")
    answering = vlaudit.score_margins(vlaudit.ScoreSpec.of(
        model="ref:scene-mcq-mixture", benchmark=items, images=tmp_path / "images", out=tmp_path / "a",
        interfaces=("letter",), contexts=("original", "text", "blank")))
    assert answering.warnings == []  # the tutorial's planted credit: answers under the image, no warning
    # the same release with questions the mechanism does not read: every option log-prob −log 4 = −1.386
    foreign = tmp_path / "foreign.jsonl"
    rows = [line.replace("Where is the", "What colour is the") for line in items.read_text().splitlines()]
    foreign.write_text("\n".join(rows) + "\n", encoding="utf-8")
    blind = vlaudit.score_margins(vlaudit.ScoreSpec.of(
        model="ref:scene-mcq-mixture", benchmark=foreign, images=tmp_path / "images", out=tmp_path / "b",
        interfaces=("letter",), contexts=("original", "text", "blank")))
    (line,) = blind.warnings
    assert "24 of 24 items have every option's log-probability equal in every context" in line
    logp = read_margins(blind.path)[0].choices.logp["original"]
    assert np.allclose(logp, -np.log(4))


def _run(margins: dict[str, list[float]]):
    rows = [{"model": "m", "dataset": "d", "item_id": f"i{k}", "context": c, "margin": v, "label": k % 2 == 0}
            for c, values in margins.items() for k, v in enumerate(values)]
    (run,) = as_margin_runs(rows)
    return aligned_run(run)


@pytest.mark.parametrize(("original", "expected"), [
    ([0.0, 0.0, 0.0, 0.0], "4 of 4 items have margin m = 0 in every context"),
    ([0.0, 0.0, 1.5, 0.0], "3 of 4 items have margin m = 0 under the image"),
    ([0.0, 0.0, 1.5, -2.0], "2 of 4 items have margin m = 0 under the image"),
    ([0.0, 0.3, 1.5, -2.0], None),
    ([1e-300, 0.3, 1.5, -2.0], None),
])
def test_the_warning_needs_half_the_items_tied_under_the_image(original, expected) -> None:
    controls = [0.0, 0.0, 0.0, 0.0] if expected and "every context" in expected else [0.1, 0.0, 0.2, 0.0]
    line = no_answer_warning(_run({"original": original, "text": controls, "blank": controls}))
    assert (line is None) if expected is None else (expected in str(line))


def test_models_list_says_which_items_each_planted_model_understands(cli) -> None:
    status, out, _ = cli("models", "list")
    assert status == 0
    joined = " ".join(out.split())
    assert joined.count("understands:") == len(TRAINED_MODELS)
    assert "ref:scene-vqa-grounded yes/no model" in joined
    assert "understands: only the statements of `data scenes` and `data factorial`" in joined
    assert "understands: only the questions of `data mcq-scenes`" in joined
