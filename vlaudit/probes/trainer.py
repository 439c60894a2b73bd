"""A small deterministic trainer for frozen-feature probes (cycle paper §3, §E.2, §E.3).

Data are a :class:`ProbeData`: image features (n_images, d_x) and text features (n_captions, d_y) as float32
numpy arrays, plus exact cycles as an (n_cycles, 4) int64 index array [image_1, caption_1, image_2, caption_2]
into them and/or independent pairs (image, caption) with 0/1 labels.

Training uses float32 logits; evaluation (model selection and reported metrics) recomputes the logits of a
float64 copy of the model on float64 features and forms the cycle contrast in float64 (§E.2), so additive,
image-only and text-only probes give Δ = 0 up to ~1e-15 — far inside the fixed tolerance 1e-9 — and hence
CycleAcc exactly ½ (Table 8). Defaults follow §E.3: 8 epochs, batch 512, lr 1e-3, weight decay 1e-4 (AdamW);
the other probe kinds' settings (§E.4, §E.5) are in :mod:`vlaudit.settings`.

Small training sets: batch 512 is one optimiser step per epoch on a few hundred cycles, so a probe would barely
move. Below one full batch the batch shrinks (:func:`effective_batch_size`; ``TrainConfig.min_steps``:
:data:`vlaudit.settings.MIN_OPTIMISER_STEPS`, not a paper setting): a small set takes at least ``min_steps``
optimiser steps — same epochs, same data per epoch — and the batch rises without a jump to the paper's 512,
which every set of at least 512 units trains at (§E.3). The earlier rule jumped at 512 units from batch 73
and 56 steps to batch 512 and 8 steps. A run at a smaller batch has a note in :attr:`TrainResult.notes`, and
every run records its batch and steps (:attr:`TrainResult.batch_size`, :attr:`TrainResult.steps`). The
optimiser is AdamW (:data:`OPTIMIZER`; the paper names none). A probe whose final weights score below chance
on its own training units (CycleAcc < ½ on the training cycles, AUROC < ½ on the training pairs) gets a
warning there too (:attr:`TrainResult.below_chance`).

Determinism: initialisation and shuffling draw only from explicit ``torch.Generator``s seeded by
``TrainConfig.seed``; no global RNG is read or set. On CPU the same seed gives bit-identical weights; on a GPU
reductions may differ in the last bits unless the caller enables deterministic algorithms.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import torch
from scipy.stats import rankdata

from vlaudit.errors import InputError
from vlaudit.metrics.cycles import DEFAULT_TOL, cycle_acc, cycle_contrast
from vlaudit.probes.losses import LOSSES, cycle_loss, four_entry_bce, pair_bce
from vlaudit.probes.scorers import make_scorer
from vlaudit.records import Cycle
from vlaudit.settings import MIN_OPTIMISER_STEPS, PROBE_BATCH_SIZE, PROBE_EPOCHS, PROBE_LR, PROBE_WEIGHT_DECAY

SELECTIONS = ("cycle_acc", "auroc", "last")
_EVAL_CHUNK = 65536


@dataclass
class ProbeData:
    """Frozen features plus the cycles and/or labelled pairs that index into them.

    ``cycles``: (n, 4) int64 rows [image_1, caption_1, image_2, caption_2]; the matched pairs are
    (image_1, caption_1) and (image_2, caption_2). ``pairs``: (n, 2) int64 rows [image, caption] with
    ``labels`` (n,) in {0, 1}.
    """

    image_features: np.ndarray
    text_features: np.ndarray
    cycles: np.ndarray | None = None
    pairs: np.ndarray | None = None
    labels: np.ndarray | None = None
    name: str = "data"

    def __post_init__(self) -> None:
        self.image_features = np.ascontiguousarray(self.image_features, dtype=np.float32)
        self.text_features = np.ascontiguousarray(self.text_features, dtype=np.float32)
        for label, feats in (("image_features", self.image_features), ("text_features", self.text_features)):
            if feats.ndim != 2:
                raise InputError(f"expected a 2-D array, got shape {feats.shape}", path=self.name, field=label)
            if not np.isfinite(feats).all():
                raise InputError("features contain NaN or inf", path=self.name, field=label)
        n_img, n_txt = len(self.image_features), len(self.text_features)
        if self.cycles is not None:
            self.cycles = _index_array(self.cycles, 4, "cycles", self.name)
            _check_bounds(self.cycles[:, [0, 2]], n_img, "cycles (image columns)", self.name)
            _check_bounds(self.cycles[:, [1, 3]], n_txt, "cycles (caption columns)", self.name)
        if self.pairs is not None:
            self.pairs = _index_array(self.pairs, 2, "pairs", self.name)
            _check_bounds(self.pairs[:, [0]], n_img, "pairs (image column)", self.name)
            _check_bounds(self.pairs[:, [1]], n_txt, "pairs (caption column)", self.name)
            if self.labels is None or len(self.labels) != len(self.pairs):
                raise InputError("pairs need one 0/1 label each", path=self.name, field="labels")
            self.labels = np.asarray(self.labels, dtype=np.float32)
            if not np.isin(self.labels, (0.0, 1.0)).all():
                raise InputError("labels must be 0 or 1", path=self.name, field="labels")

    @property
    def n_cycles(self) -> int:
        return 0 if self.cycles is None else len(self.cycles)

    @property
    def n_pairs(self) -> int:
        return 0 if self.pairs is None else len(self.pairs)


def _index_array(values: Any, width: int, label: str, name: str) -> np.ndarray:
    array = np.asarray(values)
    if array.ndim != 2 or array.shape[1] != width or (array.size and not np.issubdtype(array.dtype, np.integer)):
        raise InputError(f"expected an integer array of shape (n, {width}), got {array.shape} {array.dtype}",
                         path=name, field=label)
    return np.ascontiguousarray(array, dtype=np.int64)


def _check_bounds(index: np.ndarray, size: int, label: str, name: str) -> None:
    if index.size and (index.min() < 0 or index.max() >= size):
        row = int(np.flatnonzero(((index < 0) | (index >= size)).any(axis=1))[0])
        raise InputError(f"index out of range [0, {size})", path=name, record=f"row {row}", field=label)


def cycles_to_index(
    cycles: Sequence[Cycle], image_index: Mapping[str, int], caption_index: Mapping[str, int],
    *, source: str | None = None,
) -> np.ndarray:
    """Map :class:`Cycle` records to the (n, 4) index array of :class:`ProbeData` via id → row maps."""
    out = np.empty((len(cycles), 4), dtype=np.int64)
    for row, cycle in enumerate(cycles):
        for col, (field_name, table) in enumerate(
            (("image_1", image_index), ("caption_1", caption_index), ("image_2", image_index),
             ("caption_2", caption_index))
        ):
            key = getattr(cycle, field_name)
            if key not in table:
                raise InputError(f"no features for id {key!r}", path=source, record=cycle.cycle_id, field=field_name)
            out[row, col] = table[key]
    return out


#: the optimiser of every probe (the cycle paper states epochs, batch, lr and weight decay, §E.3, but no optimiser)
OPTIMIZER = "AdamW"

@dataclass(frozen=True)
class TrainConfig:
    """Optimisation settings; defaults from §E.3. ``loss`` ∈ {cycle, bce4, pair_bce}; ``select`` ∈ SELECTIONS;
    ``min_steps``: the fewest optimiser steps a run takes (the batch shrinks to reach it; 0 = never)."""

    epochs: int = PROBE_EPOCHS
    batch_size: int = PROBE_BATCH_SIZE
    lr: float = PROBE_LR
    weight_decay: float = PROBE_WEIGHT_DECAY
    seed: int = 0
    loss: str = "cycle"
    select: str = "cycle_acc"
    device: str = "cpu"
    tol: float = DEFAULT_TOL
    min_steps: int = MIN_OPTIMISER_STEPS

    def __post_init__(self) -> None:
        if self.loss not in LOSSES:
            raise ValueError(f"unknown loss {self.loss!r}; expected one of {LOSSES}")
        if self.select not in SELECTIONS:
            raise ValueError(f"unknown selection {self.select!r}; expected one of {SELECTIONS}")
        if self.epochs < 1 or self.batch_size < 1 or self.min_steps < 0:
            raise ValueError("epochs and batch_size must be ≥ 1, min_steps ≥ 0")


def effective_batch_size(n_units: int, config: TrainConfig) -> int:
    """The batch of a run on ``n_units`` (n), with B = ``config.batch_size`` and k = ``⌈min_steps / epochs⌉``:

        batch(n) = min(B, max(⌈n / k⌉, B − k·(B − n)))   (never below 1)

    From n = B on it is B itself — the paper's batch (§E.3: 512) on every set of at least one full batch. A small
    set (n ≤ B − B / k: 448 units for 512, 8 epochs, 50 steps) takes ``k`` steps per epoch, so at least
    ``min_steps`` in all; in between the batch rises linearly (k per unit) to B, so the steps fall smoothly from
    ``min_steps`` to ``epochs`` instead of jumping at n = B (the earlier rule: 511 units → batch 73 and 56
    steps, 512 → batch 512 and 8 steps)."""
    per_epoch = -(-config.min_steps // config.epochs)
    if n_units <= 0 or per_epoch <= 1 or n_units >= config.batch_size:
        return config.batch_size
    ramp = config.batch_size - per_epoch * (config.batch_size - n_units)
    return max(1, min(config.batch_size, max(-(-n_units // per_epoch), ramp)))


@dataclass
class TrainResult:
    """The trained scorer (weights of the selected epoch loaded), the per-epoch history, the batch and steps
    actually used, the final training-set metric (CycleAcc or AUROC) and notes (small-set batch, below chance)."""

    scorer: Any
    best_epoch: int
    best_value: float | None
    history: list[dict[str, float]] = field(default_factory=list)
    batch_size: int | None = None
    steps: int = 0
    train_value: float | None = None
    notes: list[str] = field(default_factory=list)
    #: the training units (cycles, or pairs for pair BCE) the batches were drawn from
    n_units: int = 0

    @property
    def below_chance(self) -> bool:
        """Whether the final weights score below chance on the probe's own training units (the warning)."""
        return self.train_value is not None and self.train_value < 0.5


