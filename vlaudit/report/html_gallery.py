"""Galleries: correct-but-uncredited items (C-U, VCA §3) and failed strict cycles (Δ < −tol, cycle paper §2.1).

A C-U card shows the image, the question, gold and prediction, the verdict with G_img, and the scores under
every scored context (from the run's ``margins.parquet``): a yes/no item's margin m_c, a multiple-choice
item's options with log p_c(letter) of each (VCA §3). A failed-cycle card shows both images and both captions of a
strict-family cycle whose matched pairs scored below their swaps. Everything is read from the run's files;
whatever cannot be found (an image, a margins file) is shown as missing, never fatal.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow.parquet as pq

from vlaudit.files import read_table
from vlaudit.metrics.cycles import DEFAULT_TOL, block_scores, cycle_contrast
from vlaudit.report.html_discover import Artifacts
from vlaudit.report.html_page import Safe, esc, img, is_number, thumbnail
from vlaudit.sources.cycle_tables import read_cycles, read_scores
from vlaudit.sources.items import read_items
from vlaudit.sources.margins import CONTEXTS

TRUE = {True, "true", "True", "1"}


def _rows(path: Path) -> list[dict[str, Any]]:
    return read_table(path).to_pylist()


def vca_item_rows(art: Artifacts) -> list[dict[str, Any]]:
    """All ``items.csv`` rows of ``vca report`` outputs (unreadable files are noted and skipped)."""
    out: list[dict[str, Any]] = []
    for path in art.vca_items:
        try:
            out.extend(_rows(path))
        except Exception as exc:  # noqa: BLE001
            art.problems.append(f"{art.rel(path)}: {exc}")
    return out


def gap_groups(rows: Sequence[Mapping[str, Any]]) -> list[tuple[str, list[float]]]:
    """G_img values per (model · dataset · interface), in first-seen order."""
    groups: dict[str, list[float]] = {}
    for row in rows:
        if is_number(row.get("g_img")):
            label = f"{row.get('model')} · {row.get('dataset')} · {row.get('interface')}"
            groups.setdefault(label, []).append(float(row["g_img"]))
    return list(groups.items())


def _find_image(name: Any, dirs: Sequence[Path]) -> Path | None:
    if not isinstance(name, str) or not name:
        return None
    candidate = Path(name)
    if candidate.is_absolute():
        return candidate if candidate.is_file() else None
    for folder in dirs:
        for path in (folder / candidate, folder / candidate.name):
            if path.is_file():
                return path
    return None


def _benchmark_items(art: Artifacts) -> dict[str, tuple[Any, Path]]:
    """item_id → (BenchmarkItem, its table's folder) over every benchmark items table found."""
    out: dict[str, tuple[Any, Path]] = {}
    for path in art.benchmarks:
        try:
            for item in read_items(path):
                out.setdefault(item.item_id, (item, path.parent))
        except Exception as exc:  # noqa: BLE001
            art.problems.append(f"{art.rel(path)}: {exc}")
    return out


#: one item's scores under one context: its yes/no margin, or its options' (letters, log-probs)
Scores = float | tuple[list[str], list[float]]

MARGIN_READ = ("model", "dataset", "interface", "item_id", "context", "margin", "option_letters", "logp_options")


def _margins(art: Artifacts, wanted: set[tuple[str, str, str, str]]) -> dict[tuple, dict[str, Scores]]:
    """(model, dataset, interface, item_id) → {context: margin, or (letters, log-probs) of a letter row} for
    the wanted items only."""
    out: dict[tuple, dict[str, Scores]] = {}
    ids = {key[3] for key in wanted}
    for path in art.margins:
        try:
            names = set(pq.read_schema(path).names)
            columns = [c for c in MARGIN_READ if c in names]
            # only the shown items' rows: a real margins table may hold millions
            try:
                table = pq.read_table(path, columns=columns, filters=[("item_id", "in", sorted(ids))])
            except Exception:  # noqa: BLE001  (e.g. integer item ids: read all, compare as strings)
                table = pq.read_table(path, columns=columns)
            for row in table.to_pylist():
                if str(row.get("item_id")) not in ids:
                    continue
                key = (str(row.get("model")), str(row.get("dataset")), str(row.get("interface", "yesno")),
                       str(row["item_id"]))
                if key not in wanted:
                    continue
                logps, letters = row.get("logp_options"), row.get("option_letters")
                if isinstance(logps, list) and logps and all(is_number(v) for v in logps):
                    shown = list(letters) if isinstance(letters, str) and len(letters) == len(logps) else [
                        chr(ord("A") + k) for k in range(len(logps))]
                    out.setdefault(key, {})[str(row["context"])] = (shown, [float(v) for v in logps])
                elif is_number(row.get("margin")):
                    out.setdefault(key, {})[str(row["context"])] = float(row["margin"])
        except Exception as exc:  # noqa: BLE001
            art.problems.append(f"{art.rel(path)}: {exc}")
    return out


def _ordered(contexts: Mapping[str, Any]) -> list[str]:
    return [c for c in CONTEXTS if c in contexts] + sorted(c for c in contexts if c not in CONTEXTS)


def _margin_table(margins: Mapping[str, Scores]) -> Safe:
    """A yes/no item: its margin m_c under every context."""
    rows = "".join(f'<tr><td>{esc(c)}</td><td class="num">{margins[c]:+.4f}</td></tr>'
                   for c in _ordered(margins) if isinstance(margins[c], float))
    return Safe(f'<table><thead><tr><th>context</th><th class="num">margin m</th></tr></thead>'
                f"<tbody>{rows}</tbody></table>")


def _option_table(scores: Mapping[str, Scores], options: Sequence[str], gold: Any, pred: Any) -> Safe:
    """A multiple-choice item: one row per option (its letter and text, gold and prediction marked), one
    column per context holding log p_c(letter)."""
    contexts = [c for c in _ordered(scores) if isinstance(scores[c], tuple)]
    letters = next((entry[0] for c in contexts if isinstance(entry := scores[c], tuple)), [])
    head = "".join(f'<th class="num">{esc(c)}</th>' for c in contexts)
    rows = []
    for k, letter in enumerate(letters):
        text = options[k] if k < len(options) else ""
        marks = [m for m, on in (("gold", letter == str(gold)), ("predicted", letter == str(pred))) if on]
        label = f"<b>{esc(letter)}</b>. {esc(text)}" + (f' <span class="mark">{esc(" · ".join(marks))}</span>'
                                                        if marks else "")
        cells = []
        for c in contexts:
            entry = scores[c]
            value = entry[1][k] if isinstance(entry, tuple) and k < len(entry[1]) else None
            cells.append(f'<td class="num">{"—" if value is None else f"{value:.3f}"}</td>')
        rows.append(f'<tr class="{"chosen" if letter == str(pred) else ""}"><td>{label}</td>{"".join(cells)}</tr>')
    return Safe(f'<table class="options"><thead><tr><th>option</th>{head}</tr></thead>'
                f'<tbody>{"".join(rows)}</tbody></table>')


def _verdict(row: Mapping[str, Any]) -> Safe:
    """Credited (D-CC: correct and G_img > 0) or uncredited (C-U: correct, G_img ≤ 0), as ``items.csv`` says."""
    gap = row.get("g_img")
    shown = f"G_img = {gap:+.3f}" if is_number(gap) else "G_img not recorded"
    if row.get("dcc") in TRUE:
        return Safe(f'<p class="verdict credited">credited to the image: {esc(shown)} &gt; 0</p>')
    if row.get("cu") in TRUE:
        return Safe(f'<p class="verdict uncredited">correct but uncredited: {esc(shown)} ≤ 0 — the image did not '
                    "raise the answer beyond the no-image controls</p>")
    return Safe(f'<p class="verdict">{esc(shown)}</p>')


def cu_gallery(art: Artifacts, rows: Sequence[Mapping[str, Any]], per_run: int = 6) -> list[tuple[str, Safe]]:
    """(run label, cards) per run: the C-U items with the lowest G_img first."""
    by_run: dict[tuple[str, str, str], list[Mapping[str, Any]]] = {}
    for row in rows:
        if row.get("cu") in TRUE:
            key = (str(row.get("model")), str(row.get("dataset")), str(row.get("interface")))
            by_run.setdefault(key, []).append(row)
    if not by_run:
        return []
    chosen = {key: sorted(items, key=lambda r: (r.get("g_img") if is_number(r.get("g_img")) else 0.0,
                                                str(r.get("item_id"))))[:per_run]
              for key, items in by_run.items()}
    wanted = {(*key, str(r.get("item_id"))) for key, items in chosen.items() for r in items}
    margins = _margins(art, wanted)
    bench = _benchmark_items(art)
    out = []
    for key, items in chosen.items():
        cards = []
        for row in items:
            item_id = str(row.get("item_id"))
            item, folder = bench.get(item_id, (None, None))
            image = _find_image(getattr(item, "image", None), [*([folder] if folder else []), *art.image_dirs])
            question = getattr(item, "question", None) or row.get("statement") or "(question not found)"
            meta = f"{item_id} · gold {row.get('label')} · predicted {row.get('pred')}"
            found = margins.get((*key, item_id))
            if not found:
                scores = esc("scores not found (no margins table of this run in the folder)")
            elif any(isinstance(v, tuple) for v in found.values()):
                scores = _option_table(found, list(getattr(item, "options", None) or ()), row.get("label"),
                                       row.get("pred"))
            else:
                scores = _margin_table(found)
            cards.append(Safe(
                f'<div class="card">{img(thumbnail(image) if image else None, getattr(item, "image", item_id))}'
                f'<p class="q">{esc(question)}</p><p class="meta">{esc(meta)}</p>{_verdict(row)}{scores}</div>'))
        choices = any(isinstance(v, tuple) for r in items
                      for v in margins.get((*key, str(r.get("item_id"))), {}).values())
        out.append((" · ".join(key), Safe(f'<div class="gallery{" choices" if choices else ""}">'
                                          f'{"".join(cards)}</div>')))
    return out


def _cycle_pairs(art: Artifacts) -> list[tuple[Path, Path]]:
    """(cycles table, scores table) pairs: from ``cycles eval`` results, else every table against every scores."""
    pairs: list[tuple[Path, Path]] = []
    for _, _, result in art.cycle_evals:
        c, s = result.get("cycles"), result.get("scores")
        if isinstance(c, str) and isinstance(s, str) and Path(c).is_file() and Path(s).is_file():
            pairs.append((Path(c), Path(s)))
    named = {p for _, p in pairs}
    pairs += [(c, s) for s in art.score_tables if s not in named for c in art.cycle_tables]
    return list(dict.fromkeys(pairs))


def failed_cycles(art: Artifacts, per_family: int = 3, max_cards: int = 24) -> list[tuple[str, Safe]]:
    """(heading, cards): strict-family test cycles with Δ < −tol, most negative first, per scores table."""
    cache: dict[Path, Any] = {}

    def load(path: Path, reader: Any) -> Any:
        if path not in cache:
            try:
                cache[path] = reader(path)
            except Exception as exc:  # noqa: BLE001
                art.problems.append(f"{art.rel(path)}: {exc}")
                cache[path] = None
        return cache[path]

    out: list[tuple[str, Safe]] = []
    shown = 0
    for cycles_path, scores_path in _cycle_pairs(art):
        if "additive" in scores_path.stem or shown >= max_cards:
            continue
        cycles, scores = load(cycles_path, read_cycles), load(scores_path, read_scores)
        if not cycles or not scores:
            continue
        strict = [c for c in cycles if "strict" in c.family]
        if any(c.split == "test" for c in strict):
            strict = [c for c in strict if c.split == "test"]
        covered = [c for c in strict if all((u, v) in scores for u, v, _ in c.entries())]
        if not covered:
            continue
        m = block_scores(covered, scores)
        delta = cycle_contrast(m[:, 0], m[:, 1], m[:, 2], m[:, 3])
        dirs = [*art.image_dirs, cycles_path.parent, cycles_path.parent / "images"]
        for family in sorted({c.family for c in covered}):
            idx = [i for i, c in enumerate(covered) if c.family == family and delta[i] < -DEFAULT_TOL]
            idx = sorted(idx, key=lambda i: delta[i])[: min(per_family, max_cards - shown)]
            if not idx:
                continue
            n_family = sum(c.family == family for c in covered)
            cards = [_cycle_card(covered[i], float(delta[i]), dirs) for i in idx]
            shown += len(cards)
            heading = (f"{scores_path.stem} · {family} · {covered[idx[0]].split or 'unsplit'}: "
                       f"{int(np.sum([delta[i] < -DEFAULT_TOL for i, c in enumerate(covered) if c.family == family]))}"
                       f" of {n_family} cycles failed")
            out.append((heading, Safe(f'<div class="gallery pairs">{"".join(cards)}</div>')))
    return out


def _cycle_card(cycle: Any, delta: float, dirs: Sequence[Path]) -> Safe:
    halves = []
    for k in (1, 2):
        name = cycle.extra.get(f"file_name_{k}") or cycle.extra.get(f"image_path_{k}")
        path = _find_image(name, dirs)
        image_id = getattr(cycle, f"image_{k}")
        text = cycle.extra.get(f"text_{k}") or f"caption {getattr(cycle, f'caption_{k}')}"
        halves.append(f'<div>{img(thumbnail(path) if path else None, name or image_id)}'
                      f'<div class="cap"><b>{k}.</b> {esc(text)}</div></div>')
    return Safe(f'<div class="card"><p class="meta">{esc(cycle.cycle_id)} · Δ = {delta:+.4f}</p>'
                f'<div class="pair">{"".join(halves)}</div></div>')
