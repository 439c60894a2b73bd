"""The HTML report says a thing once: the tie rule of 18 runs in one box (not 18 near-identical boxes), and a
noise floor measured for no run in one line (not a table of dashes whose reason runs off the page)."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

from vlaudit.analysis.vca.report import tie_warning
from vlaudit.report.html_sections import noise_table, run_warnings
from vlaudit.results.missing import Missing

NOT_MEASURED = Missing("noise floor not measured (run `vlaudit vca stability RUN` on the scoring run)")


def _run(model: str, interface: str, warnings: list[str], noise: Any = NOT_MEASURED) -> Any:
    return SimpleNamespace(model=model, dataset="vsr-like", interface=interface, noise=noise,
                           audit=SimpleNamespace(warnings=warnings), rate=lambda name: 0.5)


def _name(model: str, interface: str) -> str:
    return f"run (model='{model}', dataset='vsr-like', interface='{interface}')"


def test_the_tie_rule_of_many_runs_is_one_box_naming_each_run() -> None:
    pairs = [(m, i) for m in ("ref:a", "ref:b", "ref:c") for i in ("yesno", "truefalse")]
    runs = [_run(m, i, [tie_warning(_name(m, i), {"strict": 10 + k}, 150, labelled=True) or "",
                        "run (model='x'): 3 items excluded"]) for k, (m, i) in enumerate(pairs)]
    html = "".join(str(part) for part in run_warnings(runs))
    assert html.count("ties decide") == 1 and html.count("is no decision") == 1
    assert html.count('class="note warn"') == 2  # the tie box and the one other warning (once, as before)
    for k, (m, i) in enumerate(pairs):
        assert f"interface=&#x27;{i}&#x27;): Strict on {10 + k} of 150 items" in html and m in html
    assert html.index("ties decide") < html.index("3 items excluded")  # in the place of the first


def test_a_single_runs_tie_warning_reads_as_before() -> None:
    line = tie_warning(_name("ref:a", "yesno"), {"strict": 4}, 20, labelled=True)
    assert line is not None
    (box,) = run_warnings([_run("ref:a", "yesno", [line])])
    assert str(box).startswith('<p class="note warn">warning: ties decide Strict on 4 of 20 items of run')


def test_a_noise_floor_measured_for_no_run_is_one_line() -> None:
    html = str(noise_table([_run(f"ref:{k}", "yesno", []) for k in range(18)]))
    assert "<table" not in html and html.count("noise floor not measured") == 1 and "τ in 18 of 18 runs: — (noise floor not measured" in html


def test_a_run_without_a_floor_beside_one_with_it_keeps_the_table_narrow() -> None:
    measured = SimpleNamespace(tau=0.01, n_decision=3, n_credit=2,
                               band=SimpleNamespace(acc=(0.4, 0.6), dep=(0.3, 0.5), dcc=(0.2, 0.4)))
    html = str(noise_table([_run("ref:a", "yesno", [], measured), _run("ref:b", "yesno", [])]))
    assert "<table" in html and "wrap-heads" in html
    # the reason is said once, under the table, not inside a cell that may not wrap
    assert '<td class="num">not measured</td>' in html and html.count("noise floor not measured") == 1
    assert "τ in 1 of 2 runs: — (noise floor not measured" in html
