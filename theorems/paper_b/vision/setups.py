r"""Set-up of paper B's vision figures (B.Fig5, B.Fig6, B.Fig7): the ViT runs they share, a fixture
(:func:`vision_runs`, ``theorems.fixture``) computed once per run, data set, horizon and cap and injected into their
checks, and the two free choices of the runs the paper leaves open (:func:`cap_choice`, :func:`epochs_choice`; how
the runs are read, ``metrics``).

**Model** (``numerics.paper_b.vision``): Lee et al. (2021)'s ViT for small-size datasets from ``vit-pytorch``, the
paper's model class, configured for 8x8 single-channel images (:data:`CONFIG`; the source text lost the paper's
numbers).
**Data**: sklearn's 8x8 digits (1,438 training, 359 held-out images, 10 classes; 44 minibatches per epoch), a
scaled-down analog of MNIST and CIFAR-10; at the ``full`` budget with ``VERIFY_DATA_DIR`` holding MNIST (B.Fig5-6) or
CIFAR-10 (B.Fig7) in their standard formats, those are used instead, with the patch size scaled to the image
(:func:`config_for`).  float32, on ``ctx.device`` (``--device cuda`` where present).

**The optimizers as the paper defines them** (App. C; ``numerics.paper_b.vision``): SGD ``-eta g``; SNGD
``-min(eta/||g||, cap) g`` and SPS ``-min(L/||g||^2, cap) g`` (the deterministic PS of Sec. 2 on the minibatch, L* = 0),
``||g||`` over the whole model; Adam.  The source text sets one parameter "for SPS and SNGD" whose value is lost: read
as the cap both carry (Fig. 2's caps on NGD and PS), it is a free choice, :data:`CAP` at the claims' own values and
:data:`CAP_RANGE` in their sensitivity maps, from a cap that binds at most steps (SNGD and SPS are then SGD at step
``cap``) to one that binds at almost none (plain normalized and Polyak steps).  Each check reports the fraction of
steps at which it bound.

**Horizon** in epochs, a free choice: :data:`EPOCHS` at the claims' own values, up to the paper's 40 (MNIST) or 80
(CIFAR-10) epochs in the maps (:data:`EPOCHS_RANGE`, :data:`CIFAR10_EPOCHS_RANGE`).

**Step sizes tuned per optimizer, horizon and cap on tuning seeds that never decide** (:func:`tune`): each of SGD's,
SNGD's and Adam's step sizes over a small grid (:data:`GRID`), on :data:`TUNING_SEEDS` (hashed from their own label,
never a run's seed), choosing the lowest run-averaged log train loss over the horizon (the metric B.Fig5 decides, so no
optimizer is compared at a handicap).  SPS has no step size besides the cap (Polyak's step is its own).  One run of
the grid at the longest horizon gives every shorter horizon (a run's first steps do not depend on its length).  The
grid's choices at the settings the quick and standard designs visit are frozen in :data:`TUNED` (what :func:`tune`
returns there, reproduced by ``python -m theorems.paper_b.vision.setups``); any other setting is tuned in the run.
Cost of the grid: 15 step sizes x 3 tuning seeds (+ 15 SNGD runs per further cap), 45-90 ViTs trained together for
the longest horizon: TUNED's 4 caps to 80 epochs (90 ViTs, 3,520 steps) took 7 minutes on 2 shared cores.

**Runs**: ``RUNS`` independent runs (each its own initialization and minibatch order, seeds hashed from the run seed)
of each optimizer in :data:`VARIANTS`, each optimizer's runs batched in one vmap and trained in a task of its own
(:func:`variant_runs`, 17-22 s at the standard budget against 233 s for all eight in one task, so a cluster trains
them side by side), gathered by :func:`vision_runs`; the optimizers share the runs' seeds, so they are compared run
by run (paired), and an optimizer trained alone gives the bits it gives beside the others.  The controls' mutants
train at every setting beside the optimizers: a control passes the mutant (a :class:`Variant`, defined here beside
its reason) where its check reads an optimizer's runs, and a sensitivity map re-runs the controls at other settings
of the cap and the horizon (its overrides merged with the setting's), where they then read the same fixture value as
the checks.  The mutants double the training (eight variants for four).
"""
from __future__ import annotations

