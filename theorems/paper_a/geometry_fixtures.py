r"""Shared set-up of paper A's geometry claims (A.T1.2, A.T1.3, A.L1-A.L4, A.L7, A.T2); defines no claim.

* **A.T1.3's one-point constants** (derived, and proved by sympy, in ``t1_3_strong_convexity``; lambda = 1/4):
  ``alpha(D) = 2 sigma_d(M*) - (5/4) D^2``, ``sqrt(beta(D)) = 4 sigma_1 + 3 sqrt(2 sigma_1) D + D^2`` at distance ``D``
  from Mfold, and the radius ``rho = (2/sqrt 5) sigma_d(M*)^{1/2}`` where ``alpha(rho) = sigma_d(M*)``.  A.L2 integrates
  ``sqrt(beta)``, A.L4 and A.T2 build their constants from both, A.L7 bounds ``||B||_op`` on the ``rho``-tube.
* **A.L3's radius and closeness** ``rho' = min(rho, 1/2 - sigma_1(M*)^{1/2})`` and
  ``e_0 = sqrt(1 + alpha(rho')/(4 sqrt(beta(rho')))) - 1`` (derived in ``l3_good_init``), used by A.L4 and A.T2.
* **Instances of the numeric checks**: shapes ``(d, r)`` covering ``r > d`` and ``r = d``, at three scales of
  ``sigma_1(M*)`` for the one-point conditions.
* **The probe strategy** (:func:`spectral_instances`): ``(Sigma, M*)`` with eigenvalues of ``Sigma`` and singular
  values of ``M* = W* Sigma^{1/2}`` in given ranges, built from ``theorems.strategies`` pieces (rotations by the
  Cayley map), optionally with a point near Mfold (a rotation ``Q`` of the base point and a direction ``H``).  A
  counterexample shrinks to ``d = r = 1``, diagonal matrices and round numbers; :func:`describe` prints it as
  nested lists a reader can paste into Python.
"""
from __future__ import annotations

import functools
import math

import torch
from hypothesis import strategies as st

from numerics.paper_a import geometry as ge
from numerics.paper_a.model import sym_sqrt
from theorems import strategies as S

LAM = ge.LAMBDA  # the regularization weight of A.T1.3's derivation: lambda = 1/4
RHO_FACTOR = 2 / math.sqrt(5)  # rho = RHO_FACTOR sigma_d(M*)^{1/2}, where alpha(rho) = sigma_d(M*)

# (d, r) of the numeric checks on and near Mfold: r > d and r = d
SHAPES = ((3, 5), (4, 4), (2, 3))
# (d, r, sigma_1(M*)) of the checks of the one-point conditions: the shapes at three scales
NEAR_MANIFOLD_INSTANCES = tuple((d, r, m_op) for (d, r), m_op in zip(SHAPES, (1.0, 0.5, 2.0)))


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


# ---------------------------------------------------------------------------
# The probe strategy
# ---------------------------------------------------------------------------

def spectral_instances(sig: tuple[float, float], m: tuple[float, float], dims=S.dims(4, 2), point: bool = False,
                       **more) -> st.SearchStrategy[dict]:
    """Dicts ``{"d", "r", "Sigma", "M"}``: ``(d, r)`` from ``dims``, ``Sigma`` (d x d) with eigenvalues in ``sig``,
    ``M`` = ``M*`` (r x d) with singular values in ``m``; with ``point``, also ``"Q"`` (d x d, in O(d): the rotation
    of a point of Mfold) and ``"H"`` (r + d x d, entries in [-1, 1]: a direction from it).  ``more`` adds named
    draws: a strategy, or a function ``(d, r) -> strategy`` for draws whose shape depends on the dimensions."""
    @functools.cache  # one strategy per (d, r): hypothesis draws faster from a strategy it has seen
    def build(dr):
        d, r = dr
        parts = {"d": st.just(d), "r": st.just(r), "Sigma": S.spd(d, *sig), "M": S.with_singular_values(r, d, *m)}
        if point:
            parts |= {"Q": S.rotation(d), "H": S.matrix(r + d, d, 1.0)}
        parts |= {k: v(d, r) if callable(v) else v for k, v in more.items()}
        return st.fixed_dictionaries(parts)

    return dims.flatmap(build)


def instance_tensors(inst: dict) -> tuple[torch.Tensor, torch.Tensor]:
    """``(Sigma, W*)`` (d x d, r x d) of a drawn instance: ``W* = M* Sigma^{-1/2}``."""
    return ge.instance_from_target(S.tensor(inst["Sigma"], batch=False), S.tensor(inst["M"], batch=False))


def probe_point(inst: dict, Sigma: torch.Tensor, W: torch.Tensor, radius: float, direction: str):
    """The drawn point near Mfold: rotation ``Q``, direction ``H`` (projected on the normal space for ``"normal"``),
    at factor-coordinate distance ``radius`` from ``Z*_0 Q`` (``geometry.point_near_manifold``); a batch of one."""
    (V, K), _ = ge.point_near_manifold(Sigma, W, radius, S.tensor(inst["Q"]), S.tensor(inst["H"]), direction)
    return V, K


def describe(inst: dict) -> dict:
    """The instance as plain numbers and nested lists (what the report and the CLI print)."""
    return S.readable(inst)
