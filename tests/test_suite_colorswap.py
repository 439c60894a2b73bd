"""ColorSwap: the reader of data/{train,test}.json, the official text / image / group scores, result files refused.

The official scoring is re-expressed below from Top34051/colorswap @ 4f2c9e4 : vlm_eval.py — its answer parsers
verbatim and its ``__main__`` loop as a function of the two result files — and run beside vlaudit: hand-written
pair scores (with exact ties) are turned into result files in the published layout (a VLM that answers with the
higher-scoring option, and no answer on a tie), so the script parses them back to the same decisions. The script's
group score zips the text and image lists by position (a known bug); both readings are tested.
"""

from __future__ import annotations

import json
import tempfile
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from vlaudit.analysis.suites.registry import suite_named
from vlaudit.errors import InputError
from vlaudit.metrics.suites import Outcomes, SuiteScores
from vlaudit.metrics.suites.colorswap import aggregate, outcomes
from vlaudit.sources.suites.colorswap import read_colorswap


# ---- Top34051/colorswap @ 4f2c9e4 : vlm_eval.py, lines 5-78 (the answer parsers), verbatim
# ruff: noqa: SIM103, SIM114, E501
def extract_options_text(text):
    text = text.removeprefix("Does this image present (A) ")
    text = text.removesuffix("? Note, you must choose one of the two options")
    text = text.removesuffix(
        "? First, describe the image information relevant to the question. Then, provide your answer. Note you must choose one of the two options"
    )
    options = text.split(", or (B) ")
    return options


def is_option_text(response, option_text, alternative_text, option="A", alternative="B"):
    if option_text.lower() in response.lower() and alternative_text.lower() not in response.lower():
        return True
    if f"image presents ({option})".lower() in response.lower():
        return True
    if f"image presents option ({option})".lower() in response.lower():
        return True
    if f"image presents option {option}".lower() in response.lower():
        return True
    if response.startswith(f"{option})") or response.startswith(f"({option})"):
        return True
    if (
        response.startswith(f"Option {option}")
        or response.startswith(f"Option {option})")
        or response.startswith(f"Option ({option})")
    ):
        return True
    if (
        f"option {option}".lower() in response.lower()
        or f"option ({option})".lower() in response.lower()
        or f"option {option})".lower() in response.lower()
    ) and not (f"({alternative})".lower() in response.lower() or f"{alternative})".lower() in response.lower()):
        return True
    if response == option:
        return True
    if f"it would imply ({option})".lower() in response.lower():
        return True
    if f"it could metaphorically represent ({option})".lower() in response.lower():
        return True
    if f"it is ({option})".lower() in response.lower():
        return True
    if f"this image presents {option_text}".lower() in response.lower():
        return True

    def remove_p(text):
        text = (
            text.replace(" a ", " ")
            .replace(" an ", " ")
            .replace(" the ", " ")
            .replace(" with ", " ")
            .replace(" and ", " ")
        )
        text = text.removeprefix("a ")
        text = text.removeprefix("an ")
        text = text.removeprefix("the ")
        return text

    if (
        remove_p(option_text).lower() in remove_p(response).lower()
        and remove_p(alternative_text).lower() not in remove_p(response).lower()
    ):
        return True
    return False


def is_option_image(response, option_text, alternative_text, option="first", alternative="second"):
    if option in response.lower() and alternative not in response.lower():
        return True
    if f"{option} image better aligns" in response.lower() or f"{option} image aligns better" in response.lower():
        return True
    if f"the {option} image is more relevant" in response.lower():
        return True
    return False


# ----


