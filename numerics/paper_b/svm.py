r"""The two hard-margin SVMs of paper B, solved with cvxpy + Clarabel, with KKT certificates.

(W-SVM)  W_mm = argmin ||W||_F  s.t.  (x_{i,opt_i} - x_it)^T W x_i1 >= 1   for all i, t != opt_i
(u-SVM)  u_mm = argmin ||u||    s.t.  y_i u^T x_{i,opt_i} >= 1              for all i

Both are  min (1/2)||w||^2 s.t. A w >= 1  with one row a_k per constraint
(a_k = vec((x_opt - x_t) x_1^T) for W, a_k = y_i x_{i,opt} for u).  KKT:

    w = A^T alpha,  alpha >= 0,  A w >= 1,  alpha_k (a_k^T w - 1) = 0,
    dual  max sum(alpha) - (1/2)||A^T alpha||^2,  zero gap at the optimum.

The interior-point answer is polished by solving the KKT system on its active
set exactly (least squares) and kept when that certifies better, so W_mm is
accurate to ~1e-14 rather than the solver's ~1e-8: claims measure
1 - <Wbar_t, Wbar_mm> down to 1e-12.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch

from numerics import DTYPE

from .model import Dataset


class SVMInfeasible(ValueError):
    """The SVM's constraints cannot all hold (e.g. d too small for the n(T-1) constraints)."""


@dataclass
class Certificate:
    """KKT residuals of a candidate (w, alpha); all are >= 0 and ~0 at the optimum."""

    max_violation: float          # max_k (1 - a_k^T w)_+            primal feasibility
    max_dual_infeasibility: float  # max_k (-alpha_k)_+              dual feasibility
    stationarity: float           # ||w - A^T alpha|| / ||w||
    complementarity: float        # max_k |alpha_k (a_k^T w - 1)|
    duality_gap: float            # |P - D| / P,  P = ||w||^2/2, D = sum(alpha) - ||A^T alpha||^2/2
    active: list                  # constraints with a_k^T w - 1 <= tol: [(i, t)] (W) or [i] (u)

    def worst(self) -> float:
        return max(self.max_violation, self.max_dual_infeasibility, self.stationarity,
                   self.complementarity, self.duality_gap)


@dataclass
class SVMResult:
    solution: torch.Tensor   # W_mm (d, d) or u_mm (d,)
    norm: float
    margin: float            # 1 / norm
    alpha: torch.Tensor      # dual variables: (n, T) with 0 at the opt tokens (W), or (n,) (u)
    certificate: Certificate
    constraints: list        # the index of each row of A: (i, t) or i
    polished: bool           # True when the active-set polish replaced the solver's answer


def _certificate(A, w, alpha, labels, tol) -> Certificate:
    slack = A @ w - 1.0
    Atw = A.T @ alpha
    P = 0.5 * float(w @ w)
    D = float(alpha.sum()) - 0.5 * float(Atw @ Atw)
    return Certificate(
        max_violation=float(np.clip(-slack, 0, None).max(initial=0.0)),
        max_dual_infeasibility=float(np.clip(-alpha, 0, None).max(initial=0.0)),
        stationarity=float(np.linalg.norm(w - Atw) / max(np.linalg.norm(w), 1e-300)),
        complementarity=float(np.abs(alpha * slack).max(initial=0.0)),
        duality_gap=abs(P - D) / max(P, 1e-300),
        active=[labels[k] for k in np.flatnonzero(slack <= tol)],
    )


def _polish(A, w0, alpha0, tol):
    """Solve the KKT system on the solver's active set: A_S A_S^T alpha_S = 1, w = A_S^T alpha_S."""
    S = np.flatnonzero((A @ w0 - 1.0 <= tol) | (alpha0 > tol * max(alpha0.max(initial=0.0), 1.0)))
    if S.size == 0:
        return None
    A_S = A[S]
    alpha_S, *_ = np.linalg.lstsq(A_S @ A_S.T, np.ones(S.size), rcond=None)
    alpha = np.zeros(A.shape[0])
    alpha[S] = alpha_S
    return A_S.T @ alpha_S, alpha