import hashlib
import math

from numerics import optim
from numerics.optim import Variant
from numerics.paper_b import vision as V
from theorems.claim import FreeChoice
from theorems.fixture import Request, as_request, fixture, per_budget

#: the ViT-for-small-datasets configuration (ours; the source text lost the paper's): patch 4 gives 2x2 patches + CLS
#: (patch 2, 16 patches, cost 2x per step and sat at chance for 100 steps at lr 0.1); width 16, 2 heads of 8, MLP 32,
#: depth 2: ~7k parameters, the smallest ViT with more than one block and head that learns the digits in 300 steps
CONFIG = dict(image_size=8, patch_size=4, num_classes=10, dim=16, depth=2, heads=2, dim_head=8, mlp_dim=32, channels=1)
#: minibatch size (the source text lost the paper's): 32, 44 steps per epoch of the 1,438 training digits
BATCH = 32
#: independent runs per optimizer at the quick / standard / full budget: >= 8 per decision at every budget;
#: 64 at standard and full: the power to decide a gap of 0.09 against 0.2 (ledger)
RUNS = (12, 64, 64)
#: the claims' own horizon in epochs of the digits (308 steps, about the 300 steps the step sizes were first chosen
#: at): in the phase where the loss still falls; the maps reach the paper's 40 and 80 epochs (EPOCHS_RANGE)
EPOCHS = 7
#: the horizon's plausible range for Figs. 5-6: the paper trains 40 epochs on MNIST; from 5 (the loss still falling
#: steeply) to those 40
EPOCHS_RANGE = (5, 40)
#: the horizon's plausible range for Fig. 7: the paper trains 80 epochs on CIFAR-10; from 5 to those 80
CIFAR10_EPOCHS_RANGE = (5, 80)
#: the cap SNGD and SPS share at the claims' own values: 1, the value the first grid chose for SPS (App. C: one
#: parameter "for SPS and SNGD"; its value is lost)
CAP = 1.0
#: the cap's plausible range: 0.1 binds at >= 90 % of SNGD's (lr 0.3) and SPS's steps over 7 epochs on the tuning
#: seeds (both then SGD at step 0.1), 1e4 at < 1 % over 40 epochs (plain normalized and Polyak steps)
CAP_RANGE = (0.1, 1e4)
#: steps on MNIST / CIFAR-10 (full budget with VERIFY_DATA_DIR): 3000 minibatches of 32 (1.6 epochs of MNIST; the
#: paper ran 40 epochs on MNIST, 80 on CIFAR-10: raise it on a GPU for a faithful run)
PAPER_DATA_STEPS = 3000
#: parameter norms are recorded every this many steps (31 points per run over 7 epochs)
NORM_EVERY = 10
#: the trailing window of the smoothed minibatch loss: a tenth of the run (30 steps over 7 epochs)
SMOOTH = 0.1
#: the smallest minibatch loss float32 resolves: a sample's cross-entropy log(1 + sum_j e^(-margin_j)) is exactly 0
#: once the sum is below 2^-24 (1 + it rounds to 1), else at least about 2^-23; a mean over BATCH samples, 2^-23 / BATCH
#: (losses are floored there before a log: uncapped SNGD reaches exactly 0 within 80 epochs on the tuning seeds)
LOSS_FLOOR = 2**-23 / BATCH
#: the tuning family: 3 runs per step size, seeds hashed from their own label (never a deciding run's seed, which
#: hashes the run seed with "B.Fig5-7 vision runs"); 3 paired runs resolve neighbouring grid points half a decade apart
TUNING_SEEDS = tuple(int.from_bytes(hashlib.sha256(repr(("B.Fig5-7 tuning", i)).encode()).digest()[:8], "little")
                     & (2**63 - 1) for i in range(3))
