"""How a command resamples: one typed, frozen record of the statistics options every resampling command takes.

:class:`StatsOptions` holds the bootstrap and permutation settings (``seed``, ``level``, ``resamples``,
``cluster``, ``permutations``) and the headline ``controls`` of the VCA gap, so that each is declared once:
each field's ``metadata`` holds its command-line ``flag``, its one ``help`` text and its range (``min``,
``max``), from which the command layer builds the flags of every command that resamples
(``@stats_options`` in ``vlaudit/commands/_stats_options.py``), as :mod:`vlaudit.backends.options` does for a
backend's options. The defaults are the VCA paper's (§19: 5,000 paired bootstrap resamples, seed 20260719,
two-sided 95% intervals; §3: the primary controls text and blank; vlaudit's 10,000 sign flips of a permutation
test that is not exact, :data:`vlaudit.settings.COMPARE_PERMUTATIONS`); a command whose setting differs (the
cycle commands' bootstrap seed 0, the factorial's and the edits' seed 20260724) keeps its own default on its
flag and passes it in the record.

A record is checked as it is built: a bad value is one :class:`~vlaudit.errors.InputError` naming the flag.
:func:`spreads_stats` lets a library function take the record (``stats=``) beside its loose keywords.
numpy-free (the context names come from :mod:`vlaudit.sources.context_names`): the command layer reads these
fields to build its flags (``vlaudit --help``).
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, fields
from typing import ParamSpec, TypeVar

from vlaudit.errors import InputError
from vlaudit.settings import (
    BOOTSTRAP_RESAMPLES,
    BOOTSTRAP_SEED,
    COMPARE_PERMUTATIONS,
    CONFIDENCE_LEVEL,
    PRIMARY_CONTROLS,
)
from vlaudit.sources.context_names import normalize_context

__all__ = ["StatsOptions", "parse_controls", "spreads_stats"]

SEED_HELP = ("Seed of the resampling: the bootstrap draws, and the permutations and cross-fitting folds where "
             "the command draws them (same seed, same numbers).")
LEVEL_HELP = "Confidence level of every interval."
RESAMPLES_HELP = ("Bootstrap resamples of every interval (paired where models are compared; each draw takes "
                  "whole resampling units).")
CLUSTER_HELP = (
    "Resampling unit: the values resampled (and sign-flipped) together. Margins (vca report, compare vca): a "
    "margins column (image, item_id, group_id, ...); default: the unit the items declare (stem, edit, image). "
    "Cycles (cycles eval, compare cycles): the cycle (default; cycles that share an image are then resampled as "
    "independent), image (cycles that share an image joined), image_1, image_2, family or a column of the "
    "cycles table; compare cycles also takes two-way (the intervals resample image_1 and image_2 independently; "
    "the tests as image).")
PERMUTATIONS_HELP = ("Random sign flips of a paired permutation test that is not computed exactly (compare vca: "
                     "the cluster permutation test; compare cycles: ΔCycleAcc past exact enumeration, fractional "
                     "2×2 metrics).")
CONTROLS_HELP = "Headline control contexts of the gap G_img = r_o − max_c r_c, comma-separated."

P = ParamSpec("P")
R = TypeVar("R")


def _whole(flag: str, value: object, minimum: int) -> None:
    if isinstance(value, bool) or not isinstance(value, int):
        raise InputError(f"must be a whole number, got {value!r}", field=flag)
    if value < minimum:
        raise InputError(f"must be at least {minimum}, got {value}", field=flag)


def parse_controls(controls: str | Sequence[str]) -> tuple[str, ...]:
    """The headline controls as normalised context names (``"Text, blank"`` → ``("text", "blank")``): a comma
    list or a sequence of names (blank ones skipped), each a known context other than ``original``, at least
    one. A bad one is an :class:`InputError` naming ``--controls``."""
    names = controls.split(",") if isinstance(controls, str) else list(controls)
    try:
        parsed = tuple(normalize_context(name) for name in names if str(name).strip())
    except InputError as error:  # "field 'context': unknown context ..." → the flag that gave it
        raise InputError(str(error).removeprefix("field 'context': "), field="--controls") from None
    if not parsed or "original" in parsed:
        raise InputError("give one or more control contexts other than 'original'", field="--controls")
    return parsed


@dataclass(frozen=True)
class StatsOptions:
    """The statistics options of a command that resamples (VCA §19; docs/concepts/statistics.md).

    Fields: ``controls``, the headline control contexts of G_img = r_o − max_c r_c (normalised names; a
    comma list is accepted); ``resamples``, the bootstrap resamples; ``seed`` of the bootstrap (and of the
    permutations and folds a command draws); ``level``, the two-sided confidence level of every interval, in
    (0, 1) (the flag takes 0.5–0.999); ``permutations``, the random sign flips of a permutation test that is
    not exact; ``cluster``, the resampling unit (None: the unit the items declare, or the cycle).

    Every command that resamples shows the flag of each field; a field whose metadata says ``"some": True``
    only in the commands that name it (``--controls`` where there is a VCA gap, ``--level``,
    ``--permutations``, ``--cluster`` where the command takes them). A command reads the fields it uses.
    Example::

        vlaudit.vca_report("run/", stats=vlaudit.StatsOptions(resamples=1000, cluster="image"))
    """

    controls: tuple[str, ...] = field(default=PRIMARY_CONTROLS, metadata={
        "flag": "--controls", "help": CONTROLS_HELP, "some": True})
    resamples: int = field(default=BOOTSTRAP_RESAMPLES, metadata={
        "flag": "--resamples", "min": 1, "help": RESAMPLES_HELP})
    seed: int = field(default=BOOTSTRAP_SEED, metadata={"flag": "--seed", "min": 0, "help": SEED_HELP})
    level: float = field(default=CONFIDENCE_LEVEL, metadata={
        "flag": "--level", "min": 0.5, "max": 0.999, "help": LEVEL_HELP, "some": True})
    permutations: int = field(default=COMPARE_PERMUTATIONS, metadata={
        "flag": "--permutations", "min": 1, "help": PERMUTATIONS_HELP, "some": True})
    cluster: str | None = field(default=None, metadata={
        "flag": "--cluster", "metavar": "UNIT", "help": CLUSTER_HELP, "some": True})

    def __post_init__(self) -> None:
        _whole("--seed", self.seed, 0)
        _whole("--resamples", self.resamples, 1)
        _whole("--permutations", self.permutations, 1)
        level = self.level
        if isinstance(level, bool) or not isinstance(level, (int, float)) or not math.isfinite(level) \
                or not 0 < level < 1:  # `not 0 < level < 1`: NaN is refused too
            raise InputError(f"must be a number strictly between 0 and 1, got {level!r}", field="--level")
        object.__setattr__(self, "level", float(level))
        if self.cluster is not None and (not isinstance(self.cluster, str) or not self.cluster.strip()):
            raise InputError(f"give a column or unit name, got {self.cluster!r}", field="--cluster")
        object.__setattr__(self, "controls", parse_controls(self.controls))


def spreads_stats(**keywords: str) -> Callable[[Callable[P, R]], Callable[P, R]]:
    """Let a library function take its statistics options as one ``stats=`` :class:`StatsOptions` record
    beside its own keywords: ``keywords`` maps a record field to the function's keyword
    (``resamples="n_resamples"``).

    Given a record, its fields are passed as those keywords (the record's values, defaults included, replace
    the function's: ``StatsOptions()`` carries the VCA §19 seed, so a cycle function then draws with it, not
    with its own seed 0). Refused, each in one line naming ``stats``: a record beside one of those keywords
    (one of the two would be dropped unseen), and a record whose field the function does not read set away
    from the record's default (a setting that would change nothing). The function declares
    ``stats: StatsOptions | None = None`` for its readers and type checkers; its body never sees the record."""
    known = {f.name: f for f in fields(StatsOptions)}
    unknown = sorted(set(keywords) - set(known))
    if unknown:
        raise TypeError(f"StatsOptions has no field {', '.join(unknown)}")
    unread = [f for name, f in known.items() if name not in keywords]

    def decorate(function: Callable[P, R]) -> Callable[P, R]:
        @functools.wraps(function)
        def spread(*args: P.args, **kwargs: P.kwargs) -> R:
            stats = kwargs.pop("stats", None)
            if stats is None:
                return function(*args, **kwargs)
            if not isinstance(stats, StatsOptions):
                raise InputError(f"expected a StatsOptions record, got {type(stats).__name__}", field="stats")
            both = [name for name in keywords.values() if name in kwargs]
            if both:
                raise InputError(f"given in stats= and as {', '.join(both)}=: give each option once",
                                 field="stats")
            ignored = [f.name for f in unread if getattr(stats, f.name) != f.default]
            if ignored:
                raise InputError(f"{function.__name__} takes no {', '.join(ignored)} (set in stats=)", field="stats")
            kwargs.update({name: getattr(stats, attribute) for attribute, name in keywords.items()})
            return function(*args, **kwargs)

        return spread

    return decorate
