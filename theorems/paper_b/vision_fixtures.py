r"""Shared set-up of paper B's vision figures (B.Fig5, B.Fig6, B.Fig7): one set of ViT runs per process and setting.

**Model** (``numerics.paper_b.vision``): Lee et al. (2021)'s ViT for small-size datasets from ``vit-pytorch``, the
paper's model class, configured for 8x8 single-channel images (:data:`CONFIG`; the seed lost the paper's numbers).
**Data**: sklearn's 8x8 digits (1,438 training, 359 held-out images, 10 classes), a scaled-down analog of MNIST and
CIFAR-10; at the ``full`` budget with ``VERIFY_DATA_DIR`` holding MNIST (B.Fig5-6) or CIFAR-10 (B.Fig7) in their
standard formats, those are used instead (:func:`data_for`), with the patch size scaled to the image (:func:`config_for`).
float32, on ``ctx.device`` (``--device cuda`` where present).

**Runs**: ``RUNS`` independent runs (each its own initialization and minibatch order, seeds hashed from the run seed)
of each optimizer in :data:`VARIANTS`, all batched in one vmap; the optimizers share the runs' seeds, so they are
compared run by run (paired).  The controls' mutants train in the same batch (one set of runs per process).

**Step sizes: chosen on calibration seeds 0-4, then frozen** (:data:`HYPER`).  Grid at the quick horizon (300 steps,
batch 32, 5 runs each; criterion: the lowest mean full-training-set loss at T; each optimizer tuned for itself, so
no comparison is earned against a handicapped baseline):

    SGD lr   {0.03, 0.1, 0.3, 1}       -> 0.3   (mean train loss at T: 0.67, 0.19, 0.16, 0.28)
    SPS cap  {0.1, 0.3, 1, 3}          -> 1     (0.127, 0.0773, 0.0778, 0.103: 0.3 and 1 tie; 1 has the lower log-loss)
    SNGD lr  {0.03, 0.1, 0.3, 1}, cap 1 (SPS's: the seed sets one cap "for SPS and SNGD")  -> 0.3  (0.78, 0.21, 0.13, 0.17)
    Adam lr  {3e-4, 1e-3, 3e-3, 1e-2}  -> 1e-2  (0.88, 0.24, 0.077, 0.070)

A second grid at 1000 steps (SGD {0.1, 0.3}, SPS cap {0.3, 1}, SNGD lr {0.1, 0.3} x cap {0.3, 1}, Adam {3e-3, 1e-2})
showed every optimizer at train accuracy >= 0.99 (memorized), where the loss at T is set by rare spikes and the
ranking moves with the setting: the horizons are kept in the phase where the loss still falls (300 / 600 steps).
Decision metrics chosen on seeds 0-4 (the runs of the frozen step sizes, 8 per optimizer): the loss at the single
step T (whole training set) was too noisy for a paired decision at 8 runs (SPS minus SGD straddled 0 at 4 of 5
seeds), so speed is read off the whole curve (``mean_log_loss``: the smoothed log loss averaged over the run), and
the runs were raised from 8 to 12 at the quick budget.
"""
from __future__ import annotations

import functools

import torch

from numerics.paper_b import vision as V
from theorems.claim import Context

#: constants changed after seeing results
PREREGISTERED = {"RUNS": "was (8, 16, 16); at 8 runs the paired SPS-SGD decisions straddled 0 at some of seeds 0-4, "
                         "so (12, 24, 24), chosen before the fresh seeds.  Standard and full (12, 64, 64) since "
                         "session 15: B.Fig5's sngd-slower was inconclusive at fresh standard seed 721 (gap 0.108 "
                         "[-0.003, 0.219] against the declared 0.2, 24 runs); sized for power: a per-run SD up to 0.13 "
                         "(the largest of seeds 720-722) and a true gap up to 0.09 give an upper bound below 0.2 with "
                         "probability >= 0.99 from 57 runs (z 4.06 + 2.33); quick unchanged (60 fresh seeds decided)"}