def _tensor(array: np.ndarray, device: str, dtype: Any = None) -> Any:
    if isinstance(array, np.ndarray) and not array.flags.writeable:
        array = array.copy()  # e.g. features read from Parquet; torch refuses to alias read-only memory
    return torch.as_tensor(array, device=device, dtype=dtype)


def score_index(scorer: Any, x: np.ndarray, y: np.ndarray, image_idx: np.ndarray, caption_idx: np.ndarray,
                *, device: str = "cpu") -> np.ndarray:
    """float64 logits s(x[image_idx], y[caption_idx]) from a float64 copy of ``scorer`` (§E.2)."""
    model = copy.deepcopy(scorer).to(device=device, dtype=torch.float64).eval()
    x64, y64 = _tensor(x, device, torch.float64), _tensor(y, device, torch.float64)
    out = np.empty(len(image_idx), dtype=np.float64)
    with torch.no_grad():
        for start in range(0, len(image_idx), _EVAL_CHUNK):
            sl = slice(start, start + _EVAL_CHUNK)
            i = _tensor(image_idx[sl], device, torch.long)
            j = _tensor(caption_idx[sl], device, torch.long)
            out[sl] = model(x64[i], y64[j]).cpu().numpy()
    return out


def cycle_scores(scorer: Any, data: ProbeData, *, device: str = "cpu") -> np.ndarray:
    """The (n_cycles, 4) float64 block [s11, s22, s12, s21] of every cycle in ``data``."""
    if data.cycles is None:
        raise InputError("no cycles to score", path=data.name, field="cycles")
    c = data.cycles
    images = np.concatenate([c[:, 0], c[:, 2], c[:, 0], c[:, 2]])
    captions = np.concatenate([c[:, 1], c[:, 3], c[:, 3], c[:, 1]])
    flat = score_index(scorer, data.image_features, data.text_features, images, captions, device=device)
    return flat.reshape(4, len(c)).T.copy()


