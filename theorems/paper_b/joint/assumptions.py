r"""Condition 1 of the joint-training claims (B.L9-B.L13, B.T2-B.T4, B.Fig3), as we instantiate it (the source text's
thresholds are lost): the data model's sizes, Lemma 9's level nu_0, and the assumptions the claims state.

* Zero init; opt tokens rho = 4 times longer; Lemma 9's event ``nu <= nu_0 = (1 - 1/rho^2)/(2nT)`` (the level is
  derived in B.L9: it makes the first u-step raise every score gap; draws outside it are discarded); ``eta R^2 <= 1``;
  ``T = 2``.
* **This nu_0 is Lemma 9's event of Condition 1 (joint training, Section 4), not paper B's Assumption 1 of the
  fixed-head sections (Sections 3, B.L3-B.L7, B.T1, B.T6, B.T7), whose single definition (ours: ``nu/(1 - 3 nu) <=
  nu*``) lives in ``fixed_head.assumptions``.**  The two share the near-orthogonality parameter nu of
  ``data.assumptions`` and nothing else: the source text states them separately, for different data models and
  algorithms.

The draws, runs and update rules built on these are in ``setups``.
"""
from __future__ import annotations

from theorems.claim import Assumption

#: DM sizes (ours; the source text's are lost): n sequences of T = 2 tokens (the source text: "for ease of exposition we
#: consider [T = 2] ... extend to [T > 2] assuming Ass. 2"), d = 64, opt tokens 4x longer (Cond. 1 (ii))
MAIN = dict(n=3, T=2, d=64, opt_ratio=4.0)


def nu0_level(rho, n, T):
    """Lemma 9's level ``(1 - 1/rho^2) / (2 n T)`` (derived in B.L9); numbers or sympy symbols.

    Condition 1's near-orthogonality event for joint training (Section 4), NOT Assumption 1 of the fixed-head
    claims (``fixed_head.assumptions`` defines that one)."""
    return (1 - 1 / rho**2) / (2 * n * T)


def nu_threshold(n: int, T: int, opt_ratio: float) -> float:
    """nu_0 of Lemma 9's event ``nu <= nu_0``; 0 when rho <= 1 (no larger opt token: the event is empty)."""
    return max(0.0, nu0_level(opt_ratio, n, T))


def condition1_assumptions() -> tuple[Assumption, ...]:
    """Condition 1 as instantiated by the joint-training claims."""
    return (
        Assumption("Cond. 1 (i)", "zero initialization W_0 = 0, u_0 = 0"),
        Assumption("Cond. 1 (ii)", "opt tokens have larger norm: x_opt ~ N(0, rho^2 sigma^2 I), rho = 4"),
        Assumption("Cond. 1 (iii) / Lemma 9", "d large enough that nu <= (1 - 1/rho^2)/(2nT), Lemma 9's event of "
                   "Condition 1 (joint training; not the fixed-head claims' Ass. 1) — draws outside it are discarded; "
                   "B.L9 measures its probability"),
        Assumption("Cond. 1 (iv)", "small step: eta R^2 <= 1 (eta = 0.05, R = max token norm ~ 4.3)"),
        Assumption("T = 2", "two tokens per sequence, so Ass. 2 holds at every iteration"),
    )
