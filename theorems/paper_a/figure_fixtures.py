r"""Shared set-up of paper A's Figures 1 and 2 (A.Fig1, A.Fig2): the experiment, its constants and its runs.

This module defines no claim.  The seed's recipe with our numbers (the paper's are lost): ``d = 4``, ``r = 5``;
``Sigma = I/2 + G G^T/d``, ``W* = 0.2 H Sigma^{-1/2} / ||H||_op`` (``G``, ``H`` iid N(0, 1):
``random_instance(m_op=0.2)``, so ``sigma_1(W* Sigma^{1/2}) = 0.2``); noise ``sigma = 0.1`` (``L* = r sigma^2 = 0.05``);
``N = 10^4`` samples; step ``eta = 0.01``; minibatches of ``b = 16`` drawn without replacement (consecutive blocks of
random permutations), the same ones for every method; ``lambda = 1/4``; ``T = 2000``.  Algorithm 1's preconditioner
is the full-data ``Sigmahat``; ``Rhat`` uses each minibatch's own ``Sigmahat``; SGD has neither (``lambda = 0``, no
preconditioner).

All methods run as one stacked batch (``numerics.paper_a.experiments.StackedMinibatchObjective``), cached per (seed,
budget), so both figures and their controls reuse it.  "Converged" (ours, both figures): the excess at ``T`` is
within ``CONVERGED`` times the excess Algorithm 1 reaches from the spectral initialization with the same data and
minibatches (this setting's statistical floor: minibatch context ``b``).  A single-run figure is read as "holds for
a typical draw": the Clopper-Pearson interval of the probability over independent draws is compared with 1/2.
"""
from __future__ import annotations

import functools
import math

import torch

from numerics import DTYPE
from numerics.optim import chain, log_spaced_steps, run, scale
from numerics.paper_a import algorithms as al
from numerics.paper_a import experiments as ex
from numerics.paper_a import oracle as orc
from numerics.paper_a.geometry import LAMBDA
from numerics.paper_a.model import population_loss
from numerics.stats import Decision, decide_binomial
from theorems.claim import Context
from theorems.plots import new_figure

#: the seed's recipe with our numbers (the paper's are lost): d = 4, r = 5 (r > d: A2); A3's scale σ₁(W*Σ^{1/2}) = 0.2;
#: noise σ = 0.1; N = 10⁴ samples; minibatches of b = 16; step η = 0.01 (stable for Algorithm 1 and SGD from both
#: inits); T = 2000 iterations, as the paper's figures
D, R, M_OP, NOISE, N_DATA, BATCH, ETA, T = 4, 5, 0.2, 0.1, 10_000, 16, 0.01, 2000
#: the optimal loss L* = r σ² (the noise floor)
L_STAR = R * NOISE**2
#: "converged" (ours, fixed when the figure checks were written, unchanged since): excess at T within twice the excess
#: Algorithm 1 reaches from the spectral init with the same data and minibatches (the setting's statistical floor,
#: which minibatch noise at b = 16 moves by tens of percent: a factor 2 separates "at the floor" from "above it")
CONVERGED = 2.0
#: "holds for a typical draw": a single-run figure read as a statement with probability above 1/2 over draws
TYPICAL = 0.5
#: the setting in words, for the plots' titles (not a decision)
SETTING = f"d={D}, r={R}, σ={NOISE}, η={ETA}, N={N_DATA}, b={BATCH}"
#: independent (instance, data, init) draws per budget (quick, standard, full): A.Fig2's fraction is ≈ 0.68 (A.Fig1's
#: (c) ≈ 0.73); at 384 draws a Clopper-Pearson interval at z ≈ 4.1-4.4 has half-width ≈ 0.1, so it lies above 1/2
#: unless the observed fraction falls below ≈ 0.60
FIG_DRAWS = (384, 768, 768)

PREREGISTERED = {
    "FIG_DRAWS": "was (96, 192, 384), is (384, 768, 768): raised in issue 11 after the quick tier at seed 1 came back "
                 "inconclusive for both figures (A.Fig1 (c) 68/96, A.Fig2 62/96: intervals across 1/2); the thresholds "
                 "(CONVERGED, TYPICAL, A.Fig1's SLIGHTLY) are unchanged.",
}

#: block name -> (initialization, regularization weight, preconditioned?, fraction of the draws it runs on)
BLOCKS = {
    "alg1_spectral": ("spectral", LAMBDA, True, 1.0),
    "sgd": ("random", 0.0, False, 1.0),
    "alg1_random": ("random", LAMBDA, True, 1.0),
    "alg1_random_noreg": ("random", 0.0, True, 0.5),  # A.Fig2's control: half the draws suffice to reject
}


