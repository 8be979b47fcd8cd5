r"""Pieces of Algorithm 1 that several claims pass as values, and the wrong pieces their controls pass in their
place; defines no claim.

* **Spectral initialization** (step 2): ``numerics.paper_a.algorithms.spectral_init_from_estimates`` maps
  ``(What, Sigmahat)`` to the point of Mfold of ``What Sigmahat^{1/2}``.  The mutant
  :func:`spectral_init_without_sigma_sqrt` takes the SVD of ``What`` itself, so ``theta_0`` stays off Mfold however
  many samples there are (the controls of A.L3, A.L5 and A.Fig1).
* **Preconditioner** (step 3): a :class:`Preconditioner` is a named map ``Sigmahat -> transform`` applied to the
  gradient before the step.  :data:`TWO_SIDED` is Algorithm 1's; :data:`ONE_SIDED` preconditions the key block on
  one side only (the controls of A.L4 and A.T2).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import torch

from numerics.optim import Transform
from numerics.paper_a import algorithms as al


def spectral_init_without_sigma_sqrt(W_hat: torch.Tensor, S_hat: torch.Tensor):
    r"""Negative control: the spectral initialization from the SVD of ``What`` in place of ``What Sigmahat^{1/2}``."""
    return al.spectral_point(W_hat, S_hat)


@dataclass(frozen=True)
class Preconditioner:
    """A preconditioner of Algorithm 1's step: ``make(Sigmahat)`` is the ``numerics.optim`` transform applied to the
    gradient before the step (``name`` is what the records print)."""

    name: str
    make: Callable[[torch.Tensor], Transform]

    def __call__(self, S_hat: torch.Tensor) -> Transform:
        return self.make(S_hat)


def precondition_one_sided(Sigma_hat: torch.Tensor) -> Transform:
    r"""Negative control: ``(g_V, g_K) -> (g_V Sigmahat^{-1}, Sigmahat^{-1} g_K)`` (K preconditioned on one side only).

    In factor coordinates the key block's step becomes ``M G_B Sigma`` (``M = Sigma^{1/2} Sigmahat^{-1}
    Sigma^{1/2}``): off Algorithm 1's ``M G_B M`` by a factor ``Sigma`` on the right."""
    Si = al.spd_inverse(Sigma_hat)
    return Transform(lambda p: (), lambda g, s, p, info: ((g[0] @ Si, Si @ g[1]), s))


TWO_SIDED = Preconditioner("two_sided", al.precondition)  # Algorithm 1's: Sigmatildehat^{-1} g Sigmahat^{-1}
ONE_SIDED = Preconditioner("one_sided", precondition_one_sided)  # the controls' mutant: the key block on one side only