#: the ViT-for-small-datasets configuration (ours; the seed lost the paper's): patch 4 gives 2x2 patches + CLS
#: (patch 2, 16 patches, cost 2x per step and sat at chance for 100 steps at lr 0.1); width 16, 2 heads of 8, MLP 32,
#: depth 2: ~7k parameters, the smallest ViT with more than one block and head that learns the digits in 300 steps
CONFIG = dict(image_size=8, patch_size=4, num_classes=10, dim=16, depth=2, heads=2, dim_head=8, mlp_dim=32, channels=1)
#: minibatch size (the seed lost the paper's): 32, about 45 steps per epoch of the 1,438 training digits
BATCH = 32
#: independent runs per optimizer at the quick / standard / full budget: >= 8 per decision (the issue's floor);
#: 64 at standard and full: the power to decide a gap of 0.09 against 0.2 (PREREGISTERED)
RUNS = (12, 64, 64)
#: steps on the digits at the quick / standard / full budget: 300 (about 7 epochs; the grid's horizon) and 600 (13
#: epochs), both before the runs memorize the training set (at 1000 steps every optimizer is at train accuracy >= 0.99)
STEPS = (300, 600, 600)
#: steps on MNIST / CIFAR-10 (full budget with VERIFY_DATA_DIR): 3000 minibatches of 32 (1.6 epochs of MNIST; the
#: paper ran 40 epochs on MNIST, 80 on CIFAR-10: raise it on a GPU for a faithful run)
PAPER_DATA_STEPS = 3000
#: parameter norms are recorded every this many steps (30 / 60 points per run at quick / standard)
NORM_EVERY = 10
#: frozen step sizes (module docstring: the grid and why): SGD, SNGD (capped normalized), SPS (capped Polyak), Adam
HYPER = {"SGD": dict(lr=0.3), "SNGD": dict(lr=0.3, cap=1.0), "SPS": dict(cap=1.0), "Adam": dict(lr=1e-2)}
#: controls' mutants, trained beside the optimizers: SPS with a cap so small (1e-3) that min(L/||g||^2, cap) is the
#: cap at every step (SGD at lr 1e-3); Adam without its 1/sqrt(v) normalization (heavy ball, beta 0.9, at Adam's lr
#: scaled by 1 - beta: Adam's first moment alone); SGD with weight decay 0.1 (per step the parameters shrink by
#: lr * wd = 3 %, far more than the gradient adds once the loss is small: norms cannot keep growing)
TINY_CAP = 1e-3
WEIGHT_DECAY = 0.1
MOMENTUM = 0.9


def _variants():
    from numerics import optim

    h = HYPER
    return {
        "SGD": V.optimizer("SGD", **h["SGD"]),
        "SNGD": V.optimizer("SNGD", **h["SNGD"]),
        "SPS": V.optimizer("SPS", **h["SPS"]),
        "Adam": V.optimizer("Adam", **h["Adam"]),
        "SPS, cap 1e-3": V.optimizer("SPS", cap=TINY_CAP),
        "Adam without 1/sqrt(v)": optim.chain(optim.momentum(MOMENTUM), optim.scale((1 - MOMENTUM) * h["Adam"]["lr"])),
        "SGD + weight decay": V.optimizer("SGD+wd", lr=h["SGD"]["lr"], wd=WEIGHT_DECAY),
    }


#: what trains in one batch: the four optimizers of Figures 5-7 and the three mutants the controls decide on
VARIANTS = ("SGD", "SNGD", "SPS", "Adam", "SPS, cap 1e-3", "Adam without 1/sqrt(v)", "SGD + weight decay")
OPTIMIZERS = ("SGD", "SNGD", "SPS", "Adam")  # the figures' curves (the seed's four optimizers)


def data_for(ctx: Context, paper_data: str) -> str:
    """'digits', or ``paper_data`` ('mnist' / 'cifar10') at the full budget when ``$VERIFY_DATA_DIR`` holds it."""
    if ctx.budget == "full" and V.find_data(paper_data) is not None:
        return paper_data
    return "digits"


def config_for(source: str) -> dict:
    """CONFIG, with image size, channels and patch size for the paper's data (patch 4: 7x7 patches on MNIST, 8x8 on
    CIFAR-10)."""
    if source == "mnist":
        return dict(CONFIG, image_size=28, patch_size=4, channels=1)
    if source == "cifar10":
        return dict(CONFIG, image_size=32, patch_size=4, channels=3)
    return dict(CONFIG)


def runs(ctx: Context, paper_data: str = "mnist") -> tuple[dict[str, V.VisionRun], dict]:
    """(name -> VisionRun for every variant, the set-up as a dict) at ctx's seed, budget and device; computed once per
    process and setting (the digits runs are shared by B.Fig5, B.Fig6 and B.Fig7)."""
    source = data_for(ctx, paper_data)
    n, steps = ctx.pick(*RUNS), (ctx.pick(*STEPS) if source == "digits" else PAPER_DATA_STEPS)
    seeds = tuple(ctx.derived_seed("B.Fig5-7 vision runs", i) for i in range(n))
    setup = dict(data=source, config=config_for(source), batch=BATCH, runs=n, steps=steps, hyper=HYPER,
                 norm_every=NORM_EVERY, dtype="float32", device=ctx.device)
    return _runs(source, seeds, steps, ctx.device), setup


@functools.lru_cache(maxsize=2)
def _runs(source: str, seeds: tuple, steps: int, device: str) -> dict:
    data = V.digits() if source == "digits" else V.load_images(source)
    variants = _variants()
    return V.train(config_for(source), data, {k: variants[k] for k in VARIANTS}, list(seeds), steps, BATCH,
                   norm_every=NORM_EVERY, device=device)


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
