r"""Paper A's derived geometry constants, shared by A.T1.3, A.L2-A.L4, A.L7 and A.T2; defines no claim.

* **A.T1.3's one-point constants** (derived, and proved by sympy, in ``t1_3_strong_convexity``; lambda = 1/4):
  ``alpha(D) = 2 sigma_d(M*) - (5/4) D^2``, ``sqrt(beta(D)) = 4 sigma_1 + 3 sqrt(2 sigma_1) D + D^2`` at distance ``D``
  from Mfold, and the radius ``rho = (2/sqrt 5) sigma_d(M*)^{1/2}`` where ``alpha(rho) = sigma_d(M*)``.  A.L2 integrates
  ``sqrt(beta)``, A.L4 and A.T2 build their constants from both, A.L7 bounds ``||B||_op`` on the ``rho``-tube.
* **A.L3's radius and closeness** ``rho' = min(rho, 1/2 - sigma_1(M*)^{1/2})`` and
  ``e_0 = sqrt(1 + alpha(rho')/(4 sqrt(beta(rho')))) - 1`` (derived in ``l3_good_init``), used by A.L4 and A.T2.
"""
from __future__ import annotations

import math

import torch

from numerics.paper_a import geometry as ge
from numerics.paper_a.model import sym_sqrt

LAM = ge.LAMBDA  # the regularization weight of A.T1.3's derivation: lambda = 1/4
RHO_FACTOR = 2 / math.sqrt(5)  # rho = RHO_FACTOR sigma_d(M*)^{1/2}, where alpha(rho) = sigma_d(M*)


# ---------------------------------------------------------------------------
# A.T1.3's derived constants
# ---------------------------------------------------------------------------

def alpha_bound(sigma_d, dist):
    """``alpha(dist) = 2 sigma_d(M*) - (5/4) dist^2`` (valid pointwise at distance ``dist``)."""
    return 2 * sigma_d - 1.25 * dist**2


def sqrt_beta_bound(sigma_1, dist):
    """``sqrt(beta(dist)) = 4 sigma_1 + 3 sqrt(2 sigma_1) dist + dist^2`` (increasing in ``dist``)."""
    return 4 * sigma_1 + 3 * (2 * sigma_1) ** 0.5 * dist + dist**2


def rho_of(sigma_d):
    """The radius of A.T1.3: ``(2/sqrt 5) sigma_d(M*)^{1/2}``."""
    return RHO_FACTOR * sigma_d**0.5


# ---------------------------------------------------------------------------
# A.L3's constants
# ---------------------------------------------------------------------------

def good_init_constants(Sigma: torch.Tensor, W: torch.Tensor) -> dict[str, float]:
    """``rho'``, ``e_0`` and the singular values of ``M*`` they come from, for one instance (module docstring)."""
    sv = torch.linalg.svdvals(W @ sym_sqrt(Sigma))
    sd, s1 = float(sv[-1]), float(sv[0])
    rho = min(rho_of(sd), 0.5 - s1**0.5)
    kappa_max = alpha_bound(sd, rho) / (4 * sqrt_beta_bound(s1, rho))
    return {"sigma_d": sd, "sigma_1": s1, "rho": rho, "e0": math.sqrt(1 + kappa_max) - 1}