#: the step-size grids, half a decade apart, around the first grid's choices (SGD 0.3, SNGD 0.3, Adam 1e-2, which
#: was that grid's edge): two points either side
GRID = {"SGD": (0.03, 0.1, 0.3, 1.0, 3.0), "SNGD": (0.03, 0.1, 0.3, 1.0, 3.0), "Adam": (3e-4, 1e-3, 3e-3, 1e-2, 3e-2)}
#: the grid's choices (tune) at the settings the quick and standard designs visit, (epochs, cap) -> step sizes, frozen
#: so that a run does not repeat the grid (any other setting is tuned in the run): SGD 0.3 everywhere, SNGD 0.3 but 0.1
#: at 40 epochs with cap 1e4, Adam 1e-2 but 3e-3 at 20 and 40 epochs
TUNED = {(e, c): {"SGD": 0.3, "SNGD": 0.1 if (e, c) == (40, "10000") else 0.3, "Adam": 3e-3 if e in (20, 40) else 1e-2}
         for e in (5, 7, 14, 20, 40, 80) for c in ("0.1", "1", "31.6228", "10000")}
#: controls' mutants, trained beside the optimizers, each one plausible error in the optimizer a claim is about (its
#: reason beside its Variant below): SGD's weight decay at the customary CIFAR-10 value 5e-4 (the ResNet and ViT
#: recipes' default; per step the parameters shrink by lr * wd = 1.5e-4 at lr 0.3)
WEIGHT_DECAY = 5e-4


#: the four optimizers of Figures 5-7 at the setting's tuned step sizes and cap
SGD = Variant("SGD", lambda h: V.sgd(h["SGD"]))
SNGD = Variant("SNGD", lambda h: V.scale_by_capped_normalized(h["SNGD"], h["cap"]))
SPS = Variant("SPS", lambda h: V.scale_by_stochastic_polyak(h["cap"]))
ADAM = Variant("Adam", lambda h: V.adam(h["Adam"]))
#: B.Fig5's and B.Fig6's control: the Polyak step with the square of the gradient norm dropped, min(L/||g||, cap) in
#: place of min(L/||g||^2, cap) (optim.scale_by_polyak_unsquared): a slip in the step's formula, everything else SPS's
SPS_UNSQUARED = Variant("SPS with ||g|| for ||g||^2", lambda h: optim.scale_by_polyak_unsquared(h["cap"]))
#: B.Fig6's control: Adam without its bias corrections (optim.scale_by_adam_without_bias_correction, Adam's betas and
#: eps, at Adam's lr): the textbook slip in implementing Adam, steps 2-6.5 times Adam's over the quick horizon
ADAM_UNCORRECTED = Variant("Adam without bias correction",
                           lambda h: optim.chain(optim.scale_by_adam_without_bias_correction(), optim.scale(h["Adam"])))
#: B.Fig5's and B.Fig7's control: SNGD normalized per parameter tensor, min(lr/||g_k||, cap) g_k for each tensor k,
#: instead of by the whole model's gradient norm (optim.scale_by_capped_normalized_per_leaf), at SNGD's lr and cap
SNGD_PER_TENSOR = Variant("SNGD normalized per tensor",
                          lambda h: optim.scale_by_capped_normalized_per_leaf(h["SNGD"], h["cap"]))
#: B.Fig7's control: SGD with weight decay WEIGHT_DECAY, the customary value (the theory's norm growth is for the
#: unregularized loss: any weight decay bounds the norm in the limit)
SGD_WEIGHT_DECAY = Variant("SGD + weight decay 5e-4", lambda h: V.optimizer("SGD+wd", lr=h["SGD"], wd=WEIGHT_DECAY))

