"""The typed records behind fields that were JSON bags (stability and generate-check samples, the edit outcome
table, the demo's configuration, known answers and audits, ITEMS exclusions): what they hold, that a value the
run could not observe carries its reason, and that files written before them still read."""

from __future__ import annotations

import dataclasses

from vlaudit.demo.config import DemoConfig
from vlaudit.results.demo import DemoCycleAudits, DemoSettings, Exclusion, ItemsBuildSummary, KnownAnswer
from vlaudit.results.missing import Missing
from vlaudit.results.vca.checks import StabilityForwards, StabilitySample
from vlaudit.results.vca.outputs import EditOutcomesSummary, GenerateCheckResult, StabilityResult
from vlaudit.results.versioned import record_from_dict, to_json

OLD_STABILITY = {
    "model": "m", "spec": "ref:x", "run": "/run", "perturbations": [], "noise_floor": 0.001,
    "floor_definition": "p99", "estimate": None,
    "sample": {"n_items": 3, "seed": 0, "requested": 3, "n_units": 9, "n_records": 9, "contexts": ["original"],
               "interfaces": ["yesno"]},
    "forwards": {"baseline_from_run_cache": 9, "scored_now": 18, "total_perturbed": 18, "per_sampled_item": 6.0},
}


def test_a_stability_file_of_an_older_vlaudit_reads_into_the_records() -> None:
    result = StabilityResult.from_dict(OLD_STABILITY, path="stability.json")
    assert result.sample == StabilitySample(n_items=3, seed=0, requested=3, n_units=9, n_records=9,
                                            contexts=["original"], interfaces=["yesno"], kind=None)
    assert result.forwards == StabilityForwards(baseline_from_run_cache=9, scored_now=18, total_perturbed=18,
                                                per_sampled_item=6.0, unit=None)
    written = result.to_dict()
    assert list(written["sample"]) == ["n_items", "seed", "requested", "n_units", "n_records", "contexts",
                                       "interfaces", "kind"]
    assert StabilityResult.from_dict(written) == result


def test_a_generate_check_sample_counts_what_was_decoded_now() -> None:
    data = {"model": "m", "spec": "ref:x", "run": "/run", "max_new_tokens": 4, "checks": [],
            "sample": {"n_items": 2, "seed": 1, "requested": None, "n_units": 4, "n_records": 4, "generated_now": 0}}
    result = GenerateCheckResult.from_dict(data, path="generate_check.json")
    assert (result.sample.requested, result.sample.generated_now) == (None, 0)


def test_an_edit_outcome_row_says_why_a_rate_is_missing_and_old_nulls_still_read() -> None:
    row = {"model": "m1", "n": 4, "rel": 50.0, "flip_vis": 25.0, "strict": 25.0, "n_rel_o": 0, "rel_o": None,
           "n_joint": 0, "joint": None, "joint_minus_overall": None, "delta_pair_d": None, "rel_joint": None,
           "rel_joint_minus_overall": None, "n_cu": 2, "cu": 50.0, "n_dcc": 2, "dcc": 0.0,
           **{f"{name}_{end}": None for name in ("joint_minus_overall", "delta_pair_d", "rel_joint",
                                                  "rel_joint_minus_overall") for end in ("lo", "hi")}}
    old = {"n_accepted": 4, "table": [row], "pooled_cu": {"n": 0, "rate": None, "ci": None},
           "pooled_dcc": {"n": 0, "rate": None, "ci": None}, "feasibility_audit": []}
    assert EditOutcomesSummary.from_dict(old, path="summary.json").table[0].rel_o is None
    now = {**old, "table": [{**row, "rel_o": {"missing": "empty stratum"}}]}
    read = EditOutcomesSummary.from_dict(now, path="summary.json").table[0]
    assert read.rel_o == Missing("empty stratum") and read.rel == 50.0 and read.n_rel_o == 0
    assert to_json(read)["rel_o"] == {"missing": "empty stratum"}  # type: ignore[index]


def test_a_known_answer_keeps_what_it_observed_and_why_it_observed_nothing() -> None:
    def observed(value: object) -> object:
        data = {"check": "c", "expected": "e", "observed": value, "passed": False}
        return record_from_dict(KnownAnswer, data, path="known_answers.json").observed

    assert observed(True) is True and observed(3) == 3 and isinstance(observed(3), int)
    assert observed(0.25) == 0.25 and observed("TV = 0") == "TV = 0" and observed(None) is None
    assert observed({"dcc": 0.5, "ci": [0.4, 0.6]}) == {"dcc": 0.5, "ci": [0.4, 0.6]}
    assert observed([0.55, 0.66]) == [0.55, 0.66]
    assert observed({"missing": "no CircularEval result"}) == Missing("no CircularEval result")


def test_the_demo_settings_record_holds_every_field_of_the_demo_config() -> None:
    assert [f.name for f in dataclasses.fields(DemoSettings)] == [f.name for f in dataclasses.fields(DemoConfig)]
    config = DemoConfig.quick_config()
    settings = record_from_dict(DemoSettings, to_json(dataclasses.asdict(config)), path="summary.json")
    assert settings.seeds == [0] and settings.thresholds == config.thresholds
    assert settings.synthetic["rank_strengths"] == list(config.synthetic.rank_strengths)


def test_the_demo_audits_are_cycle_audits_and_older_files_without_their_version_read() -> None:
    audit = {"cycles": "coco.jsonl", "annotations": ["instances.json"], "rules": {}, "rows": [],
             "validity_violations": 0, "max_abs_signed_degree": 0}
    read = DemoCycleAudits.from_dict({"coco": audit, "gqa": audit}, path="audit.json")
    assert read.coco.cycles == "coco.jsonl" and read.gqa.validity_violations == 0
    assert read.to_dict()["coco"]["schema_version"] == 1  # type: ignore[index]


def test_an_exclusion_names_the_row_and_the_reason() -> None:
    data = {"n_items": 1, "n_excluded": 2, "excluded_by_reason": {"no entities": 1, "unparsable": 1},
            "excluded": [{"record": "line 3", "relation": "left of", "reason": "no entities"},
                         {"record": "entry 4 (image 17)", "reason": "unparsable", "caption": "a b"}],
            "notes": [], "warnings": []}
    read = ItemsBuildSummary.from_dict(data, path="ITEMS.summary.json")
    assert read.excluded == [Exclusion(record="line 3", reason="no entities", relation="left of"),
                             Exclusion(record="entry 4 (image 17)", reason="unparsable", caption="a b")]