@functools.lru_cache(maxsize=2)
def shared_runs(seed: int, budget: str) -> dict:
    """All methods of Figures 1-2 on the same draws, one stacked batch; population loss recorded.

    ``L0`` holds the initial losses of every initialization, including the control's wrong spectral init (only its
    starting point enters a decision, so it is not trained).
    """
    ctx = Context(seed=seed, budget=budget)
    gen = ctx.generator("A.Fig1-2", "runs")
    B = ctx.pick(*FIG_DRAWS)
    Sigma, W = al.random_instance(D, R, gen, batch=B, m_op=M_OP)
    x, y = orc.sample_batches(Sigma, W, NOISE, N_DATA, 1, B, gen)
    x, y = x[0], y[0]
    _, S_hat = al.least_squares(x, y)
    inits = {"spectral": al.spectral_init(x, y), "no_sigma_sqrt": al.spectral_init(x, y, "no_sigma_sqrt"),
             "random": al.random_init(B, R, D, gen)}
    schedule = ex.epoch_schedule(N_DATA, BATCH, T, B, gen)
    eye = torch.eye(D, dtype=DTYPE).expand(B, D, D)
    parts = {k: [] for k in ("V", "K", "lam", "S", "Sigma", "W", "rows")}
    sizes = {}
    for name, (init, lam, pre, frac) in BLOCKS.items():
        sel = slice(0, int(B * frac))
        sizes[name] = int(B * frac)
        for key, val in (("V", inits[init][0]), ("K", inits[init][1]), ("S", S_hat if pre else eye),
                         ("Sigma", Sigma), ("W", W)):
            parts[key].append(val[sel])
        parts["lam"].append(torch.full((sizes[name],), lam, dtype=DTYPE))
        parts["rows"].append(torch.arange(sizes[name]))  # every method on the first draws' data and minibatches
    cat = {k: torch.cat(v) for k, v in parts.items()}
    # one copy of the data and the schedule, shared by the methods' runs (copies per method: 1.4 GB at quick)
    objective = ex.StackedMinibatchObjective(x, y, schedule, cat["lam"], rows=cat["rows"])
    steps = sorted(set(log_spaced_steps(T, 80)) | {0, 1, 2, T})
    # Algorithm 1's preconditioner Sigmahat^{-1}; the identity (plain SGD) for the unpreconditioned blocks
    tr = run((cat["V"], cat["K"]), objective, chain(al.precondition(cat["S"]), scale(ETA)), T,
             lambda p, info: {"L": population_loss(*p, cat["Sigma"], cat["W"], NOISE)}, steps)
    L, start = {}, 0
    for name, size in sizes.items():
        L[name] = tr["L"][:, start:start + size]
        start += size
    L0 = {name: population_loss(*init, Sigma, W, NOISE) for name, init in inits.items()}
    return {"steps": tr.steps.numpy(), "L": L, "L0": L0, "B": B}


def typical(ok: torch.Tensor, level: float) -> Decision:
    """'The statement holds for a typical draw': the Clopper-Pearson interval of P(ok) at ``level`` against 1/2
    (``decide_binomial``; no width limit: the interval's side of 1/2 is the decision)."""
    return decide_binomial(int(ok.sum()), ok.numel(), level, at_least=TYPICAL, max_width=math.inf)


#: plotted range of L/L* (display only, not a decision): a diverged draw's curve stops here
PLOT_CEILING = 1e6


def loss_curves(steps, first: torch.Tensor, second: torch.Tensor, labels: tuple[str, str], title: str):
    """Population loss over L* (log scale) of the first four draws of two methods.

    A diverged draw's curve ends where it leaves the plotted range (``PLOT_CEILING``), marked ×: its inf/overflowing
    values would otherwise reach the log axis's tick formatter, which raises on an infinite limit (quick seed 116:
    this plot, not the decision, made A.Fig2 inconclusive).
    """
    fig, ax = new_figure()
    for j in range(min(4, first.shape[1])):
        for curves, color, label in ((first, "tab:blue", labels[0]), (second, "tab:red", labels[1])):
            ratio = (curves[:, j] / L_STAR).double()
            shown = torch.isfinite(ratio) & (ratio < PLOT_CEILING)
            ax.semilogy(steps, ratio.where(shown, torch.nan), color=color, lw=0.9, alpha=0.8,
                        label=label if j == 0 else None)
            if not bool(shown.all()) and bool(shown.any()):
                last = int(shown.nonzero().max())
                ax.plot(steps[last], float(ratio[last]), "x", color=color, ms=6)
    ax.axhline(1, color="k", lw=0.8, ls="--", label="L*")
    ax.set_xlabel("iteration")
    ax.set_ylabel("population loss / L*")
    ax.set_title(title, fontsize=8)
    ax.legend(loc="best", fontsize=7)
    return fig
