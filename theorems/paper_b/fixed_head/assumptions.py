r"""The assumptions of paper B's fixed-head claims, defined once: Lemma 2's init scale, Assumptions 1 and 2.  Defines
no claim.

Each formula here is derived in the claim module named beside it; it lives here because more than one claim reads it.

* Lemma 2's init scale ``sigma0`` and its constants ``EPS``, ``DELTA`` (derived in B.L2, ``l2_init_scale``);
  read by B.L3, B.L4 (the bank's inits), B.L6 and B.Fig9.
* **Assumptions 1 and 2** for every fixed-head claim of paper B: ``ASS1`` / ``ass1(ds, step, eps)`` is our Ass 1
  ``nu / (1 - 3 nu) <= nu*`` with B.L3's opt-score floor ``opt_score_floor`` (b) and sufficient level ``nu_star``
  (nu*) (derived in ``l3_opt_score``); ``ASS2`` / ``ass2_holds(ds)`` is spread == 0.  Read by B.L3, B.L6, B.L7 and
  (through ``ass1``) the rate claims' probes.  B.L9's level belongs to Condition 1 of joint training: a different
  assumption (see the comment block at the definitions).
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import torch

from numerics import DTYPE
from numerics.paper_b import data, runs
from theorems.claim import Assumption

# ---------------------------------------------------------------------------
# Lemma 2 (B.L2): the init scale
# ---------------------------------------------------------------------------

EPS, DELTA = 0.25, 0.05  # Lemma 2's logit bound eps and failure probability delta (our choices, B.L2)


def sigma0(ds, eps: float = EPS, delta: float = DELTA, r_power: int = 2) -> float:
    """Lemma 2's scale eps / (R^2 sqrt(2 log(4 n T / delta))) (``r_power=0``: B.L2's control without R^2)."""
    R = float(data.assumptions(ds)["R"])
    return eps / (R**r_power * math.sqrt(2 * math.log(4 * ds.n * ds.T / delta)))


# ---------------------------------------------------------------------------
# Assumptions 1 and 2 of the fixed-head claims: THE definitions (B.L3 derives Ass 1's level)
# ---------------------------------------------------------------------------
#
# Ass 1 is defined here, once, for every fixed-head claim of paper B (B.L3-B.L7, B.T1, B.L1, B.T7, B.T6, B.Fig2,
# B.L6): the paper's inequality is lost (our reconstruction defines a measurable near-orthogonality parameter nu), and
# the only level the suite derives is B.L3's sufficient one,
#
#     Ass 1 (ours):  nu / (1 - 3 nu) <= nu*(data, b)     (and nu < 1/3),
#     nu* = q^2 b (1 - b/e) min_i(e^{-gamma_io} Delta_i) / (e (n-1) R^2 max_j(e^{-gammabar_j} Delta_j)),
#     b   = 1 / (1 + (T-1) exp(max(2 eps, 2 R^2 step - 1)))   (B.L3's opt-score floor),
#
# with nu = max |<x, x'>| / min_i ||x_io||^2 over distinct token pairs with a non-opt member (``data.assumptions``),
# eps = Lemma 2's initial logit bound (1/4, ``EPS``; a run may pass its measured max |a_it(W_0)|) and step = the
# largest step length (omitted: a "small" step, 2 R^2 step - 1 <= 2 eps, where b no longer depends on it).  On
# Example 1 (n = 8, T = 4) nu* ~ 1.5e-3, so Example 1 satisfies it only at d of order 10^6 (B.L6 measures this).
# Earlier modules used other levels (nu <= 0.5 in the rate probes, 0.25 / 0.15 in B.L6): those were not derived
# from anything and are replaced by this definition.  NOT this assumption: B.L9's level (1 - 1/rho^2)/(2 n T) is
# Lemma 9's near-orthogonality event of *joint* training under Condition 1 (DM data, u and W trained together), a
# different assumption with its own derivation in ``l9_dm_orthogonality``.
#
# Ass 2 is exact: every non-opt score of a sample is equal (spread = 0).  On Example 1 and on ``orthogonal_tokens``
# with spread = 0 it holds by construction (noise orthogonal to the head u = e_1): report it as such, not as verified.

def opt_score_floor(T: int, R: float, eps, step) -> torch.Tensor:
    r"""b = 1 / (1 + (T-1) exp(max(2 eps, 2 R^2 step - 1)))  (B.L3's lower bound on s_opt)."""
    eps, step = torch.as_tensor(eps, dtype=DTYPE), torch.as_tensor(step, dtype=DTYPE)
    return 1.0 / (1.0 + (T - 1) * torch.exp(torch.maximum(2 * eps, 2 * R**2 * step - 1)))


def nu_star(geo: dict, n: int, b) -> torch.Tensor:
    r"""B.L3's sufficient near-orthogonality level: Ass 1 (ours) is nu / (1 - 3 nu) <= nu*,

        nu* = q^2 b (1 - b/e) min_i(e^{-gamma_io} Delta_i) / (e (n-1) R^2 max_j(e^{-gammabar_j} Delta_j)),

    and nu < 1/3 (n = 1: no cross-sample terms, nu* = inf).  ``geo`` is ``runs.geometry(ds)`` (or any dict with
    q, R, lo, hi: ``runs.example1_geometry`` draws them without building the tokens)."""
    b = torch.as_tensor(b, dtype=DTYPE)
    if n == 1:
        return torch.full_like(b, math.inf)
    return geo["q"] ** 2 * b * (1 - b / math.e) * geo["lo"] / (math.e * (n - 1) * geo["R"] ** 2 * geo["hi"])


#: nu at or below this is float64 rounding of exactly orthogonal tokens (~1.6e-16 observed), counted as nu = 0
NU_ROUNDING = 1e-12


def ass1_lhs(nu) -> torch.Tensor:
    """nu / (1 - 3 nu), +inf where nu >= 1/3, 0 where nu <= NU_ROUNDING (Ass 1's left side; elementwise)."""
    nu = torch.as_tensor(nu, dtype=DTYPE)
    nu = torch.where(nu <= NU_ROUNDING, torch.zeros_like(nu), nu)
    return torch.where(nu < 1 / 3, nu / (1 - 3 * nu), torch.full_like(nu, math.inf))


def ass1_holds(geo: dict, n: int, b) -> torch.Tensor:
    """Our Ass 1 at the floor ``b``: nu / (1 - 3 nu) <= nu* (and nu < 1/3).  Signature kept for B.L3's callers."""
    return ass1_lhs(geo["nu"]) <= nu_star(geo, n, b)


@dataclass(frozen=True)
class Ass1Level:
    """Ass 1 evaluated on one dataset: nu, the floor b it used, nu*, nu/(1 - 3 nu) and whether Ass 1 holds."""

    nu: float
    b: float
    nu_star: float
    lhs: float
    holds: bool

    @property
    def log10_ratio(self) -> float:
        """log10((nu/(1-3nu)) / nu*): <= 0 inside Ass 1 (a probe parameter)."""
        return math.log10(max(self.lhs, 1e-300) / self.nu_star) if math.isfinite(self.lhs) else math.inf


def ass1(ds, step: float | None = None, eps: float = EPS) -> Ass1Level:
    """THE Ass 1 of the fixed-head claims on dataset ``ds`` (see the comment block above).

    ``step``: the largest step length ||W_{t+1} - W_t|| of the run (NGD: eta; GD, Polyak: the largest taken);
    None = a small step (2 R^2 step - 1 <= 2 eps).  ``eps``: the initial logit bound (Lemma 2's 1/4 by default;
    B.L3 passes each run's measured max |a_it(W_0)|).  Call it on a probe instance as ``ass1(inst_ds, eta)``."""
    geo = runs.geometry(ds)
    b = float(opt_score_floor(ds.T, geo["R"], eps, 0.0 if step is None else step))
    ns = float(nu_star(geo, ds.n, b))
    lhs = float(ass1_lhs(geo["nu"]))
    return Ass1Level(nu=geo["nu"], b=b, nu_star=ns, lhs=lhs, holds=lhs <= ns)


def ass2_holds(ds) -> bool:
    """THE Ass 2: every non-opt score of every sample is equal (spread exactly 0)."""
    return float(data.assumptions(ds)["spread"]) == 0.0


#: the assumption records the claims list; ``holds`` takes an instance dict with the dataset under "ds" (and, for
#: Ass 1, optionally the largest step under "step" and the initial logit bound under "eps")
ASS1 = Assumption("Ass 1", "near-orthogonal tokens, ours: ν/(1−3ν) ≤ ν*(data, b), B.L3's derived sufficient level "
                  "(b: opt-score floor at Lemma 2's ε = 1/4 and the step; ν* ≈ 1e-3 on Example 1, n = 8, T = 4)",
                  lambda inst: ass1(inst["ds"], inst.get("step"), inst.get("eps", EPS)).holds)
ASS2 = Assumption("Ass 2", "equal non-opt token scores: γ_it = γ̄_i < γ_io for t ≠ opt_i (spread = 0)",
                  lambda inst: ass2_holds(inst["ds"]))
