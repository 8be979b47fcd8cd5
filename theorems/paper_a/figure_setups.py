r"""The experiment of paper A's Figures 1 and 2 (A.Fig1, A.Fig2): its constants, its methods and its runs (a fixture).

This module defines no claim.  The source text's recipe with our numbers (the paper's are lost): ``d = 4``, ``r = 5``;
``Sigma = I/2 + G G^T/d``, ``W* = 0.2 H Sigma^{-1/2} / ||H||_op`` (``G``, ``H`` iid N(0, 1):
``random_instance(m_op=0.2)``, so ``sigma_1(W* Sigma^{1/2}) = 0.2``); noise ``sigma = 0.1`` (``L* = r sigma^2 = 0.05``);
``N = 10^4`` samples; step ``eta = 0.01``; minibatches of ``b = 16`` drawn without replacement (consecutive blocks of
random permutations), the same ones for every method; ``lambda = 1/4``; ``T = 2000``.  Algorithm 1's preconditioner
is the full-data ``Sigmahat``; ``Rhat`` uses each minibatch's own ``Sigmahat``; SGD has neither (``lambda = 0``, no
preconditioner).

All methods (:data:`METHODS`, including the controls' wrong ones) run as one stacked batch
(``numerics.paper_a.experiments.StackedMinibatchObjective``): the fixture :func:`figure_runs`, which the runner computes
once per run and injects into both figures' checks and their controls.  A check names the method it reads by passing
the :class:`Method` object; a control passes another one.
"""
from __future__ import annotations

from dataclasses import dataclass

import torch

from numerics import DTYPE
from numerics.optim import chain, log_spaced_steps, run, scale
from numerics.paper_a import algorithms as al
from numerics.paper_a import experiments as ex
from numerics.paper_a import oracle as orc
from numerics.paper_a.geometry import LAMBDA
from numerics.paper_a.model import population_loss
from theorems.fixture import fixture
from theorems.paper_a.init_algorithm import spectral_init_without_sigma_sqrt

#: the source text's recipe with our numbers (the paper's are lost): d = 4, r = 5 (r > d: A2); A3's scale
#: σ₁(W*Σ^{1/2}) = 0.2; noise σ = 0.1; N = 10⁴ samples; minibatches of b = 16; step η = 0.01 (stable for Algorithm 1
#: and SGD from both inits); T = 2000 iterations, as the paper's figures
D, R, M_OP, NOISE, N_DATA, BATCH, ETA, T = 4, 5, 0.2, 0.1, 10_000, 16, 0.01, 2000
#: the optimal loss L* = r σ² (the noise floor)
L_STAR = R * NOISE**2
#: the setting in words, for the plots' titles (not a decision)
SETTING = f"d={D}, r={R}, σ={NOISE}, η={ETA}, N={N_DATA}, b={BATCH}"
#: independent (instance, data, init) draws per budget (quick, standard, full): A.Fig2's fraction is ≈ 0.68 (A.Fig1's
#: (c) ≈ 0.73); at 384 draws a Clopper-Pearson interval at z ≈ 4.1-4.4 has half-width ≈ 0.1, so it lies above 1/2
#: unless the observed fraction falls below ≈ 0.60
FIG_DRAWS = (384, 768, 768)


@dataclass(frozen=True)
class Method:
    """One method of the figures: a block of the stacked run (``name`` is what the records print)."""

    name: str
    spectral: bool  # starts from Algorithm 1's spectral initialization; else from the iid N(0, 1) one
    lam: float  # the regularization weight
    preconditioned: bool  # Algorithm 1's preconditioner Sigmahat^{-1}; else none (plain SGD)
    fraction: float  # the fraction of the draws it runs on (the first ones)