def cycle_contrasts(scorer: Any, data: ProbeData, *, device: str = "cpu") -> np.ndarray:
    """Δ per cycle in float64 via :func:`vlaudit.metrics.cycles.cycle_contrast`."""
    block = cycle_scores(scorer, data, device=device)
    return cycle_contrast(block[:, 0], block[:, 1], block[:, 2], block[:, 3])


def evaluate_cycle_acc(scorer: Any, data: ProbeData, *, tol: float = DEFAULT_TOL, device: str = "cpu") -> float:
    """Exact CycleAcc of ``scorer`` on the cycles of ``data`` (half credit for |Δ| ≤ tol)."""
    return cycle_acc(cycle_contrasts(scorer, data, device=device), tol)


def pair_scores(scorer: Any, data: ProbeData, *, device: str = "cpu") -> np.ndarray:
    """float64 logits of every labelled pair in ``data``."""
    if data.pairs is None:
        raise InputError("no pairs to score", path=data.name, field="pairs")
    return score_index(scorer, data.image_features, data.text_features, data.pairs[:, 0], data.pairs[:, 1],
                       device=device)


def rank_auroc(scores: np.ndarray, labels: np.ndarray) -> float:
    """AUROC = P(s₊ > s₋) + ½ P(s₊ = s₋) = (R₊ − n₊(n₊+1)/2) / (n₊ n₋), R₊ the sum of the positives' average ranks.

    The Mann–Whitney form: equal to ``sklearn.metrics.roc_auc_score`` but without its per-call input
    validation, which dominated the synthetic controls (≈150 calls per seed). NaN when a class is empty.
    """
    scores = np.asarray(scores, dtype=np.float64)
    positive = np.asarray(labels) == 1
    n_pos = int(positive.sum())
    n_neg = positive.size - n_pos
    if n_pos == 0 or n_neg == 0:
        return float("nan")
    rank_sum = float(rankdata(scores)[positive].sum())
    return (rank_sum - n_pos * (n_pos + 1) / 2.0) / (n_pos * n_neg)


