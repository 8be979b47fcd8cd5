"""Shared set-up of the spectral-initialization claims (A.L3, A.L5, A.L6): one instance family, one noise level.

Instances: ``numerics.paper_a.algorithms.random_instance(d=4, r=5, m_op=0.15)`` (``Sigma = I/2 + G G^T/4``,
``M* = 0.15 H/||H||_op``, ``G, H`` iid N(0,1)), noise ``sigma = 0.3``: small enough that ``rho' > 0`` (A.L3 needs
``sigma_1(M*)^{1/2} < 1/2``), noisy enough that the estimation errors dominate rounding at ``n = 10^8``.
"""
from __future__ import annotations

import torch

from numerics.paper_a import algorithms as al

D, R, M_OP, NOISE = 4, 5, 0.15, 0.3


def instances(gen: torch.Generator, count: int):
    """``count`` instances ``(Sigma, W*)`` of the family above, batched."""
    return al.random_instance(D, R, gen, batch=count, m_op=M_OP)