ALG1_SPECTRAL = Method("alg1_spectral", True, LAMBDA, True, 1.0)  # Algorithm 1 as the paper runs it (both figures)
SGD = Method("sgd", False, 0.0, False, 1.0)  # the paper's baseline: SGD from an iid N(0, 1) init
#: Algorithm 1 from SGD's random init: A.Fig2's method, and A.Fig1's wrong baseline (it converges)
ALG1_RANDOM = Method("alg1_random", False, LAMBDA, True, 1.0)
#: A.Fig2's control: Algorithm 1 without the regularizer (lambda = 0) from the random init; half the draws suffice
ALG1_RANDOM_NOREG = Method("alg1_random_noreg", False, 0.0, True, 0.5)
METHODS = (ALG1_SPECTRAL, SGD, ALG1_RANDOM, ALG1_RANDOM_NOREG)  # the stacked run's blocks, in this order
#: the spectral initializations whose starting loss is recorded: Algorithm 1's, then A.Fig1's control's (not trained)
SPECTRAL_INITS = (al.spectral_init_from_estimates, spectral_init_without_sigma_sqrt)


@fixture
def figure_runs(ctx, methods=METHODS, spectral_inits=SPECTRAL_INITS, eta: float = ETA) -> dict:
    """Every method of Figures 1-2 on the same draws, one stacked batch, population loss recorded at log-spaced
    steps: ``{"steps", "L": {Method: (steps, draws)}, "L0": {spectral init: (draws,)}, "B"}``.

    ``eta`` is every method's step size (the paper's is lost: a free choice of both figures).

    ``L0`` holds the initial loss of each of ``spectral_inits`` (only the starting point of the control's wrong one
    enters a decision, so it is not trained).
    """
    gen = ctx.generator("A.Fig1-2", "runs")
    B = ctx.pick(*FIG_DRAWS)
    Sigma, W = al.random_instance(D, R, gen, batch=B, m_op=M_OP)
    x, y = orc.sample_batches(Sigma, W, NOISE, N_DATA, 1, B, gen)
    x, y = x[0], y[0]
    W_hat, S_hat = al.least_squares(x, y)
    spectral = {init: init(W_hat, S_hat) for init in spectral_inits}
    random = al.random_init(B, R, D, gen)
    schedule = ex.epoch_schedule(N_DATA, BATCH, T, B, gen)
    eye = torch.eye(D, dtype=DTYPE).expand(B, D, D)
    parts = {k: [] for k in ("V", "K", "lam", "S", "Sigma", "W", "rows")}
    sizes = {}
    for m in methods:
        sel = slice(0, int(B * m.fraction))
        sizes[m] = int(B * m.fraction)
        start = spectral[al.spectral_init_from_estimates] if m.spectral else random
        for key, val in (("V", start[0]), ("K", start[1]), ("S", S_hat if m.preconditioned else eye),
                         ("Sigma", Sigma), ("W", W)):
            parts[key].append(val[sel])
        parts["lam"].append(torch.full((sizes[m],), m.lam, dtype=DTYPE))
        parts["rows"].append(torch.arange(sizes[m]))  # every method on the first draws' data and minibatches
    cat = {k: torch.cat(v) for k, v in parts.items()}
    # one copy of the data and the schedule, shared by the methods' runs (copies per method: 1.4 GB at quick)
    objective = ex.StackedMinibatchObjective(x, y, schedule, cat["lam"], rows=cat["rows"])
    steps = sorted(set(log_spaced_steps(T, 80)) | {0, 1, 2, T})
    # Algorithm 1's preconditioner Sigmahat^{-1}; the identity (plain SGD) for the unpreconditioned blocks
    tr = run((cat["V"], cat["K"]), objective, chain(al.precondition(cat["S"]), scale(eta)), T,
             lambda p, info: {"L": population_loss(*p, cat["Sigma"], cat["W"], NOISE)}, steps)
    L, start = {}, 0
    for m, size in sizes.items():
        L[m] = tr["L"][:, start:start + size]
        start += size
    L0 = {init: population_loss(*point, Sigma, W, NOISE) for init, point in spectral.items()}
    return {"steps": tr.steps.numpy(), "L": L, "L0": L0, "B": B}
