"""Small benchmark releases written in their published schemas (column names, types, image encoding).

The Hub releases are Parquet as ``datasets`` exports them: an Image column is the Arrow struct
``{bytes: binary, path: string}`` (a list of them for SEED-Bench), integer ids are int64, lists are Arrow
lists. The OpenCompass/VLMEvalKit TSV holds base64 images; the authors' JSON files are as distributed.
Each writer returns the file and the images its rows embed (``name → PNG bytes``).
"""

from __future__ import annotations

import base64
import io
import json
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

IMAGE = pa.struct([("bytes", pa.binary()), ("path", pa.string())])


def png(colour: tuple[int, int, int], size: tuple[int, int] = (6, 4)) -> bytes:
    from PIL import Image

    buffer = io.BytesIO()
    Image.new("RGB", size, colour).save(buffer, format="PNG")
    return buffer.getvalue()


RED, GREEN, BLUE = png((200, 0, 0)), png((0, 200, 0)), png((0, 0, 200))


def image(data: bytes | None, path: str = "x.png") -> dict[str, Any] | None:
    return None if data is None else {"bytes": data, "path": path}


def write_parquet(path: Path, columns: dict[str, tuple[pa.DataType, list[Any]]]) -> Path:
    table = pa.table({name: pa.array(values, type=kind) for name, (kind, values) in columns.items()})
    pq.write_table(table, path)
    return path


S, I64, STRINGS = pa.string(), pa.int64(), pa.list_(pa.string())


def pope(root: Path) -> Path:
    """``lmms-lab/POPE``: id, question_id, question, answer, image_source, image, category."""
    return write_parquet(root / "pope.parquet", {
        "id": (S, ["0", "1", "2"]), "question_id": (S, ["1", "1", "2"]),
        "question": (S, ["Is there a snowboard in the image?", "Is there a dog in the image?",
                         "Is there a car in the image?"]),
        "answer": (S, ["yes", "no", "no"]), "image_source": (S, ["COCO_val2014_000000310196"] * 3),
        "image": (IMAGE, [image(RED), image(RED), image(GREEN)]),
        "category": (S, ["adversarial", "popular", "random"])})


def mme(root: Path) -> Path:
    """``lmms-lab/MME``: question_id (the image's file), image, question, answer (Yes/No), category."""
    return write_parquet(root / "mme.parquet", {
        "question_id": (S, ["code_reasoning/0020.png"] * 2 + ["existence/000000006040.jpg"] * 2),
        "image": (IMAGE, [image(RED), image(RED), image(GREEN), image(GREEN)]),
        "question": (S, ["Is a python code shown in the picture? Please answer yes or no.",
                         "Is a c++ code shown in the picture? Please answer yes or no.",
                         "Is there a train in this image? Please answer yes or no.",
                         "Is there a bed in this image? Please answer yes or no."]),
        "answer": (S, ["Yes", "No", "Yes", "No"]),
        "category": (S, ["code_reasoning", "code_reasoning", "existence", "existence"])})


HALLUSION = [
    {"category": "VD", "subcategory": "illusion", "visual_input": "1", "set_id": "0", "figure_id": "0",
     "sample_note": "circle", "question_id": "0", "question": "Is the right orange circle the same size as the "
     "left orange circle?", "gt_answer_details": "The circles are the same size.", "gt_answer": "1",
     "filename": "./hallusion_bench/VD/illusion/0_0.png"},
    {"category": "VD", "subcategory": "illusion", "visual_input": "2", "set_id": "0", "figure_id": "1",
     "sample_note": "circle", "question_id": "0", "question": "Is the right orange circle the same size as the "
     "left orange circle?", "gt_answer_details": "The right circle is larger.", "gt_answer": "0",
     "filename": "./hallusion_bench/VD/illusion/0_1.png"},
    {"category": "VS", "subcategory": "chart", "visual_input": "0", "set_id": "1", "figure_id": "0",
     "sample_note": "GDP", "question_id": "0", "question": "Did China have the largest GDP in 2020?",
     "gt_answer_details": "The United States had.", "gt_answer": "0", "filename": None},
]


def hallusionbench(root: Path) -> Path:
    """The authors' ``HallusionBench.json``: a list of question entries (``filename`` null without an image)."""
    path = root / "HallusionBench.json"
    path.write_text(json.dumps(HALLUSION, indent=2))
    return path


MMSTAR_QUESTION = ("Which option describe the object relationship in the image correctly?\nOptions: A: The "
                   "suitcase is on the book., B: The suitcase is beneath the cat., C: The suitcase is beneath "
                   "the bed., D: The suitcase is beneath the book.")


