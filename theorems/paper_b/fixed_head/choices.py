r"""The free choices the fixed-head rate claims share (B.T1, B.T6, B.T7, B.L1), declared once.  Defines no claim.

Each function returns a ``theorems.claim.FreeChoice`` (as ``bank.bank_horizon_choice`` does for the trajectory bank):
the choice's name, the value the claims use, its range and the reason for that range are declared here; which checks
it sets, and with what (``sets``: check -> value -> overrides, usually requests of ``inscope``), is the claim's.
"""
from __future__ import annotations

from typing import Any, Callable, Iterable, Mapping

from theorems.claim import FreeChoice
from theorems.fixture import Request
from theorems.paper_b.fixed_head.example1_suite import ENVELOPE_STEPS, ETA
from theorems.paper_b.fixed_head.inscope import INSCOPE_SIZES, scaled
from theorems.paper_b.fixed_head.phase_probe import PHASE_NORM

Sets = Mapping[str, Callable[[Any], Mapping[str, Any]]]


def step_choice(reason: str, sets: Sets) -> FreeChoice:
    """The step size η of the claim's algorithm (the paper's is lost), at ``example1_suite.ETA`` = 1 over 0.2-5 (the
    probe's own NGD range [0.2, 2] and a step 5x the unit); ``reason`` says how η enters the claim."""
    return FreeChoice("η", ETA, reason, sets, low=0.2, high=5.0, scale="log")


def horizon_choice(run: Request, steps: tuple, checks: Iterable[str], reason: str, low: float = 1.0,
                   high: float = 10.0) -> FreeChoice:
    """The horizon as a factor on ``steps`` (quick, standard, full): each check of ``checks`` reads ``run`` (a request
    of ``inscope.inscope_run``) over that many steps times the factor."""
    return FreeChoice("horizon ×", 1.0, reason,
                      {c: (lambda v: {"run": run.bind(n_steps=scaled(steps, v))}) for c in checks},
                      low=low, high=high, scale="log")


def envelope_horizon_choice(run: Request, checks: Iterable[str]) -> FreeChoice:
    """The horizon of B.T1's envelope rule (``example1_suite.ENVELOPE_STEPS``), for the checks ``checks`` that read
    ``run``: its window must keep the log² allowance within ``rates.MAX_ALLOWANCE``."""
    return horizon_choice(run, ENVELOPE_STEPS, checks, "the window [N/10, N] must keep the log² allowance ≤ 0.3 (N ≥ "
                          "2700: the quick horizon 3000 is the shortest), and the paper gives no horizon: up to 10x "
                          "longer")


def n_choice(sets: Sets) -> FreeChoice:
    """The in-scope family's sample count n (``inscope.INSCOPE_SIZES``), 2 to 8."""
    return FreeChoice("n", INSCOPE_SIZES["n"], "Example 1's sample count in the paper's figure is lost: from 2 (the "
                      "fewest with cross-sample terms) to 8 (the trajectory bank's Example 1)", sets,
                      low=2, high=8, integer=True)


def phase_norm_choice() -> FreeChoice:
    """The norm factor of the phase probe's asymptotic phase (``phase_probe.PHASE_NORM``), a parameter of the probe's
    conclusion (``mutant={"phase_norm": v}``)."""
    return FreeChoice("phase norm factor", PHASE_NORM, "the probe's asymptotic phase starts once the norm is this "
                      "many times max(‖W₀‖, ‖W_mm‖): from 2 (with balanced gaps every gap ≥ 1, every W-SVM constraint "
                      "met) to 100 (every gap ≥ 50)", {"probe": lambda v: {"mutant": {"phase_norm": v}}},
                      low=2.0, high=100.0, scale="log")
