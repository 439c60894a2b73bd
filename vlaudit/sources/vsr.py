"""VSR (Visual Spatial Reasoning, Liu et al. 2023) jsonl splits → typed rows.

Two row shapes exist upstream (cambridgeltl/visual-spatial-reasoning, ``data/splits/``):

* **random** splits: ``image, image_link, caption, label (1/0), relation, annotator_id,
  vote_true_validator_id, vote_false_validator_id, reference_frame`` — no subject/object fields;
* **zero-shot** splits add ``subj`` and ``obj``; some ``subj`` values are truncated upstream
  (``"andbag"`` for *handbag*, ``"orse"`` for *horse*).

Subject/object resolution (documented rule, never a guess). The structured ``subj``/``obj`` fields are the
entities wherever a row has them (VCA §18: inverse pairs are built "only for positive items with structured
subject and object fields"); the caption only checks them. Every VSR caption is generated from the fixed
template ``"The {subject} {is }{relation} the {object}."`` (``is`` is absent for verb relations such as
*contains*, *consists of*, *has as a part*). Because the row names its relation, the caption is split on the
literal ``" {relation} the "`` anchored at both ends, so multi-word nouns (*teddy bear*, *dining table*,
*hot dog*) survive. Then:

* structured ``subj``/``obj`` equal to the caption's entities → ``entity_source = "fields"``;
* structured fields with a caption that does not fit the template → the fields as given,
  ``entity_source = "fields"``, and the unchecked caption noted in ``entity_issue``;
* a structured value that is a proper suffix of the caption's entity (upstream truncation) → the caption's
  full noun is used and ``entity_source = "fields-repaired"``;
* structured fields that contradict the caption → ``subject = object = None``, ``entity_source = None``, the
  reason in ``entity_issue``;
* no structured fields (random split; both must be non-empty) → the caption's entities,
  ``entity_source = "caption"`` (None with the reason when the caption does not fit).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, cast

from vlaudit.errors import InputError
from vlaudit.relations import VSR_NOT_STRICT, VSR_STRICT_RELATIONS
from vlaudit.sources.image_paths import confine
from vlaudit.sources.items import parse_yes_no
from vlaudit.sources.rows import ImageFolder, benchmark_rows

_REQUIRED = ("image", "caption", "label", "relation")


@dataclass(frozen=True)
class VsrRow:
    """One VSR row with its label normalised to yes/no and its entities resolved (see module docstring)."""

    line: int
    image: str
    caption: str
    label: str
    relation: str
    subject: str | None
    object: str | None
    entity_source: str | None
    entity_issue: str | None
    has_fields: bool
    image_link: str | None = None
    # Any, not object: the field `object` above shadows the builtin inside this class body
    annotator_id: Any = None
    reference_frame: Any = None


def parse_vsr_caption(caption: str, relation: str) -> tuple[str, str] | None:
    """(subject, object) from ``"The {s} [is] {relation} the {o}."``; None when the caption does not fit."""
    pattern = r"^The (?P<s>.+?) (?:is |are )?" + re.escape(relation) + r" the (?P<o>.+?)\s*\.?$"
    match = re.match(pattern, caption.strip())
    if match is None:
        return None
    return match.group("s").strip(), match.group("o").strip()


def _resolve(field_value: str, parsed: str) -> tuple[str | None, str | None]:
    """(entity, issue) for a structured value checked against the caption's noun: equal, a truncated suffix
    (the caption's full noun wins, issue ``"repaired"``), or a contradiction (None)."""
    if field_value == parsed:
        return parsed, None
    if field_value and parsed.endswith(field_value):
        return parsed, "repaired"
    return None, f"structured entity {field_value!r} contradicts caption entity {parsed!r}"


def resolve_entities(subj_field: object, obj_field: object, parsed: tuple[str, str] | None
                     ) -> tuple[str | None, str | None, str | None, str | None]:
    """(subject, object, entity_source, entity_issue) by the rule of the module docstring."""
    fields = [None if v is None else str(v).strip() for v in (subj_field, obj_field)]
    if not all(fields):
        if parsed is None:
            return None, None, None, "caption does not fit the VSR template"
        return parsed[0], parsed[1], "caption", None
    subj, obj = cast(list[str], fields)  # both non-empty strings: all(fields) above
    if parsed is None:
        return subj, obj, "fields", "caption does not fit the VSR template (structured subj/obj used unchecked)"
    (s, s_issue), (o, o_issue) = _resolve(subj, parsed[0]), _resolve(obj, parsed[1])
    contradictions = [i for i in (s_issue, o_issue) if i and i != "repaired"]
    if contradictions:
        return None, None, None, "; ".join(contradictions)
    return s, o, "fields-repaired" if "repaired" in (s_issue, o_issue) else "fields", None


def _check_row(record: dict, *, path: Path, record_label: str) -> None:
    """Required fields present; text fields strings (a list caption or a numeric relation would be read as
    its Python text, ``"['a', 'b']"`` or ``"5"``, and silently change the question)."""
    for name in _REQUIRED:
        if record.get(name) is None or str(record.get(name)).strip() == "":
            raise InputError("missing required field", path=path, record=record_label, field=name)
    for name in ("image", "caption", "relation"):
        if not isinstance(record[name], str):
            raise InputError(f"expected a string, got {type(record[name]).__name__} {record[name]!r:.40}",
                             path=path, record=record_label, field=name)
    if confine(".", record["image"]) is None:  # the ITEMS path is relative to --images and must stay inside it
        raise InputError(f"image path {record['image']!r:.80} leaves the images folder (absolute, or climbing "
                         "with '..'); give the file name relative to the VSR images folder", path=path,
                         record=record_label, field="image")
    for name in ("subj", "obj"):
        if record.get(name) is not None and not isinstance(record[name], str):
            raise InputError(f"expected a string or null, got {type(record[name]).__name__}", path=path,
                             record=record_label, field=name)


def duplicate_rows(rows: list[VsrRow]) -> list[tuple[int, int]]:
    """``(line, first_line)`` for each row that repeats an earlier row's image and caption (the same query:
    counted twice, it inflates n and narrows every interval)."""
    first: dict[tuple[str, str], int] = {}
    repeats = []
    for row in rows:
        key = (row.image, " ".join(row.caption.split()))
        if key in first:
            repeats.append((row.line, first[key]))
        else:
            first[key] = row.line
    return repeats


def read_vsr(path: str | Path, *, images: ImageFolder | None = None) -> list[VsrRow]:
    """Read a VSR split (either row shape); bad rows raise :class:`InputError` naming line and field.

    ``path`` is a jsonl split or a dataset source (:mod:`vlaudit.sources.rows`; ``images`` receives the
    dataset's images)."""
    path = Path(path)
    rows: list[VsrRow] = []
    for line, record in benchmark_rows(path, images=images, image_field="image"):
        _check_row(record, path=path, record_label=f"line {line}")
        label = parse_yes_no(record["label"], path=path, record=f"line {line}")
        caption = record["caption"].strip()
        relation = record["relation"].strip()
        parsed = parse_vsr_caption(caption, relation)
        has_fields = "subj" in record or "obj" in record
        subj, obj, source, issue = resolve_entities(record.get("subj"), record.get("obj"), parsed)
        rows.append(VsrRow(
            line=line, image=record["image"], caption=caption, label=label or "no", relation=relation,
            subject=subj, object=obj, entity_source=source, entity_issue=issue, has_fields=has_fields,
            image_link=record.get("image_link"), annotator_id=record.get("annotator_id"),
            reference_frame=record.get("reference_frame"),
        ))
    if not rows:
        raise InputError("no rows in VSR split", path=path)
    return rows


def read_meta_categories(path: str | Path) -> dict[str, str]:
    """``rel_meta_category_dict.txt`` (``Category: rel, rel, ...`` per line) → relation → meta-category.

    A relation listed under two categories upstream (``among``) keeps its first category.
    """
    path = Path(path)
    if not path.exists():
        raise InputError("file not found", path=path)
    mapping: dict[str, str] = {}
    try:
        raw = path.read_bytes()
        text = raw.decode("utf-8")
    except OSError as exc:
        raise InputError(f"cannot read: {exc.strerror}", path=path) from exc
    except UnicodeDecodeError as exc:
        bad_line = raw[:exc.start].count(b"\n") + 1
        raise InputError("not UTF-8 text", path=path, record=f"line {bad_line}") from exc
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        if ":" not in line:
            raise InputError("expected 'Category: relation, relation, ...'", path=path, record=f"line {number}")
        category, relations = line.split(":", 1)
        for relation in relations.split(","):
            relation = relation.strip()
            if relation:
                mapping.setdefault(relation, category.strip())
    return mapping


#: the meta-categories that hold VSR's direction relations (``rel_meta_category_dict.txt``)
DIRECTION_CATEGORIES = ("Projective", "Adjacency")


def check_strict_mapping(categories: dict[str, str], path: str | Path = "<meta>") -> dict[str, str]:
    """Check :data:`~vlaudit.relations.VSR_STRICT_RELATIONS` against VSR's relation list and return it.

    Every mapped relation (and its inverse phrasing) must be a VSR relation of a direction meta-category,
    and every relation of those categories must be either mapped or listed in
    :data:`~vlaudit.relations.VSR_NOT_STRICT` with its reason; anything else is a one-line error.
    """
    for relation, (_, inverse) in VSR_STRICT_RELATIONS.items():
        for name in (relation, inverse):
            if categories.get(name) not in DIRECTION_CATEGORIES:
                raise InputError(f"strict-family relation '{name}' is not a Projective/Adjacency VSR relation "
                                 f"({categories.get(name, 'absent')})", path=path)
    for relation, category in categories.items():
        if category in DIRECTION_CATEGORIES and relation not in VSR_STRICT_RELATIONS \
                and relation not in VSR_NOT_STRICT:
            raise InputError(f"{category} relation '{relation}' is neither mapped to a strict family nor "
                             "listed as not strict", path=path)
    return categories