#: the figures' four optimizers (the source text's), trained at every setting
OPTIMIZER_VARIANTS = (SGD, SNGD, SPS, ADAM)
#: what trains in one batch at every setting: the four optimizers and the four mutants the controls decide on
VARIANTS = OPTIMIZER_VARIANTS + (SPS_UNSQUARED, ADAM_UNCORRECTED, SNGD_PER_TENSOR, SGD_WEIGHT_DECAY)
#: the figures' curves (the source text's four optimizers), by name
OPTIMIZERS = ("SGD", "SNGD", "SPS", "Adam")


def config_for(source: str) -> dict:
    """CONFIG, with image size, channels and patch size for the paper's data (patch 4: 7x7 patches on MNIST, 8x8 on
    CIFAR-10)."""
    if source == "mnist":
        return dict(CONFIG, image_size=28, patch_size=4, channels=1)
    if source == "cifar10":
        return dict(CONFIG, image_size=32, patch_size=4, channels=3)
    return dict(CONFIG)


def cap_key(cap: float) -> str:
    """A cap as TUNED's key (6 significant digits: a design's points are computed in floating point)."""
    return f"{float(cap):.6g}"


def tune(horizons, caps, device: str = "cpu") -> dict:
    """The grid's choice of each optimizer's step size at each (epochs, cap): ``{(epochs, cap_key): {"SGD": lr,
    "SNGD": lr, "Adam": lr}}``, and under ``"criterion"`` each grid point's mean over the tuning seeds of the
    run-averaged log train loss (floored at LOSS_FLOOR; ``inf`` where a run diverged), and under ``"exact zeros"`` the
    fraction of each grid point's minibatch losses that are exactly 0 in float32 over the longest horizon.

    Every grid point is trained once, on TUNING_SEEDS, for the longest horizon; a shorter horizon reads its first steps
    (the smoothing window then scales with that horizon, as in a run of that length).  SGD's and Adam's step sizes do
    not depend on the cap."""
    data = V.digits()
    per_epoch = len(data.y_train) // BATCH
    caps = [float(c) for c in caps]
    grid = {f"SGD {lr:g}": V.sgd(lr) for lr in GRID["SGD"]} | {f"Adam {lr:g}": V.adam(lr) for lr in GRID["Adam"]}
    grid |= {f"SNGD {lr:g} cap {cap_key(c)}": V.scale_by_capped_normalized(lr, c) for c in caps for lr in GRID["SNGD"]}
    steps = max(horizons) * per_epoch
    runs = V.train(CONFIG, data, grid, list(TUNING_SEEDS), steps, BATCH, norm_every=steps, device=device)
    crit = {}
    for e in horizons:
        for name, run in runs.items():
            v = float(V.mean_log_smoothed(run.batch_loss[:e * per_epoch], SMOOTH, LOSS_FLOOR).mean())
            crit[(e, name)] = v if math.isfinite(v) else math.inf  # a diverged run (NaN) is never chosen
    out: dict = {"criterion": {f"{e} epochs: {n}": v for (e, n), v in crit.items()},
                 "exact zeros": {n: float((run.batch_loss == 0).double().mean()) for n, run in runs.items()}}
    for e in horizons:
        best = {k: min(GRID[k], key=lambda lr: crit[(e, f"{k} {lr:g}")]) for k in ("SGD", "Adam")}
        for c in caps:
            sngd = min(GRID["SNGD"], key=lambda lr: crit[(e, f"SNGD {lr:g} cap {cap_key(c)}")])
            out[(e, cap_key(c))] = {"SGD": best["SGD"], "SNGD": sngd, "Adam": best["Adam"]}
    return out


def tuned_steps(epochs: int, cap: float, device: str = "cpu") -> tuple[dict, str]:
    """The step sizes at (epochs, cap) and the cap, ``{"SGD": lr, "SNGD": lr, "Adam": lr, "cap": cap}``, and where
    they come from (the frozen TUNED, or the grid run here)."""
    key = (int(epochs), cap_key(cap))
    if key in TUNED:
        return dict(TUNED[key], cap=float(cap)), "TUNED (the grid on the tuning seeds, frozen)"
    return dict(tune((int(epochs),), (cap,), device)[key], cap=float(cap)), "the grid on the tuning seeds, in this run"


