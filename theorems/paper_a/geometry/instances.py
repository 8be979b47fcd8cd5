r"""The instances of paper A's geometry claims (A.T1.2, A.T1.3, A.L1, A.L2, A.T2's probe); defines no claim.

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

import torch
from hypothesis import strategies as st

from numerics.paper_a import geometry as ge
from theorems import strategies as S

# (d, r) of the numeric checks on and near Mfold: r > d and r = d
SHAPES = ((3, 5), (4, 4), (2, 3))
# (d, r, sigma_1(M*)) of the checks of the one-point conditions: the shapes at three scales
NEAR_MANIFOLD_INSTANCES = tuple((d, r, m_op) for (d, r), m_op in zip(SHAPES, (1.0, 0.5, 2.0)))


def spectral_instances(sig: tuple[float, float], m: tuple[float, float], dims=S.dims(4, 2), point: bool = False,
                       **more) -> st.SearchStrategy[dict]:
    """Dicts ``{"d", "r", "Sigma", "M"}``: ``(d, r)`` from ``dims``, ``Sigma`` (d x d) with eigenvalues in ``sig``,
    ``M`` = ``M*`` (r x d) with singular values in ``m``; with ``point``, also ``"Q"`` (d x d, in O(d): the rotation
    of a point of Mfold) and ``"H"`` (r + d x d, entries in [-1, 1]: a direction from it).  ``more`` adds named
    draws: a strategy, or a function ``(d, r) -> strategy`` for draws whose shape depends on the dimensions."""
    @functools.cache  # a strategy cache, one strategy per (d, r): hypothesis draws faster from one it has seen
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