def official_scores(text_file: Path, image_file: Path) -> tuple[float, float, float, list, list]:
    """vlm_eval.py ``__main__`` for one model and dataset (the loop verbatim, ``show_warning`` off): text, image and
    group scores in percent, and the two lists the group zips."""
    response = json.load(open(text_file))  # noqa: SIM115
    text_scores = []
    for sample in response:
        if "error" in sample:
            continue
        options = extract_options_text(sample["prompt_image_1"])
        option_a = is_option_text(sample["response_image_1"], options[0], options[1], "A", "B")
        option_b = is_option_text(sample["response_image_1"], options[1], options[0], "B", "A")
        chosen_image_1 = {(0, 0): None, (0, 1): "B", (1, 0): "A", (1, 1): None}[(option_a, option_b)]
        options = extract_options_text(sample["prompt_image_2"])
        option_a = is_option_text(sample["response_image_2"], options[0], options[1], "A", "B")
        option_b = is_option_text(sample["response_image_2"], options[1], options[0], "B", "A")
        chosen_image_2 = {(0, 0): None, (0, 1): "B", (1, 0): "A", (1, 1): None}[(option_a, option_b)]
        text_scores.append(
            sample["log_1"]["correct_answer"] == chosen_image_1
            and sample["log_2"]["correct_answer"] == chosen_image_2
        )
    image_scores = []
    response = json.load(open(image_file))  # noqa: SIM115
    for sample in response:
        if "error" in sample:
            continue
        option_first = is_option_image(sample["response_caption_1"], options[0], options[1], "first", "second")
        option_second = is_option_image(sample["response_caption_1"], options[1], options[0], "second", "first")
        chosen_caption_1 = {(0, 0): None, (0, 1): "second", (1, 0): "first", (1, 1): None}[(option_first, option_second)]
        option_first = is_option_image(sample["response_caption_2"], options[0], options[1], "first", "second")
        option_second = is_option_image(sample["response_caption_2"], options[1], options[0], "second", "first")
        chosen_caption_2 = {(0, 0): None, (0, 1): "second", (1, 0): "first", (1, 1): None}[(option_first, option_second)]
        image_scores.append(
            chosen_caption_1 == sample["log_1"]["correct_answer"]
            and chosen_caption_2 == sample["log_2"]["correct_answer"]
        )
    group_scores = [text_score and image_score for text_score, image_score in zip(text_scores, image_scores)]  # noqa: B905
    return (sum(text_scores) / len(text_scores) * 100, sum(image_scores) / len(image_scores) * 100,
            sum(group_scores) / len(group_scores) * 100, text_scores, image_scores)


def simulated_results(rows: list, matrices: list, folder: Path, seed: int, errors: tuple[set, set] = (set(), set())):
    """The two result files a VLM would write that answers with the option of higher score (no answer on a tie),
    options and images shown in a seeded order, as the published files do; ``errors``: ids with an error per run."""
    rng = np.random.default_rng(seed)
    text_run, image_run = [], []
    for row, s in zip(rows, matrices, strict=True):
        captions = (row["caption_1"], row["caption_2"])
        if row["id"] in errors[0]:
            text_run.append({"id": row["id"], "error": "rate limited"})
        else:
            sample = {"id": row["id"]}
            for k in (0, 1):  # image k: which caption?
                order = (0, 1) if rng.integers(2) == 0 else (1, 0)
                sample[f"prompt_image_{k + 1}"] = (f"Does this image present (A) {captions[order[0]]}, or (B) "
                                                   f"{captions[order[1]]}? Note, you must choose one of the two options")
                a, b = s[k, order[0]], s[k, order[1]]
                sample[f"response_image_{k + 1}"] = (f"(A) {captions[order[0]]}" if a > b else
                                                     f"(B) {captions[order[1]]}" if b > a else "I cannot tell.")
                sample[f"log_{k + 1}"] = {"correct_answer": "A" if order[0] == k else "B"}
            text_run.append(sample)
        if row["id"] in errors[1]:
            image_run.append({"id": row["id"], "error": "rate limited"})
        else:
            sample = {"id": row["id"]}
            for k in (0, 1):  # caption k: which image?
                order = (0, 1) if rng.integers(2) == 0 else (1, 0)
                first, second = s[order[0], k], s[order[1], k]
                sample[f"response_caption_{k + 1}"] = ("The first image" if first > second else
                                                       "The second image" if second > first else "I cannot tell.")
                sample[f"log_{k + 1}"] = {"correct_answer": "first" if order[0] == k else "second"}
            image_run.append(sample)
    (folder / "text-model-colorswap.json").write_text(json.dumps(text_run))
    (folder / "image-model-colorswap.json").write_text(json.dumps(image_run))
    return folder / "text-model-colorswap.json", folder / "image-model-colorswap.json"


