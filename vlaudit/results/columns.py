"""One definition of each table's columns: the name, dtype and whether a reader requires it.

The writers build their Arrow schemas and column orders from these, and the readers take their required and
known columns from them, so a column added to a table is added here once. Dtypes are Arrow type names
(``string``, ``float64``, ``int64``, ``float32``, ``list<float32>``, ``any`` for a column whose type the
input decides). A reader accepts any further column and carries it along (``extra``).
"""

from __future__ import annotations

from dataclasses import dataclass

import pyarrow as pa

_ARROW = {"string": pa.string(), "float64": pa.float64(), "int64": pa.int64(), "float32": pa.float32(),
          "list<float64>": pa.list_(pa.float64()), "list<int64>": pa.list_(pa.int64())}


@dataclass(frozen=True)
class Column:
    """One column: its name, Arrow dtype, whether a reader needs it, and what it holds."""

    name: str
    dtype: str
    required: bool
    meaning: str


@dataclass(frozen=True)
class TableSchema:
    """A table's columns in the order the writer writes them, and the columns a reader also accepts."""

    name: str
    files: str
    columns: tuple[Column, ...]
    #: accepted on input (a user's own table) but never written by vlaudit
    input_only: tuple[Column, ...] = ()

    @property
    def names(self) -> tuple[str, ...]:
        """The written columns, in order."""
        return tuple(c.name for c in self.columns)

    @property
    def required(self) -> tuple[str, ...]:
        """The columns a reader refuses a table without."""
        return tuple(c.name for c in (*self.columns, *self.input_only) if c.required)

    @property
    def known(self) -> tuple[str, ...]:
        """Every column a reader interprets (written ones, then input-only ones); others are carried along."""
        return self.names + tuple(c.name for c in self.input_only)

    def arrow_schema(self) -> pa.Schema:
        """The written columns as an Arrow schema (every column must have a concrete dtype)."""
        return pa.schema([(c.name, _ARROW[c.dtype]) for c in self.columns])


def _cols(*specs: tuple[str, str, bool, str]) -> tuple[Column, ...]:
    return tuple(Column(*spec) for spec in specs)


#: an item's relation group and facts, the same columns in ITEMS and in the margins scored from them
_RELATION_FACTS = (
    ("group_id", "string", False, "same-image true/false relation group (VCA §13)"),
    ("statement", "string", False, "true or false within a group (exactly one true)"),
    ("relation", "string", False, "relation phrase"),
    ("subject", "string", False, "subject object name"),
    ("object", "string", False, "object name"),
)
#: the resampling unit an item belongs to (vlaudit.stats.clusters), the same columns in ITEMS and the margins
_CLUSTER = (
    ("cluster", "string", False, "resampling unit: items sharing it are resampled together (stem, image, ...)"),
    ("cluster_unit", "string", False, "what a cluster is: stem, edit, image, cycle (none: the item)"),
)
GEOMETRY_COLUMNS = ("union_pct", "rele_erased_pct", "irre_erased_pct", "irre_erased_in_union_pct")

MARGINS = TableSchema(
    name="margins",
    files="RUN/margins.parquet (vca score, vca score-dual adds cosine); read by vca report, factorial",
    columns=_cols(
        ("model", "string", True, "model spec or name"),
        ("dataset", "string", True, "benchmark name (defaults to the file stem)"),
        ("item_id", "string", True, "the ITEMS row scored"),
        ("context", "string", True, "image context (VCA Table 10): original, text, blank, ..."),
        ("interface", "string", False, "yesno, truefalse or letter (default yesno)"),
        ("nll_yes", "float64", False, "NLL of the yes token"),
        ("nll_no", "float64", False, "NLL of the no token"),
        ("margin", "float64", False, "m = NLL(no) − NLL(yes) (VCA §3)"),
        ("label", "string", False, "gold yes/no (the gold letter under the letter interface)"),
        *_RELATION_FACTS,
        ("split", "string", False, "split name"),
        ("prompt_hash", "string", False, "sha256 of the prompt sent"),
        ("yes_token_id", "int64", False, "tokenizer id of the yes verbalizer"),
        ("no_token_id", "int64", False, "tokenizer id of the no verbalizer"),
        ("n_prompt_tokens", "int64", False, "prompt length in tokens"),
        ("image_sha256", "string", False, "sha256 of the context image's pixels"),
        ("source_sha256", "string", False, "sha256 of the source image file"),
        ("donor_image", "string", False, "the mismatch context's donor image"),
        ("status", "string", False, "ok, or why the record was not scored (not ok: skipped by readers)"),
        ("error", "string", False, "the failure's message"),
        *((name, "float64", False, "erasure geometry, % of the image area (VCA Table 11)")
          for name in GEOMETRY_COLUMNS),
        ("option_letters", "string", False, "letter interface: the option letters read, e.g. ABCD"),
        ("logp_options", "list<float64>", False, "letter interface: log p of each letter, one forward (VCA §3)"),
        ("option_token_ids", "list<int64>", False, "letter interface: tokenizer ids of the letters"),
        ("category", "string", False, "the benchmark's own category (POPE, MME subtask, MMStar, ...)"),
        ("image_pair", "string", False, "MME: the image whose two questions make one acc+ pair"),
        ("circular_id", "string", False, "CircularEval: the item whose option rotations these rows are"),
        ("rotation", "int64", False, "CircularEval: how far the options were rotated (0 = as published)"),
        ("l2_category", "string", False, "the benchmark's second-level category (MMStar's l2 axis, MMBench's L2)"),
        *_CLUSTER,
        ("censored", "string", False, "answer words (or letters) outside a served model's top-k log-probs, "
                                      "e.g. no: their NLL/log-p is only a bound (the k-th value); null: exact"),
    ),
    input_only=_cols(
        ("logp_yes", "float64", False, "log-probability of yes (a margin is logp_yes − logp_no)"),
        ("logp_no", "float64", False, "log-probability of no"),
    ),
)