def mmstar(root: Path) -> Path:
    """``Lin-Chen/MMStar`` (mmstar.parquet): index, question (options inside), image, answer, category,
    l2_category, meta_info {source, split, image_path}."""
    meta = pa.struct([("source", S), ("split", S), ("image_path", S)])
    return write_parquet(root / "mmstar.parquet", {
        "index": (I64, [0, 1]),
        "question": (S, [MMSTAR_QUESTION, "What is the main feature in the background?\nOptions: A: Trees, "
                         "B: Mountains, C: A lake"]),
        "image": (IMAGE, [image(RED), image(BLUE)]), "answer": (S, ["A", "B"]),
        "category": (S, ["instance reasoning", "coarse perception"]),
        "l2_category": (S, ["cross-instance relation reasoning", "image scene and topic"]),
        "meta_info": (meta, [{"source": "MMBench", "split": "val", "image_path": "images/0.jpg"},
                             {"source": "SEEDBench_IMG", "split": "val", "image_path": "images/1.jpg"}])})


MMBENCH_HEADER = ["index", "question", "hint", "A", "B", "C", "D", "answer", "category", "l2-category", "image",
                  "split"]


def mmbench_tsv(root: Path, rows: list[list[str]] | None = None) -> Path:
    """The OpenCompass/VLMEvalKit ``MMBench_DEV_EN.tsv``: base64 images; a short number in ``image`` reuses
    the image of the row with that index; an empty cell is an absent option or hint."""
    red = base64.b64encode(RED).decode()
    rows = rows if rows is not None else [
        ["241", "What is the color of the square?", "", "red", "green", "blue", "yellow", "A",
         "attribute_recognition", "finegrained_perception (instance-level)", red, "dev"],
        ["242", "Which shape is shown?", "The image shows one shape.", "square", "circle", "triangle", "", "A",
         "attribute_recognition", "finegrained_perception (instance-level)", "241", "dev"],
    ]
    path = root / "MMBench_DEV_EN.tsv"
    path.write_text("\n".join("\t".join(row) for row in [MMBENCH_HEADER, *rows]) + "\n")
    return path


def mmbench_hub(root: Path) -> Path:
    """``lmms-lab/MMBench`` (config ``en``, split ``dev``): index, question, hint, answer, A–D, category, image,
    source, L2-category, comment, split (an absent option or hint is null or ``"nan"``)."""
    return write_parquet(root / "mmbench_dev.parquet", {
        "index": (I64, [241, 1000241]), "question": (S, ["What is the color of the square?"] * 2),
        "hint": (S, [None, "nan"]), "answer": (S, ["A", "D"]), "A": (S, ["red", "yellow"]),
        "B": (S, ["green", "green"]), "C": (S, ["blue", "blue"]), "D": (S, ["yellow", "red"]),
        "category": (S, ["attribute_recognition"] * 2), "image": (IMAGE, [image(RED), image(RED)]),
        "source": (S, ["MMBench"] * 2), "L2-category": (S, ["finegrained_perception (instance-level)"] * 2),
        "comment": (S, [None, None]), "split": (S, ["dev", "dev"])})


def seed_bench(root: Path) -> Path:
    """``lmms-lab/SEED-Bench``: answer, choice_a–d, data_id, data_type, question, question_id,
    question_type_id, image (a list of Images: a video question's frames)."""
    return write_parquet(root / "seed_bench.parquet", {
        "answer": (S, ["B", "A"]), "choice_a": (S, ["one", "running"]), "choice_b": (S, ["two", "walking"]),
        "choice_c": (S, ["three", "sitting"]), "choice_d": (S, ["four", "lying"]),
        "data_id": (S, ["1454426_2591111986", "v1234.mp4"]), "data_type": (S, ["image", "video"]),
        "question": (S, ["How many towels are in the image?", "What is the person doing?"]),
        "question_id": (S, ["101669", "200001"]), "question_type_id": (I64, [5, 10]),
        "image": (pa.list_(IMAGE), [[image(GREEN)], [image(RED), image(BLUE)]])})  # a video's frames


def scienceqa(root: Path) -> Path:
    """``derek-thomas/ScienceQA``: image (null without one), question, choices, answer (index), hint, task,
    grade, subject, topic, category, skill, lecture, solution."""
    return write_parquet(root / "scienceqa_test.parquet", {
        "image": (IMAGE, [image(BLUE), None]),
        "question": (S, ["Which of these states is farthest north?", "Which word would you find on a dictionary "
                         "page?"]),
        "choices": (STRINGS, [["West Virginia", "Louisiana", "Arizona", "Oklahoma"], ["fate", "new"]]),
        "answer": (I64, [0, 1]), "hint": (S, ["", "Look at the guide words."]),
        "task": (S, ["closed choice"] * 2), "grade": (S, ["grade2", "grade3"]),
        "subject": (S, ["social science", "language science"]), "topic": (S, ["geography", "reference-skills"]),
        "category": (S, ["Geography", "Reference skills"]), "skill": (S, ["Read a map: cardinal directions",
                                                                         "Use guide words"]),
        "lecture": (S, ["Maps have four cardinal directions.", "Guide words ..."]), "solution": (S, ["", ""])})