@fixture
def step_sizes(ctx, epochs: int = EPOCHS, cap: float = CAP) -> tuple[tuple[int, str], dict, str]:
    """The setting (epochs, cap key) and :func:`tuned_steps` there on the run's device: one value that every
    variant's task reads, so a setting outside TUNED runs the grid once, not once per variant."""
    return (int(epochs), cap_key(cap)), *tuned_steps(epochs, cap, ctx.device)


def _setting(ctx, full_data, epochs: int, cap: float, hyper: dict,
             tuned_by: str) -> tuple[V.ImageData, list[int], dict]:
    """The data, the runs' seeds and the set-up dict of a setting (what :func:`vision_runs` returns beside the runs)."""
    source = "digits" if full_data is None or V.find_data(full_data) is None else full_data
    data = V.digits() if source == "digits" else V.load_images(source)
    per_epoch = len(data.y_train) // BATCH
    steps = int(epochs) * per_epoch if source == "digits" else PAPER_DATA_STEPS
    n = ctx.pick(*RUNS)
    seeds = [ctx.derived_seed("B.Fig5-7 vision runs", i) for i in range(n)]
    setup = dict(data=source, config=config_for(source), batch=BATCH, runs=n, steps=steps, steps_per_epoch=per_epoch,
                 epochs=steps / per_epoch, cap=float(cap), hyper=hyper, tuned_by=tuned_by, norm_every=NORM_EVERY,
                 dtype="float32", device=ctx.device)
    return data, seeds, setup


def _train(ctx, data, seeds, setup, variants) -> dict[str, V.VisionRun]:
    """``variants``' runs at a setting (one batch)."""
    return V.train(setup["config"], data, {v.name: v.make(setup["hyper"]) for v in variants}, seeds, setup["steps"],
                   BATCH, norm_every=NORM_EVERY, device=ctx.device)


@fixture(uses={"hyper": step_sizes})
def variant_runs(ctx, hyper, variant: str, full_data=per_budget(None, None, "mnist"), epochs: int = EPOCHS,
                 cap: float = CAP) -> tuple[V.VisionRun, dict]:
    """The runs of one variant of VARIANTS (by name) at a setting, and the setting's set-up dict: one task each, so
    the variants train in parallel on a cluster.  A variant trained alone gives the bits it gives beside the others
    (``numerics.paper_b.vision.train``: its runs' initializations and minibatch orders come from the seeds alone, and
    its updates see only its own runs; a test compares)."""
    _, *tuned = hyper
    data, seeds, setup = _setting(ctx, full_data, epochs, cap, *tuned)
    v = {v.name: v for v in VARIANTS}[variant]
    return _train(ctx, data, seeds, setup, [v])[v.name], setup


def _parts(full_data, epochs, cap) -> dict:
    """The requests :func:`vision_runs` gathers at a setting: the step sizes and every variant's runs."""
    hyper = step_sizes.bind(epochs=epochs, cap=cap)
    return dict(hyper=hyper, each=[variant_runs.bind(variant=v.name, hyper=hyper, full_data=full_data, epochs=epochs,
                                                     cap=cap) for v in VARIANTS])