CYCLES = TableSchema(
    name="cycles",
    files="CYCLES.jsonl (cycles build); read by cycles eval, audit, features, zero-shot, score-mllm",
    columns=_cols(
        ("cycle_id", "string", True, "unique block id"),
        ("family", "string", True, "the cycle family (relation or attribute swap)"),
        ("split", "string", False, "train/val/test; cycles without one are 'unsplit'"),
        ("image_1", "string", True, "first image id"),
        ("caption_1", "string", True, "first caption id (valid for image_1)"),
        ("image_2", "string", True, "second image id"),
        ("caption_2", "string", True, "second caption id (valid for image_2)"),
        ("text_1", "string", False, "caption_1's text"),
        ("text_2", "string", False, "caption_2's text"),
        ("file_name_1", "string", False, "image_1's file, relative to the images folder"),
        ("file_name_2", "string", False, "image_2's file"),
    ),
)

SCORES = TableSchema(
    name="scores",
    files="SCORES.csv|jsonl|parquet (cycles zero-shot, cycles score-mllm, yours); read by cycles eval",
    columns=_cols(
        ("image_id", "string", True, "image id as in the cycles table"),
        ("caption_id", "string", True, "caption id as in the cycles table"),
        ("score", "float64", True, "s(u, v), larger = better match (store as float64)"),
    ),
)

ITEMS = TableSchema(
    name="items",
    files="ITEMS.jsonl (data builders, edits build, data factorial); read by vca score",
    columns=_cols(
        ("item_id", "string", True, "unique id of the query"),
        ("image", "string", True, "image path relative to --images; empty for a text-only item"),
        ("question", "string", True, "the statement placed in the fixed prompt template"),
        ("label", "string", False, "gold yes/no (true/false, 1/0 accepted)"),
        ("dataset", "string", False, "benchmark name; defaults to the file stem"),
        ("split", "string", False, "split; the mismatch context permutes images within it"),
        *_RELATION_FACTS,
        ("boxes", "any", False, '{"subject": [x, y, w, h], "object": [...]} in pixels'),
        ("options", "any", False, "multiple choice: option texts, lettered A, B, ...; label is the letter"),
        ("hint", "string", False, "multiple choice: the benchmark's hint, shown before the question"),
        ("category", "string", False, "the benchmark's own category (POPE, MMStar, MMBench, ...)"),
        *_CLUSTER,
    ),
)



def _features(id_name: str, file: str, hashed: str) -> TableSchema:
    return TableSchema(
        name=f"features: {file}",
        files=f"FEATS/{file}.parquet (features); read by cycles zero-shot, experiments",
        columns=_cols(
            (id_name, "string", True, f"{id_name.split('_')[0]} id"),
            ("content_hash", "string", False, f"sha256 of the {hashed}"),
            ("embedding", "list<float32>", True, "L2-normalised embedding, fixed size D"),
        ),
    )


FEATURE_IMAGES = _features("image_id", "images", "image file's bytes")
FEATURE_TEXTS = _features("caption_id", "texts", "caption's UTF-8 text")

TABLES = (MARGINS, CYCLES, SCORES, ITEMS, FEATURE_IMAGES, FEATURE_TEXTS)