def mmmu(root: Path) -> Path:
    """``MMMU/MMMU`` (one subject config, split ``validation``): options as the text of a Python list,
    image_1–image_7 (null when unused), question_type multiple-choice / open."""
    columns: dict[str, tuple[pa.DataType, list[Any]]] = {
        "id": (S, ["validation_Art_Theory_1", "validation_Art_Theory_2"]),
        "question": (S, ["<image 1> and <image 2>: which is older?", "What year is shown in <image 1>?"]),
        "options": (S, ["['<image 1>', '<image 2>', 'Both the same']", "[]"]),
        "explanation": (S, ["", ""])}
    for k in range(1, 8):
        first = image(RED) if k == 1 else image(BLUE) if k == 2 else None
        columns[f"image_{k}"] = (IMAGE, [first, image(GREEN) if k == 1 else None])
    columns |= {"img_type": (S, ["['Paintings']", "['Photographs']"]), "answer": (S, ["B", "1888"]),
                "topic_difficulty": (S, ["Medium", "Easy"]), "question_type": (S, ["multiple-choice", "open"]),
                "subfield": (S, ["Art History", "Art History"])}
    return write_parquet(root / "mmmu_validation.parquet", columns)


def cv_bench(root: Path) -> Path:
    """``nyu-visionx/CV-Bench``: idx, type, task, image, question, choices, answer ``(A)``, prompt, filename,
    source, source_dataset, source_filename, target_class, target_size, bbox."""
    return write_parquet(root / "cv_bench_test.parquet", {
        "idx": (I64, [0, 0]), "type": (S, ["2D", "3D"]), "task": (S, ["Count", "Depth"]),
        "image": (IMAGE, [image(RED), image(GREEN)]),
        "question": (S, ["How many organs are in the image?", "Which is closer to the camera, the lamp or the "
                         "chair?"]),
        "choices": (STRINGS, [["3", "2", "1", "0"], ["lamp", "chair"]]), "answer": (S, ["(C)", "(B)"]),
        "prompt": (S, ["How many organs are in the image? Select from the following choices.\n(A) 3\n(B) 2\n"
                       "(C) 1\n(D) 0", "Which is closer? (A) lamp (B) chair"]),
        "filename": (S, ["img/2D/count/ade20k_10.png", "img/3D/depth/omni3d_1.png"]),
        "source": (S, ["ADE20K", "Omni3D"]), "source_dataset": (S, ["ADE20K Validation Set", "SUNRGBD"]),
        "source_filename": (S, ["ADE_val_00000248.jpg", "rgb/1.jpg"]), "target_class": (S, ["organ", None]),
        "target_size": (I64, [2, None]), "bbox": (pa.list_(pa.list_(pa.float64())), [None, None])})


def ai2d(root: Path) -> Path:
    """``lmms-lab/ai2d``: question, options (a list), answer (the gold index as text), image."""
    return write_parquet(root / "ai2d_test.parquet", {
        "question": (S, ["Which of these define dairy item?", "What is the larva stage?"]),
        "options": (STRINGS, [["c", "D", "b", "a"], ["A", "B", "C", "D"]]), "answer": (S, ["1", "3"]),
        "image": (IMAGE, [image(BLUE), image(RED)])})


#: format → (writer, expected kept, expected excluded)
RELEASES = {"pope": (pope, 3, 0), "mme": (mme, 4, 0), "hallusionbench": (hallusionbench, 3, 0),
            "mmstar": (mmstar, 2, 0), "mmbench": (mmbench_tsv, 2, 0), "seed-bench": (seed_bench, 1, 1),
            "scienceqa": (scienceqa, 1, 1), "mmmu": (mmmu, 1, 1), "cv-bench": (cv_bench, 2, 0),
            "ai2d": (ai2d, 2, 0)}


# three sizes the tiny Qwen2-VL processor (min 56x56 pixels, 14-pixel patches, 2x2 merge) turns into
# image blocks of 4, 6 and 8 tokens, so the order of the blocks shows the order of the images
SMALL, WIDE, WIDER = png((200, 0, 0), (4, 4)), png((0, 200, 0), (6, 4)), png((0, 0, 200), (12, 4))
IDS = ("validation_Art_1", "validation_Art_2", "validation_Art_3")
IMAGE_SETS = ([SMALL, WIDE, WIDER], [WIDER, WIDE, SMALL], [SMALL])  # the second: the first's images reversed


def mmmu_release(root: Path) -> Path:
    """``MMMU/MMMU`` as published (one subject, split validation): two items of three images (the same images,
    reversed) and one of a single image."""
    columns: dict[str, Any] = {
        "id": (S, list(IDS)),
        "question": (S, ["<image 1> <image 2> <image 3> Which one is red?"] * 2 + ["<image 1> Which colour?"]),
        "options": (S, ["['1', '2', '3']"] * 2 + ["['red', 'green']"]), "explanation": (S, [""] * 3)}
    for k in range(1, 8):
        columns[f"image_{k}"] = (IMAGE, [image(pictures[k - 1], f"{n}_{k}.png") if k <= len(pictures) else None
                                         for n, pictures in enumerate(IMAGE_SETS)])
    columns |= {"img_type": (S, ["[]"] * 3), "answer": (S, ["A", "C", "A"]), "topic_difficulty": (S, ["Easy"] * 3),
                "question_type": (S, ["multiple-choice"] * 3), "subfield": (S, ["Art History"] * 3)}
    return write_parquet(root / "mmmu_validation.parquet", columns)
