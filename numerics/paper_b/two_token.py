r"""Closed-form dynamics of GD and NGD on the Section 3.3 two-token example (``data.two_token()``).

Data: n = 1, T = 2, d = 2, x_1 = e_1 (query and opt token), x_2 = e_2, u = e_1, y = 1, exp loss.
The logits are a = X W x_1 = (W_11, W_21), so with z = W_11 - W_21 the opt score is
s_1 = sigma(z) (logistic sigmoid), the margin is m = s_1 and L(W) = exp(-sigma(z)).  Hence

    grad L = -e^{-sigma(z)} sigma(z) (1 - sigma(z)) (E_11 - E_21),     W_mm = (E_11 - E_21) / 2,

every gradient is a negative multiple of W_mm, and only the coordinate along
Wbar_mm = (E_11 - E_21)/sqrt(2) moves.  Write W = p Wbar_mm + W_perp with
p = <W, Wbar_mm> = z / sqrt(2) and r = ||W_perp|| (constant in time).  Then

    1 - <Wbar, Wbar_mm> = 1 - p / sqrt(p^2 + r^2) = r^2 / (sqrt(p^2 + r^2) (sqrt(p^2 + r^2) + p))   (p > 0)

    NGD  (W+ = W - eta g/||g||):  p_t = p_0 + eta t                      exactly
    GD   (W+ = W - eta g):        z_{t+1} = z_t + Delta(z_t),  Delta(z) = 2 eta e^{-sigma(z)} sigma(z) (1 - sigma(z))

and for GD e^{z_{t+1}} - e^{z_t} -> 2 eta / e, so z_t = log(2 eta t / e) + o(1) (Stolz-Cesaro).
The claim module ``theorems/paper_b/s33_two_token.py`` derives all of this with sympy; this
module evaluates it (numpy, float64, runs along the last axis).
"""
from __future__ import annotations

import math

import numpy as np
import torch

from numerics import DTYPE

#: Wbar_mm for the two-token example, (2, 2)
WBAR_MM = torch.tensor([[1.0, 0.0], [-1.0, 0.0]], dtype=DTYPE) / math.sqrt(2.0)


def split(W: torch.Tensor) -> tuple[np.ndarray, np.ndarray]:
    """(p, r) for W (.., 2, 2): p = <W, Wbar_mm>, r = ||W - p Wbar_mm||."""
    p = (W * WBAR_MM).sum((-1, -2))
    r = torch.linalg.matrix_norm(W - p[..., None, None] * WBAR_MM)
    return p.numpy(), r.numpy()


def one_minus_corr(p, r):
    """1 - p / sqrt(p^2 + r^2) without cancellation for p > 0 (elementwise, numpy)."""
    p, r = np.asarray(p, float), np.asarray(r, float)
    rho = np.hypot(p, r)
    with np.errstate(invalid="ignore", divide="ignore"):
        stable = r**2 / (rho * (rho + p))
    return np.where(p > 0, stable, 1 - p / rho)


def sigmoid(z):
    return 0.5 * (1 + np.tanh(0.5 * np.asarray(z, float)))


def gd_increment(z, eta: float, factor: float = 2.0):
    """Delta(z) = 2 eta e^{-sigma(z)} sigma(z) sigma(-z); ``factor`` != 2 only for negative controls."""
    s, s_bar = sigmoid(z), sigmoid(-np.asarray(z, float))
    return factor * eta * np.exp(-s) * s * s_bar


def gd_z(z0, eta: float, steps, factor: float = 2.0) -> np.ndarray:
    """z_t of GD at the (sorted) ``steps`` by iterating the exact one-dimensional map; (len(steps), ..)."""
    z = np.array(z0, float, copy=True)
    steps = [int(s) for s in steps]
    out, t = [], 0
    for s in steps:
        for _ in range(s - t):
            z = z + gd_increment(z, eta, factor)
        t = s
        out.append(z.copy())
    return np.stack(out)


def ngd_p(p0, eta: float, steps) -> np.ndarray:
    """p_t = p_0 + eta t, (len(steps), ..)."""
    return np.asarray(p0, float)[None] + eta * np.asarray(steps, float).reshape(-1, *([1] * np.ndim(p0)))


def closed_form_p(algorithm: str, p0, eta: float, steps, gd_factor: float = 2.0) -> np.ndarray:
    """p_t = <W_t, Wbar_mm> at ``steps`` for "GD" (the exact map, z = sqrt(2) p) or "NGD" (p_0 + eta t);
    (len(steps), ..).  ``gd_factor`` != 2 only for negative controls."""
    if algorithm == "GD":
        return gd_z(math.sqrt(2) * np.asarray(p0, float), eta, steps, gd_factor) / math.sqrt(2)
    if algorithm == "NGD":
        return ngd_p(p0, eta, steps)
    raise ValueError(f"closed_form_p: no closed form for {algorithm!r} (GD or NGD)")


def gd_z_asymptotic(t, eta: float) -> np.ndarray:
    """Leading-order GD solution z_t ~ log(2 eta t / e) (t >= 1)."""
    return np.log(2 * eta * np.asarray(t, float) / math.e)