def _solve(A: np.ndarray, labels: list, what: str, tol: float = 1e-6) -> tuple:
    """min (1/2)||w||^2 s.t. A w >= 1 with Clarabel; returns (w, alpha, certificate, polished)."""
    import cvxpy as cp

    if A.shape[0] == 0:
        raise SVMInfeasible(f"{what}: no constraints")
    if np.any(np.linalg.norm(A, axis=1) == 0):
        k = int(np.flatnonzero(np.linalg.norm(A, axis=1) == 0)[0])
        raise SVMInfeasible(f"{what} infeasible: constraint {labels[k]} has a zero row (0 >= 1)")
    w = cp.Variable(A.shape[1])
    con = A @ w >= 1
    prob = cp.Problem(cp.Minimize(0.5 * cp.sum_squares(w)), [con])
    try:
        prob.solve(solver=cp.CLARABEL)
    except cp.error.SolverError as e:
        raise SVMInfeasible(f"{what}: solver failed ({e})") from e
    if prob.status in (cp.INFEASIBLE, cp.INFEASIBLE_INACCURATE):
        raise SVMInfeasible(f"{what} infeasible: no W satisfies all {A.shape[0]} margin constraints")
    if prob.status not in (cp.OPTIMAL, cp.OPTIMAL_INACCURATE) or w.value is None:
        raise SVMInfeasible(f"{what}: solver status {prob.status}")
    w_cvx, alpha_cvx = np.asarray(w.value, float), np.asarray(con.dual_value, float)
    best = (w_cvx, alpha_cvx, _certificate(A, w_cvx, alpha_cvx, labels, tol), False)
    pol = _polish(A, w_cvx, alpha_cvx, tol)
    if pol is not None:
        cert = _certificate(A, *pol, labels, tol)
        if cert.worst() <= best[2].worst():
            best = (*pol, cert, True)
    return best


def _as_np(t):
    return t.detach().to(DTYPE).cpu().numpy()


def w_svm(ds: Dataset, opt=None, drop=None, tol: float = 1e-6) -> SVMResult:
    """(W-SVM) for one dataset (X (n, T, d)); opt tokens from ``opt`` or ``ds.opt_index``.

    ``drop``: a pair (i, t) or a list of them: constraints left out (negative controls).
    Raises ``SVMInfeasible`` when no W separates every opt token from the others with a margin.
    """
    if ds.X.dim() != 3:
        raise ValueError("w_svm solves one instance: X must be (n, T, d)")
    X = _as_np(ds.X)
    n, T, d = X.shape
    opt = np.asarray(ds.opt_index if opt is None else opt)
    dropped = set() if drop is None else ({tuple(drop)} if np.ndim(drop) == 1 else {tuple(p) for p in drop})
    labels = [(i, t) for i in range(n) for t in range(T) if t != opt[i] and (i, t) not in dropped]
    rows = [np.outer(X[i, opt[i]] - X[i, t], X[i, 0]).ravel() for i, t in labels]
    A = np.stack(rows) if rows else np.zeros((0, d * d))
    w, alpha, cert, polished = _solve(A, labels, "W-SVM", tol)
    alpha_nt = torch.zeros(n, T, dtype=DTYPE)
    for k, (i, t) in enumerate(labels):
        alpha_nt[i, t] = alpha[k]
    W = torch.as_tensor(w, dtype=DTYPE).reshape(d, d)
    norm = float(np.linalg.norm(w))
    return SVMResult(W, norm, 1.0 / norm, alpha_nt, cert, labels, polished)


def u_svm(ds: Dataset, opt=None, drop=None, tol: float = 1e-6) -> SVMResult:
    """(u-SVM): max-margin head on the opt tokens only; opt from ``opt`` or ``ds.opt_index``.

    ``drop``: a sample index i or a list of them, left out.  Raises ``SVMInfeasible``.
    """
    if ds.X.dim() != 3:
        raise ValueError("u_svm solves one instance: X must be (n, T, d)")
    X, y = _as_np(ds.X), _as_np(ds.y)
    opt = np.asarray(ds.opt_index if opt is None else opt)
    dropped = set() if drop is None else set(np.atleast_1d(drop).tolist())
    labels = [i for i in range(X.shape[0]) if i not in dropped]
    A = np.stack([y[i] * X[i, opt[i]] for i in labels]) if labels else np.zeros((0, X.shape[-1]))
    w, alpha, cert, polished = _solve(A, labels, "u-SVM", tol)
    alpha_n = torch.zeros(X.shape[0], dtype=DTYPE)
    alpha_n[labels] = torch.as_tensor(alpha, dtype=DTYPE)
    norm = float(np.linalg.norm(w))
    return SVMResult(torch.as_tensor(w, dtype=DTYPE), norm, 1.0 / norm, alpha_n, cert, labels, polished)
