"""Sample-size re-estimation from a pilot (checks sized from their power, not from one seed).

A check whose intervals shrink like ``N^{-1/2}`` runs a pilot at its declared size; if the pilot's widest interval is
above a declared fraction of its maximum width, it draws more of the same kind and decides on all draws pooled.  An
equality decision's maximum width is the width at which it verifies a value at its target with probability 95 %
(``numerics.stats.width_for_power``, recorded by ``theorems.evidence``), so a pilot sizes it for power; a bound's is
the ``max_width`` its check declares.  The
pilot sets only how many draws, from their spread, never from the estimate's distance to the claim, so the decision's
coverage is as it was to first order (Stein 1945; Wittes and Brittain 1990).  Decisions and maxima are unchanged.
:func:`sized_by_pilot` (B.T4) grows to a declared fraction of it; :func:`two_looks` (A.T1.1, A.T3-A.T5) is
group-sequential: it also stops at the pilot when its decisions are already decided there (or one fails), at the price
of deciding each look at half the level.
"""
from __future__ import annotations

import math
from typing import Callable, TypeVar

R = TypeVar("R")

#: the width a pilot sizes an equality decision to, as a fraction of its 95 %-power width (``max_width``): the
#: 95 %-power width itself, the power every decision is to have at the claim's own value
POWER_WIDTH = 1.0


def planned_growth(width_ratio: float, target: float, cap: int) -> int:
    """How many times the pilot's draws to take in all: a pilot whose widest interval is ``width_ratio`` times its
    declared maximum needs ``(width_ratio / target)^2`` times the draws to land at ``target`` times it; at least 1
    (no growth), at most ``cap``."""
    if not math.isfinite(width_ratio):
        return cap
    return int(min(cap, max(1, math.ceil((width_ratio / target) ** 2))))


def widest_ratio(decisions: list[dict], expected: int | None = None) -> float:
    """The widest interval of an evidence's decisions relative to its declared maximum (``Evidence.decisions``);
    ``inf`` when fewer than ``expected`` decisions were made (a decision left out counts as too wide)."""
    if expected is not None and len(decisions) != expected:
        return math.inf
    return max((d["hi"] - d["lo"]) / d["max_width"] for d in decisions)


def sized_by_pilot(decide_at: Callable[[int], tuple[float, R]], target: float, cap: int,
                   trigger: float | None = None) -> tuple[R, int]:
    """Decide at the pilot's size, and at a larger one where the pilot says so.

    ``decide_at(g)`` decides on ``g`` times the pilot's draws, pooled, and returns ``(ratio, result)``: the widest
    interval relative to its maximum (``inf`` when a decision is missing) and what the check reports.  Stage 1 is
    ``g = 1``; above ``trigger`` (default: ``target``) the planned growth follows; if that stage is still too wide to
    decide (ratio > 1: heavy-tailed draws can widen an interval as more come in) and below ``cap``, one re-plan from
    its own width, ``g * (ratio / target)^2``, at most ``cap``.  Returns the deciding stage's result and its growth.
    """
    ratio, result = decide_at(1)
    if ratio <= (target if trigger is None else trigger):
        return result, 1
    growth = planned_growth(ratio, target, cap)
    if growth == 1:
        return result, 1
    ratio, result = decide_at(growth)
    if ratio > 1 and growth < cap:
        growth = cap if not math.isfinite(ratio) else min(cap, math.ceil(growth * (ratio / target) ** 2))
        ratio, result = decide_at(growth)
    return result, growth


#: the looks of :func:`two_looks`: a check using it builds its evidence with LOOKS times its decisions, so that each
#: look decides at half the check's level (Bonferroni over the looks)
LOOKS = 2


def two_looks(decide_at: Callable[[int], tuple[float, list[dict], R]], target: float, cap: int) -> tuple[R, int]:
    """Group-sequential sizing with two looks: stop at the pilot when every decision is decided there, else grow by
    the pilot's widths and decide once more on all draws pooled.

    ``decide_at(g)`` decides on ``g`` times the pilot's draws and returns ``(ratio, rows, result)``: the widest
    interval relative to its maximum (``inf`` when a decision is missing), the decision rows (``Evidence.decisions``)
    and what the check reports.  Look 1 is ``g = 1``: when every row passes or fails there, or one fails (the check
    fails whatever the others do), it is the result.
    Otherwise the growth follows the pilot's widths only (:func:`planned_growth` to ``target``, at most ``cap``), and
    look 2 decides on all draws pooled (when the growth is 1, look 1's result stands).

    The error rates.  Each look decides at level ``alpha_each / LOOKS`` (the caller's evidence counts ``LOOKS``
    times its decisions), so a decision's probability of a false pass, or of a false fail, summed over the looks is at
    most that of one look at ``alpha_each`` (Bonferroni; ``tests/test_pilot.py`` measures it by simulation).  The
    saving: a check decided at the pilot, a control's mutant far outside its band above all, skips the growth.
    Returns the deciding look's result and its ``g``."""
    ratio, rows, result = decide_at(1)
    statuses = [r["status"] for r in rows]
    if statuses and (all(st in ("pass", "fail") for st in statuses) or "fail" in statuses):
        return result, 1
    growth = planned_growth(ratio, target, cap)
    if growth == 1:
        return result, 1
    _, _, result = decide_at(growth)
    return result, growth