def evaluate_auroc(scorer: Any, data: ProbeData, *, device: str = "cpu") -> float:
    """AUROC of pair logits against pair labels (an unblocked two-sample diagnostic, Table 1)."""
    scores = pair_scores(scorer, data, device=device)
    labels = data.labels
    if labels is None or len(np.unique(labels)) < 2:
        raise InputError("AUROC needs pairs with both labels 0 and 1", path=data.name, field="labels")
    return rank_auroc(scores, labels)


def _selection_value(scorer: Any, val: ProbeData, config: TrainConfig) -> float:
    if config.select == "cycle_acc":
        return evaluate_cycle_acc(scorer, val, tol=config.tol, device=config.device)
    return evaluate_auroc(scorer, val, device=config.device)


def train_probe(scorer: Any, train: ProbeData, val: ProbeData | None = None,
                config: TrainConfig | None = None) -> TrainResult:
    """Train ``scorer`` in place with ``config.loss``; load the weights of the best validation epoch.

    Selection (``config.select``): ``cycle_acc`` — exact CycleAcc on ``val.cycles``; ``auroc`` — pair AUROC on
    ``val.pairs``; ``last`` (or no ``val``) — the final epoch. Ties keep the earliest epoch.
    """
    config = config or TrainConfig()
    device = config.device
    units = train.cycles if config.loss in ("cycle", "bce4") else train.pairs
    if units is None or len(units) == 0:
        needed = "cycles" if config.loss in ("cycle", "bce4") else "pairs"
        raise InputError(f"loss {config.loss!r} needs training {needed}", path=train.name, field=needed)
    select = config.select if val is not None else "last"
    scorer.to(device=device, dtype=torch.float32).train()
    x = _tensor(train.image_features, device, torch.float32)
    y = _tensor(train.text_features, device, torch.float32)
    index = _tensor(units, device, torch.long)
    labels = None
    if config.loss == "pair_bce":
        assert train.labels is not None  # ProbeData refuses pairs without labels
        labels = _tensor(train.labels, device, torch.float32)
    params = [p for p in scorer.parameters() if p.requires_grad]
    if not params:  # e.g. fixed-temperature cosine: nothing to fit, only evaluate
        value = None if select == "last" or val is None else _selection_value(scorer.eval(), val, config)
        return TrainResult(scorer=scorer, best_epoch=0, best_value=value, history=[])
    optimizer = torch.optim.AdamW(params, lr=config.lr, weight_decay=config.weight_decay)  # OPTIMIZER
    generator = torch.Generator().manual_seed(int(config.seed))
    batch_size = effective_batch_size(len(units), config)
    notes = []
    if batch_size != config.batch_size:
        notes.append(f"small training set ({len(units)} units): batch {batch_size} instead of "
                     f"{config.batch_size}, so {config.epochs} epochs take ≥ {config.min_steps} optimiser steps "
                     "(not a paper setting)")
    steps = 0

    best_value: float | None = None
    best_epoch = config.epochs
    best_state: dict[str, Any] | None = None
    history: list[dict[str, float]] = []
    for epoch in range(1, config.epochs + 1):
        scorer.train()
        order = torch.randperm(len(units), generator=generator).to(device)
        total, count = 0.0, 0
        for start in range(0, len(units), batch_size):
            batch = order[start:start + batch_size]
            rows = index[batch]
            if config.loss == "pair_bce":
                assert labels is not None  # set above for this loss
                loss = pair_bce(scorer(x[rows[:, 0]], y[rows[:, 1]]), labels[batch])
            else:
                images = torch.cat([rows[:, 0], rows[:, 2], rows[:, 0], rows[:, 2]])
                captions = torch.cat([rows[:, 1], rows[:, 3], rows[:, 3], rows[:, 1]])
                blocks = scorer(x[images], y[captions]).reshape(4, len(rows)).T
                loss = cycle_loss(blocks) if config.loss == "cycle" else four_entry_bce(blocks)
            optimizer.zero_grad(set_to_none=True)
            loss.backward()
            optimizer.step()
            steps += 1
            total += float(loss.detach()) * len(rows)
            count += len(rows)
        record = {"epoch": epoch, "train_loss": total / count}
        if select != "last" and val is not None:  # select is "last" whenever val is None
            value = _selection_value(scorer, val, config)
            record[f"val_{select}"] = value
            if best_value is None or value > best_value:
                best_value, best_epoch = value, epoch
                best_state = {k: v.detach().clone() for k, v in scorer.state_dict().items()}
        history.append(record)
    if best_state is not None:
        scorer.load_state_dict(best_state)
    scorer.eval()
    train_value = _training_value(scorer, train, config)
    if train_value is not None and train_value < 0.5:
        metric = "AUROC" if config.loss == "pair_bce" else "CycleAcc"
        notes.append(f"warning: below chance on its own training {'pairs' if metric == 'AUROC' else 'cycles'} "
                     f"({metric} {train_value:.3f} < 0.5): the probe did not learn; do not read its test value")
    return TrainResult(scorer=scorer, best_epoch=best_epoch, best_value=best_value, history=history,
                       batch_size=batch_size, steps=steps, train_value=train_value, notes=notes,
                       n_units=len(units))


def _training_value(scorer: Any, train: ProbeData, config: TrainConfig) -> float | None:
    """CycleAcc on the training cycles (cycle losses) or AUROC on the training pairs (pair BCE)."""
    if config.loss == "pair_bce":
        if train.labels is None or len(np.unique(train.labels)) < 2:
            return None
        return evaluate_auroc(scorer, train, device=config.device)
    return evaluate_cycle_acc(scorer, train, tol=config.tol, device=config.device)


def fit_probe(kind: str, train: ProbeData, val: ProbeData | None = None, config: TrainConfig | None = None,
              *, rank: int | None = None, additive_heads: bool = False) -> TrainResult:
    """:func:`make_scorer` (seeded by ``config.seed``) for the feature dims of ``train``, then :func:`train_probe`."""
    config = config or TrainConfig()
    scorer = make_scorer(kind, train.image_features.shape[1], train.text_features.shape[1], rank=rank,
                         additive_heads=additive_heads, seed=config.seed)
    return train_probe(scorer, train, val, config)
