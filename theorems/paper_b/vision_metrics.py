r"""What paper B's vision figures (B.Fig5, B.Fig6, B.Fig7) read off the ViT runs of ``vision_setups``: the speed
metrics their checks decide on (log losses and errors smoothed over the run) and the figures they draw.
"""
from __future__ import annotations

import torch

from numerics.paper_b import vision as V
from theorems.paper_b.vision_setups import BATCH


def final_log_loss(run: V.VisionRun) -> torch.Tensor:
    """log of the whole-training-set loss after the last step, (B,)."""
    return run.final["train_loss"].double().log()


#: the trailing window of the smoothed minibatch loss: a tenth of the run (30 steps at quick)
SMOOTH = 0.1


def smoothed(run: V.VisionRun) -> torch.Tensor:
    """The minibatch loss averaged over the trailing SMOOTH * T steps, (S, B) (the curves the figures draw)."""
    return run.smoothed_loss(max(1, int(SMOOTH * len(run.batch_loss)))).double()


def mean_log_error(run: V.VisionRun) -> torch.Tensor:
    """The log of the smoothed minibatch error rate averaged over the run's steps, (B,) (errors floored at 1/(4 x
    batch): a window with no error at all would be log 0)."""
    E = run.smoothed_error(max(1, int(SMOOTH * len(run.batch_loss)))).double()
    return E.clamp_min(1 / (4 * BATCH)).log().mean(0)


def mean_log_loss(run: V.VisionRun) -> torch.Tensor:
    """The log of the smoothed minibatch loss averaged over the run's steps (the area under the log-loss curve per
    step: 'trains slower' over the whole run, not at one step), (B,)."""
    return smoothed(run).log().mean(0)


# ---------------------------------------------------------------------------
# Figures shared by the three claims
# ---------------------------------------------------------------------------

COLORS = {"SGD": "tab:blue", "SNGD": "tab:orange", "SPS": "tab:green", "Adam": "tab:red"}  # one per optimizer


def plot_losses(all_runs: dict, names, title: str):
    """Smoothed train loss vs step per optimizer: the median over runs and the band between the runs' 10 % and 90 %
    quantiles (log axis)."""
    import numpy as np

    from theorems.plots import new_figure

    fig, ax = new_figure()
    for name in names:
        L = smoothed(all_runs[name]).numpy()
        t = np.arange(1, len(L) + 1)
        lo, mid, hi = np.quantile(L, [0.1, 0.5, 0.9], axis=1)
        col = COLORS.get(name, "tab:gray")
        ax.plot(t, mid, color=col, lw=1.2, label=name)
        ax.fill_between(t, lo, hi, color=col, alpha=0.2, lw=0)
    ax.set_yscale("log")
    ax.set_xlabel("step t")
    ax.set_ylabel("train loss (minibatch, smoothed)")
    ax.set_title(title)
    ax.legend(fontsize=7)
    return fig


def plot_norms(run: V.VisionRun, title: str):
    """Parameter norm per layer vs step: the median over runs, relative to its value at step 0, with a 10-90 % band."""
    import numpy as np

    from theorems.plots import new_figure

    fig, ax = new_figure()
    t = run.norm_steps.numpy()
    N = run.layer_norms.double().numpy()  # (K, B, G)
    rel = N / N[:1]
    for g, name in enumerate(run.groups):
        lo, mid, hi = np.quantile(rel[:, :, g], [0.1, 0.5, 0.9], axis=1)
        line, = ax.plot(t, mid, lw=1.1, label=name)
        ax.fill_between(t, lo, hi, color=line.get_color(), alpha=0.15, lw=0)
    ax.set_xlabel("step t")
    ax.set_ylabel("‖θ_layer(t)‖ / ‖θ_layer(0)‖")
    ax.set_title(title)
    ax.legend(fontsize=6)
    return fig
