"""Sample-size re-estimation from a pilot (issue #13: checks sized from their power, not from one seed).

A check whose intervals shrink like ``N^{-1/2}`` runs a pilot at its declared size; if the pilot's widest interval is
above a declared fraction of its maximum width, it draws more of the same kind and decides on all draws pooled.  The
pilot sets only how many draws, from their spread, never from the estimate's distance to the claim, so the decision's
coverage is as it was to first order (Stein 1945; Wittes and Brittain 1990).  Decisions and maxima are unchanged.
"""
from __future__ import annotations

import math


def planned_growth(width_ratio: float, target: float, cap: int) -> int:
    """How many times the pilot's draws to take in all: a pilot whose widest interval is ``width_ratio`` times its
    declared maximum needs ``(width_ratio / target)^2`` times the draws to land at ``target`` times it; at least 1
    (no growth), at most ``cap``."""
    if not math.isfinite(width_ratio):
        return cap
    return int(min(cap, max(1, math.ceil((width_ratio / target) ** 2))))


def widest_ratio(decisions: list[dict]) -> float:
    """The widest interval of an evidence's decisions relative to its declared maximum (``Evidence.decisions``)."""
    return max((d["hi"] - d["lo"]) / d["max_width"] for d in decisions)