ROWS = [{"id": k, "caption_1": f"a {a} cup on a {b} table {k}", "caption_2": f"a {b} cup on a {a} table {k}",
         "image_1": f"images/img_{k}_1.png", "image_2": f"images/img_{k}_2.png", "image_source": "midjourney",
         "caption_source": "human"} for k, (a, b) in enumerate([("red", "blue"), ("green", "white"),
                                                               ("black", "yellow"), ("pink", "grey")] * 3)]


def write(path: Path, rows) -> Path:
    path.write_text(json.dumps(rows))
    return path


def random_matrices(seed: int, n: int) -> list:
    rng = np.random.default_rng(seed)
    return [rng.integers(0, 3, size=(2, 2)).astype(float) for _ in range(n)]  # many exact ties


def test_reader_examples_are_native_2x2_blocks(tmp_path: Path) -> None:
    read = read_colorswap(write(tmp_path / "test.json", ROWS))
    assert read.counts == {"read": 12, "kept": 12} and read.items[0].subset == "test"
    item = read.items[0]
    assert [image.path for image in item.images] == ["images/img_0_1.png", "images/img_0_2.png"]
    assert item.texts == ("a red cup on a blue table 0", "a blue cup on a red table 0")
    assert item.positives == ((0, 0), (1, 1)) and item.extra["image_source"] == "midjourney"


def test_official_scores_equal_the_official_code_with_ties(tmp_path: Path) -> None:
    read = suite_named("colorswap").read_file(write(tmp_path / "test.json", ROWS))
    for seed in range(4):
        matrices = random_matrices(seed, len(ROWS))
        text, image, group = aggregate(read.items, outcomes(read.items, SuiteScores(matrices)))
        expected = official_scores(*simulated_results(ROWS, matrices, tmp_path, seed))
        assert (text.value, image.value, group.value) == pytest.approx(tuple(v / 100 for v in expected[:3]), abs=1e-12)
        assert text.n == image.n == group.n == 12


def test_the_misaligned_zip_and_its_intent(tmp_path: Path) -> None:
    """One error in the text run on example 0: the script's zip pairs text(example k + 1) with image(example k);
    vlaudit pairs by example (its intent). Both readings are computed here and differ."""
    read = read_colorswap(write(tmp_path / "test.json", ROWS[:4]))
    right, wrong_text = np.array([[2.0, 1.0], [1.0, 2.0]]), np.array([[1.0, 2.0], [0.0, 3.0]])  # image score right
    matrices = [right, wrong_text, right, right]
    _, _, literal, text_scores, image_scores = official_scores(*simulated_results(
        ROWS[:4], matrices, tmp_path, seed=0, errors=({0}, set())))
    assert text_scores == [False, True, True] and image_scores == [True, True, True, True]
    values = outcomes(read.items, SuiteScores(matrices)).values.copy()
    values[0, [0, 2]] = np.nan  # example 0's text run failed
    text, image, group = aggregate(read.items, Outcomes(("text_correct", "image_correct", "group_correct"), values))
    by_id = {0: None, 1: False, 2: True, 3: True}  # the intent: text and image of one example
    intent = np.mean([by_id[k] and image_scores[k] for k in (1, 2, 3)])
    assert text.value == pytest.approx(2 / 3) and image.value == 1.0
    assert group.value == pytest.approx(intent) == pytest.approx(2 / 3) and group.n == 3
    assert literal == pytest.approx(200 / 3)  # the zip also drops example 3's image: [F&T, T&T, T&T]
    matrices = [right, right, wrong_text, right]  # now the zip's misalignment changes the figure
    _, _, literal, text_scores, _ = official_scores(*simulated_results(ROWS[:4], matrices, tmp_path, seed=0,
                                                                       errors=({0}, {3})))
    values = outcomes(read.items, SuiteScores(matrices)).values.copy()
    values[0, [0, 2]] = np.nan
    values[3, [1, 2]] = np.nan
    group = aggregate(read.items, Outcomes(("text_correct", "image_correct", "group_correct"), values))[2]
    assert group.value == pytest.approx(1 / 2) and group.n == 2  # examples 1 (right) and 2 (text wrong)
    assert literal == pytest.approx(200 / 3)  # zip: text(1)&image(0), text(2)&image(1), text(3)&image(2)
    assert "zip" in (group.note or "")