@fixture(uses=_parts(per_budget(None, None, "mnist"), EPOCHS, CAP))
def vision_runs(ctx, each, hyper, full_data=per_budget(None, None, "mnist"), epochs: int = EPOCHS,
                cap: float = CAP) -> tuple[dict[str, V.VisionRun], dict]:
    """(name -> VisionRun for every variant of VARIANTS, the set-up as a dict) at the run's seed, budget and device.

    ``full_data``: the paper's data set ('mnist' / 'cifar10') to train on when ``$VERIFY_DATA_DIR`` holds it; None
    (the quick and standard budgets) trains on the digits, so B.Fig5-6 and B.Fig7 share one set of digits runs there.
    ``epochs``: the horizon on the digits; ``cap``: the cap SNGD and SPS share.  The controls' mutants train at every
    setting, so a control can run wherever its check does.

    Gathers ``each``, one :func:`variant_runs` task per variant, bound at the same setting (:func:`vision_at`).  A
    free choice's map binds the setting on this request alone (overrides of two choices merge parameter by parameter,
    which lists of requests do not), so a part trained at another setting is never read: the variants it lacks train
    here, in one task."""
    at, *tuned = hyper
    if at != (int(epochs), cap_key(cap)):
        tuned = tuned_steps(epochs, cap, ctx.device)
    data, seeds, setup = _setting(ctx, full_data, epochs, cap, *tuned)
    runs = {run.name: run for run, part in each if part == setup}
    missing = [v for v in VARIANTS if v.name not in runs]
    if missing:
        runs |= _train(ctx, data, seeds, setup, missing)
    return {v.name: runs[v.name] for v in VARIANTS}, setup


def vision_at(request, **setting) -> Request:
    """``request`` (of :func:`vision_runs`) at another ``setting`` (``full_data``, ``epochs``, ``cap``), bound alike on
    the gatherer, on every variant's runs and on their step sizes."""
    unknown = sorted(set(setting) - {"full_data", "epochs", "cap"})
    if unknown:
        raise ValueError(f"vision_at: no setting {', '.join(unknown)} (full_data, epochs, cap)")
    request = as_request(request)
    now = {k: v for k, v in request.plain_params().items() if k in ("full_data", "epochs", "cap")} | setting
    return request.bind(**setting, **_parts(**now))  # the setting alone on the gatherer: a map's binding merges


#: B.Fig7's runs: on CIFAR-10 at the full budget when $VERIFY_DATA_DIR holds it, else the digits runs of B.Fig5-6
CIFAR10_RUNS = vision_at(vision_runs, full_data=per_budget(None, None, "cifar10"))


def cap_choice(request, checks) -> FreeChoice:
    """The cap SNGD and SPS share, a free choice of the checks ``checks`` that read ``request`` (their ``vision``)."""
    return FreeChoice(
        "cap", CAP, "the source text lost its value (one 'for SPS and SNGD'); 0.1 binds at >= 90 % of SNGD's and SPS's "
        "steps on the tuning seeds (both then SGD at step 0.1), 1e4 at < 1 % over 40 epochs (plain normalized steps)",
        {c: (lambda v: {"vision": request.bind(cap=float(v))}) for c in checks},
        low=CAP_RANGE[0], high=CAP_RANGE[1], scale="log")


def epochs_choice(request, checks, span=EPOCHS_RANGE, paper: str = "40 epochs on MNIST") -> FreeChoice:
    """The horizon in epochs of the digits, a free choice of the checks ``checks`` that read ``request`` (the controls'
    mutants train at every horizon)."""
    return FreeChoice(
        "epochs", EPOCHS, f"the paper trains {paper}; from {span[0]} epochs (the loss still falling steeply) to "
        f"those {span[1]}, on the digits analog",
        {c: (lambda v: {"vision": request.bind(epochs=int(v))}) for c in checks},
        low=span[0], high=span[1], scale="log", integer=True)


if __name__ == "__main__":  # the frozen TUNED: the grid at the settings the quick and standard designs visit
    import pprint
    import sys

    import numpy as np

    caps = sorted({CAP, *np.geomspace(*CAP_RANGE, 2), *np.geomspace(*CAP_RANGE, 3)})
    horizons = sorted({EPOCHS, *(int(round(e)) for span in (EPOCHS_RANGE, CIFAR10_EPOCHS_RANGE)
                                 for k in (2, 3) for e in np.geomspace(*span, k))})
    got = tune(horizons, caps, sys.argv[1] if len(sys.argv) > 1 else "cpu")
    pprint.pprint(got, width=118)
