r"""How paper A's Figures 1 and 2 (A.Fig1, A.Fig2) are read: "converged", "holds for a typical draw", and the plot.

This module defines no claim.  "Converged" (ours, both figures): the excess at ``T`` is within ``CONVERGED`` times the
excess Algorithm 1 reaches from the spectral initialization with the same data and minibatches (this setting's
statistical floor: minibatch context ``b``).  A single-run figure is read as "holds for a typical draw": the
Clopper-Pearson interval of the probability over independent draws is compared with 1/2.
"""
from __future__ import annotations

import math

import torch

from numerics.stats import Decision, decide_binomial
from theorems.claim import FreeChoice
from theorems.paper_a.figure_setups import ETA, L_STAR, figure_runs
from theorems.plots import new_figure

#: "converged" (ours, fixed when the figure checks were written, unchanged since): excess at T within twice the excess
#: Algorithm 1 reaches from the spectral init with the same data and minibatches (the setting's statistical floor,
#: which minibatch noise at b = 16 moves by tens of percent: a factor 2 separates "at the floor" from "above it")
CONVERGED = 2.0
#: "holds for a typical draw": a single-run figure read as a statement with probability above 1/2 over draws
TYPICAL = 0.5


def typical(ok: torch.Tensor, level: float) -> Decision:
    """'The statement holds for a typical draw': the Clopper-Pearson interval of P(ok) at ``level`` against 1/2
    (``decide_binomial``; no width limit: the interval's side of 1/2 is the decision)."""
    return decide_binomial(int(ok.sum()), ok.numel(), level, at_least=TYPICAL, max_width=math.inf)


def eta_choice(check: str) -> FreeChoice:
    """The step size both figures run at (``figure_runs``' ``eta``), a free choice of ``check``."""
    return FreeChoice("step size η", ETA, "the paper's step is lost (its T = 2000 is kept); 0.003-0.03 spans a factor 3 "
                      "either side of ours", {check: lambda v: {"runs": figure_runs.bind(eta=v)}},
                      low=0.003, high=0.03, scale="log")


def converged_choice(check: str, reading: str) -> FreeChoice:
    """"Converged" (``CONVERGED`` times the floor), a free choice of ``check``; ``reading``: the figure's word for
    it ('has not converged', 'converges')."""
    return FreeChoice("converged (× floor)", CONVERGED, f"{reading!r} is read off a log-scale loss plot: from 1.5× the "
                      "floor (just outside its minibatch noise of tens of percent) to 10× (a decade above it)",
                      {check: lambda v: {"converged": v}}, low=1.5, high=10.0, scale="log")


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
