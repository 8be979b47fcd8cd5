r"""What paper B's vision figures (B.Fig5, B.Fig6, B.Fig7) read off the ViT runs of ``vision_setups``: the speed
metrics their checks decide on (log losses and errors smoothed over the run), the paper's own readings (train loss
and train accuracy per epoch, compared at matched epochs), how often the shared cap bound, and the figures they draw.
"""
from __future__ import annotations

import math

import torch

from numerics.paper_b import vision as V
from theorems.paper_b.vision_setups import BATCH, LOSS_FLOOR, SMOOTH


def final_log_loss(run: V.VisionRun) -> torch.Tensor:
    """log of the whole-training-set loss after the last step, floored at LOSS_FLOOR, (B,)."""
    return run.final["train_loss"].double().clamp_min(LOSS_FLOOR).log()


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
    step: 'trains slower' over the whole run, not at one step; floored at LOSS_FLOOR, float32's resolution), (B,)."""
    return V.mean_log_smoothed(run.batch_loss, SMOOTH, LOSS_FLOOR)


# ---------------------------------------------------------------------------
# The paper's readings: train loss and train accuracy per epoch, at matched epochs
# ---------------------------------------------------------------------------


def per_epoch(x: torch.Tensor, steps_per_epoch: int) -> torch.Tensor:
    """``x`` (S, B) averaged over each epoch's steps, (E, B): the train loss (or error) a training log prints per
    epoch."""
    e = len(x) // steps_per_epoch
    return x[:e * steps_per_epoch].double().reshape(e, steps_per_epoch, -1).mean(1)


def matched_epochs(n_epochs: int) -> list[int]:
    """The epochs (1-based) at which two optimizers are compared: the ends of the horizon's four quarters."""
    return sorted({max(1, math.ceil(k * n_epochs / 4)) for k in (1, 2, 3, 4)})


def paper_reading(all_runs: dict, who: str, base: str, steps_per_epoch: int, ev=None) -> str:
    """The paper's reading of ``who`` against ``base``: their per-epoch train loss and accuracy, at matched epochs and
    along training (not decided); the measurements go to ``ev`` when given.  Returns one line."""
    La, Lb = (per_epoch(all_runs[k].batch_loss, steps_per_epoch) for k in (who, base))
    Aa, Ab = (1 - per_epoch(all_runs[k].batch_error, steps_per_epoch) for k in (who, base))
    n = len(La)
    ratio = (La.clamp_min(LOSS_FLOOR) / Lb.clamp_min(LOSS_FLOOR)).log()  # (E, B): paired log ratio of epoch losses
    above = int((La.median(1).values > Lb.median(1).values).sum())
    if ev is not None:
        for e in matched_epochs(n):
            m = float(ratio[e - 1].mean())
            ev.measure(f"paper's reading, epoch {e}: log(train loss {who} / {base}) (mean over runs)", m)
            ev.measure(f"paper's reading, epoch {e}: train accuracy {who} − {base} (mean over runs)",
                       float((Aa[e - 1] - Ab[e - 1]).mean()))
        ev.measure(f"paper's reading: epochs at which {who}'s median train loss is above {base}'s", above)
    return (f"paper's reading: epoch-{n} train loss {who}/{base} ×{math.exp(float(ratio[-1].mean())):.3g}, accuracy "
            f"{float(Aa[-1].mean()):.3f} vs {float(Ab[-1].mean()):.3f}; {who} above {base} at {above} of {n} epochs")


def cap_bound(run: V.VisionRun, kind: str, hyper: dict) -> float:
    """The fraction of the run's steps at which the cap bound: SNGD's ``lr/||g|| > cap``, SPS's ``L/||g||^2 > cap``
    (a zero gradient, a minibatch loss of exactly 0 in float32, takes no step whatever the cap: not counted)."""
    g, L = run.grad_norm.double(), run.batch_loss.double()
    ratio = hyper["SNGD"] / g if kind == "SNGD" else L / g**2
    return float(((ratio > hyper["cap"]) & (g > 0)).double().mean())


def beside(ev, all_runs: dict, setup: dict, who: str, base: str = "SGD") -> str:
    """Into ``ev``: the setting, the paper's reading of ``who`` against ``base`` and, for SNGD and SPS, how often the
    cap bound; returns them in one line (for the check's headline, which a sensitivity map shows per setting)."""
    ev.say(setting_line(setup))
    parts = [paper_reading(all_runs, who, base, setup["steps_per_epoch"], ev)]
    if who in ("SNGD", "SPS"):
        b = cap_bound(all_runs[who], who, setup["hyper"])
        ev.measure(f"fraction of {who}'s steps at which the cap {setup['cap']:g} bound", b)
        parts.append(f"cap {setup['cap']:g} bound at {100 * b:.0f} % of {who}'s steps")
    h = setup["hyper"]
    parts.append(f"{setup['epochs']:g} epochs, lr SGD {h['SGD']:g} SNGD {h['SNGD']:g} Adam {h['Adam']:g}")
    return "; ".join(parts)


def setting_line(setup: dict) -> str:
    """The setting a run was trained at: horizon, cap, step sizes."""
    h = setup["hyper"]
    return (f"{setup['runs']} paired runs, {setup['epochs']:g} epochs ({setup['steps']} steps), data {setup['data']}; "
            f"cap {setup['cap']:g}; step sizes SGD {h['SGD']:g}, SNGD {h['SNGD']:g}, Adam {h['Adam']:g} "
            f"(tuned: {setup['tuned_by']})")


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


def plot_epochs(all_runs: dict, names, steps_per_epoch: int, title: str):
    """The paper's axes: train loss (log) and train accuracy per epoch, per optimizer, median over runs and a 10-90 %
    band."""
    import numpy as np

    from theorems.plots import new_figure

    fig, ax = new_figure()
    acc = ax.twinx()
    for name in names:
        L = per_epoch(all_runs[name].batch_loss, steps_per_epoch).numpy()
        A = 1 - per_epoch(all_runs[name].batch_error, steps_per_epoch).numpy()
        e = np.arange(1, len(L) + 1)
        col = COLORS.get(name, "tab:gray")
        lo, mid, hi = np.quantile(L, [0.1, 0.5, 0.9], axis=1)
        ax.plot(e, mid, color=col, lw=1.2, label=f"{name} loss")
        ax.fill_between(e, lo, hi, color=col, alpha=0.15, lw=0)
        acc.plot(e, np.median(A, axis=1), color=col, lw=1.0, ls="--", label=f"{name} accuracy")
    ax.set_yscale("log")
    ax.set_xlabel("epoch")
    ax.set_ylabel("train loss per epoch (solid)")
    acc.set_ylabel("train accuracy per epoch (dashed)")
    ax.set_title(title)
    ax.legend(fontsize=6, loc="center right")
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