def test_planted_order_blind_model_ties_everywhere(tmp_path: Path) -> None:
    read = read_colorswap(write(tmp_path / "test.json", ROWS))

    def bag(image_caption: str, text: str) -> float:  # same words, colours swapped: one bag per example
        return float(len(set(image_caption.split()) & set(text.split())))
    matrices = [np.array([[bag(own, text) for text in item.texts] for own in item.texts]) for item in read.items]
    text, image, group = aggregate(read.items, outcomes(read.items, SuiteScores(matrices)))
    assert text.value == image.value == group.value == 0.0
    assert official_scores(*simulated_results(ROWS, matrices, tmp_path, seed=1))[:3] == (0.0, 0.0, 0.0)


def test_published_result_files_are_refused_by_name(shared_data: Path) -> None:
    folder = shared_data / "compositionality" / "colorswap"
    for name in ("image-gpt4v-colorswap.json", "text-gpt4v-colorswap.json"):
        with pytest.raises(InputError, match=r"not a ColorSwap file: expected data/\{train,test\}.json.*a ColorSwap "
                                             r"VLM result file \(vlm_results/"):
            read_colorswap(folder / name)


def test_look_alikes_and_bad_records(tmp_path: Path) -> None:
    winoground = [{"id": 0, "caption_0": "a", "caption_1": "b", "image_0": "ex_0_img_0", "image_1": "ex_0_img_1"}]
    with pytest.raises(InputError, match=r"a Winoground file \(caption_0 / image_0\), not ColorSwap"):
        read_colorswap(write(tmp_path / "w.json", winoground))
    with pytest.raises(InputError, match=r"not a ColorSwap file.*a list of 4-lists"):
        read_colorswap(write(tmp_path / "c.json", [["u1", "c1", "u2", "c2"]]))
    with pytest.raises(InputError, match=r"record id 0, field 'caption_2'"):
        read_colorswap(write(tmp_path / "t.json", [{**ROWS[0], "caption_2": ""}]))
    with pytest.raises(InputError, match=r"record id 0, field 'id'.*twice"):
        read_colorswap(write(tmp_path / "t.json", [ROWS[0], ROWS[0]]))
    with pytest.raises(InputError, match=r"field 'image_1'.*leaves the images folder"):
        read_colorswap(write(tmp_path / "t.json", [{**ROWS[0], "image_1": "../x.png"}]))


@settings(max_examples=25, deadline=None)
@given(st.integers(0, 10_000), st.floats(0.01, 100), st.floats(-50, 50))
def test_a_positive_affine_map_keeps_the_scores(seed: int, scale: float, shift: float) -> None:
    with tempfile.TemporaryDirectory() as folder:
        read = read_colorswap(write(Path(folder) / "test.json", ROWS))
    matrices = random_matrices(seed, len(ROWS))
    mapped = [scale * matrix + shift for matrix in matrices]
    assert [f.value for f in aggregate(read.items, outcomes(read.items, SuiteScores(matrices)))] == [
        f.value for f in aggregate(read.items, outcomes(read.items, SuiteScores(mapped)))]
