r"""Set-up of paper B's language figures (B.Fig1, B.Fig4, B.Fig10): the runs they share (:func:`language_runs`, a
fixture per task, horizon, cap and batch), the token vectors B.Fig10 reads (:func:`token_vectors`), the free choices
the paper leaves open, and how "trains faster" is read.

**At the paper's scale** (the ``full`` budget with ``$VERIFY_DATA_DIR`` holding ``bert-base-uncased/``, ``mnli/`` and
``civil_comments/``, ``numerics.paper_b.language.LAYOUT``): ``BertForSequenceClassification`` fine-tuned with each
optimizer for ``PAPER_STEPS`` minibatches (the paper: 10 epochs, 32 GPU-hours a run), ``PAPER_RUNS`` paired runs;
step sizes from the grid on tuning seeds over ``PAPER_TUNE_STEPS``.  Without those folders the same checks read the
analog, and each check says "paper's scale: not run" with the reason (not a failure).

**The analog**: ``numerics.paper_b.language``'s generated tasks (``nli`` for MNLI: 3 balanced classes, sentence
pairs; ``toxic`` for CivilComments: 1 in 9 toxic), ``N_TRAIN`` training and ``N_TEST`` held-out examples, a one-block
softmax-attention classifier (:data:`CONFIG`) trained from scratch, float32.  The optimizers as the paper defines
them (SGD, SNGD and SPS with a shared cap, Adam); each one's step size chosen on tuning seeds that never decide
(:func:`tune`; the grid's choices at the claims' own values frozen in :data:`TUNED`).  ``RUNS`` paired runs: every
optimizer starts from the same initializations and sees the same minibatches; the controls' mutants train in the
same batch.
"""
from __future__ import annotations

import hashlib
import math

import numpy as np
import torch

from numerics import optim
from numerics.optim import Variant
from numerics.paper_b import language as Lg
from theorems.claim import Check, Control, FreeChoice
from theorems.fixture import fixture, per_budget

#: the analog's model: width 16, 2 heads, MLP 32, one block (~3k parameters): on tuning seeds it learns both tasks
#: within 3 epochs at the grid's step sizes, and 40 such models train in a few seconds on one core
CONFIG = dict(dim=16, heads=2, mlp=32, depth=1)
#: generated examples: 2,048 to train on (64 minibatches of 32 per epoch), 1,024 held out
N_TRAIN, N_TEST = 2048, 1024
#: minibatch size, the paper's lost: 32, the customary size for fine-tuning BERT (Devlin et al. 2019)
BATCH = 32
#: the batch's plausible range: 16 to 64, Devlin et al.'s fine-tuning range (16, 32) and twice the upper end
BATCH_RANGE = (16, 64)
#: independent paired runs per optimizer at the quick / standard / full budget
RUNS = (8, 32, 32)
#: the claims' own horizon in epochs of the analog (192 steps): the paper fine-tunes 10 epochs; 3 keeps the quick
#: tier within its time and the runs in the phase where the loss still falls
EPOCHS = 3
#: the horizon's plausible range: from 2 epochs to the paper's 10
EPOCHS_RANGE = (2, 10)
#: the cap SNGD and SPS share (App. C: one parameter "for SPS and SNGD", its value lost): 1, as on the vision analog
CAP = 1.0
#: the cap's plausible range: from 0.1 (binds at most steps) to 1e4 (binds at almost none), as on the vision analog
CAP_RANGE = (0.1, 1e4)
#: the trailing window of the smoothed minibatch loss: a tenth of the run
SMOOTH = 0.1
#: the smallest minibatch loss float32 resolves (2^-23 per example, averaged over a batch): losses are floored there
#: before a log
LOSS_FLOOR = 2**-23 / BATCH
#: the tuning family: 3 runs per grid point, seeds hashed from their own label (never a deciding run's seed)
TUNING_SEEDS = tuple(int.from_bytes(hashlib.sha256(repr(("B.Fig1-4 tuning", i)).encode()).digest()[:8], "little")
                     & (2**63 - 1) for i in range(3))
#: the seeds the generated data sets are drawn from (fixed: the data are part of the task, not of a run)
TASK_SEEDS = {"nli": 1101, "toxic": 1104}
#: step-size grids, half a decade apart
GRID = {"SGD": (0.03, 0.1, 0.3, 1.0), "SNGD": (0.03, 0.1, 0.3, 1.0), "Adam": (1e-3, 3e-3, 1e-2, 3e-2)}
#: the grid's choices (tune) at the claims' own settings, (task, epochs, cap, batch) -> step sizes, frozen so a run
#: does not repeat the grid; any other setting is tuned in the run (reproduced by python -m
#: theorems.paper_b.language.setups)
TUNED = {("nli", 3, "1", 32): {"SGD": 0.3, "SNGD": 1.0, "Adam": 0.01},
         ("toxic", 3, "1", 32): {"SGD": 0.3, "SNGD": 0.3, "Adam": 0.03}}
#: the paper's scale: minibatches per run (about 0.16 epochs of MNLI at batch 32; raise it on a GPU for the paper's
#: 10 epochs), paired runs, the grid's horizon, the longest input in tokens
PAPER_STEPS, PAPER_RUNS, PAPER_TUNE_STEPS, PAPER_MAX_LEN = 2000, 3, 300, 128
#: the paper's-scale grids: BERT fine-tuning's Adam range (2e-5 .. 5e-5, Devlin et al.) and half-decade grids
PAPER_GRID = {"SGD": (1e-3, 3e-3, 1e-2, 3e-2), "SNGD": (1e-2, 3e-2, 1e-1, 3e-1), "Adam": (1e-5, 3e-5, 1e-4)}


#: the four optimizers of Figures 1 and 4 as App. C defines them, at the setting's step sizes and cap
SGD = Variant("SGD", lambda h: Lg.sgd(h["SGD"]))
#: SNGD: -min(eta/||g||, cap) g, the whole model's gradient norm
SNGD = Variant("SNGD", lambda h: Lg.sngd(h["SNGD"], h["cap"]))
#: SPS: -min(L/||g||^2, cap) g (L* = 0)
SPS = Variant("SPS", lambda h: Lg.sps(h["cap"]))
#: Adam with its default betas and eps
ADAM = Variant("Adam", lambda h: Lg.adam(h["Adam"]))
#: the control of "SPS trains faster": the Polyak step with the square dropped, min(L/||g||, cap) for min(L/||g||^2,
#: cap) (a slip in the step's formula)
SPS_UNSQUARED = Variant("SPS with ||g|| for ||g||^2", lambda h: optim.scale_by_polyak_unsquared(h["cap"]))
#: the control of "SNGD trains faster": SNGD with its normalization dropped, -min(eta, cap) g (SGD at SNGD's step)
SNGD_UNNORMALIZED = Variant("SNGD without normalization", lambda h: Lg.sngd_unnormalized(h["SNGD"], h["cap"]))
OPTIMIZERS = ("SGD", "SNGD", "SPS", "Adam")
VARIANTS = (SGD, SNGD, SPS, ADAM, SPS_UNSQUARED, SNGD_UNNORMALIZED)


def cap_key(cap: float) -> str:
    return f"{float(cap):.6g}"


def analog_task(kind: str) -> Lg.TextTask:
    return Lg.make_task(kind, N_TRAIN, N_TEST, TASK_SEEDS[kind])


def mean_log_loss(run: Lg.TextRun) -> torch.Tensor:
    """The log of the smoothed minibatch loss averaged over the run's steps (floored at LOSS_FLOOR), (R,)."""
    x = run.batch_loss
    return Lg.trailing_mean(x, max(1, int(SMOOTH * len(x)))).clamp_min(LOSS_FLOOR).log().mean(0)


def tune(trainer, grid: dict, caps, steps: int) -> dict:
    """The grid's choice of SGD's, SNGD's (per cap) and Adam's step size: the lowest run-averaged log train loss
    over ``steps`` on TUNING_SEEDS.  ``trainer(transforms, seeds, steps) -> {name: TextRun}``."""
    tf = {f"SGD {lr:g}": Lg.sgd(lr) for lr in grid["SGD"]} | {f"Adam {lr:g}": Lg.adam(lr) for lr in grid["Adam"]}
    tf |= {f"SNGD {lr:g} cap {cap_key(c)}": Lg.sngd(lr, c) for c in caps for lr in grid["SNGD"]}
    runs = trainer(tf, list(TUNING_SEEDS), steps)
    crit = {}
    for name, run in runs.items():
        v = float(mean_log_loss(run).mean())
        crit[name] = v if math.isfinite(v) else math.inf  # a diverged run is never chosen
    out = {}
    for c in caps:
        best = {k: min(grid[k], key=lambda lr: crit[f"{k} {lr:g}"]) for k in ("SGD", "Adam")}
        best["SNGD"] = min(grid["SNGD"], key=lambda lr: crit[f"SNGD {lr:g} cap {cap_key(c)}"])
        out[cap_key(c)] = best
    return out


def _analog_trainer(task: Lg.TextTask, batch: int):
    cfg = Lg.config_for(task, **CONFIG)
    return lambda tf, seeds, steps: Lg.train(task, cfg, tf, seeds, steps, batch)


def tuned_steps(kind: str, epochs: int, cap: float, batch: int) -> tuple[dict, str]:
    """The analog's step sizes at a setting and the cap, and where they come from."""
    key = (kind, int(epochs), cap_key(cap), int(batch))
    if key in TUNED:
        return dict(TUNED[key], cap=float(cap)), "TUNED (the grid on the tuning seeds, frozen)"
    task = analog_task(kind)
    steps = int(epochs) * (N_TRAIN // int(batch))
    got = tune(_analog_trainer(task, int(batch)), GRID, (cap,), steps)[cap_key(cap)]
    return dict(got, cap=float(cap)), "the grid on the tuning seeds, in this run"


#: the paper's data set each analog task stands for
PAPER_DATA = {"nli": "mnli", "toxic": "civil_comments"}


def paper_scale(paper: bool) -> tuple[dict | None, str]:
    """The paper's files when ``paper`` (the full budget) and $VERIFY_DATA_DIR holds them, else None, with why not."""
    if not paper:
        return None, "paper's scale: not run (runs only at the full budget, with $VERIFY_DATA_DIR; the analog ran)"
    dirs = Lg.find_language_data()
    if dirs is None:
        return None, ("paper's scale: not run ($VERIFY_DATA_DIR holds no bert-base-uncased/, mnli/, "
                      "civil_comments/; docs/running.md; the analog ran)")
    return dirs, "paper's scale: bert-base-uncased from $VERIFY_DATA_DIR"


def _paper_runs(ctx, kind: str, dirs: dict, cap: float, batch: int) -> tuple[dict, dict]:
    read = Lg.read_mnli if kind == "nli" else Lg.read_civil_comments
    data = read(dirs[PAPER_DATA[kind]])

    def trainer(tf, seeds, steps):
        return Lg.train_bert(dirs["bert"], data, tf, seeds, steps, int(batch), PAPER_MAX_LEN, ctx.device)

    hyper = dict(tune(trainer, PAPER_GRID, (cap,), PAPER_TUNE_STEPS)[cap_key(cap)], cap=float(cap))
    seeds = [ctx.derived_seed("B.Fig1-4 language runs", kind, i) for i in range(PAPER_RUNS)]
    runs = trainer({v.name: v.make(hyper) for v in VARIANTS}, seeds, PAPER_STEPS)
    n = len(data.train[2])
    prior = np.bincount(data.train[2], minlength=data.classes) / n
    setup = dict(data=PAPER_DATA[kind], task=kind, model="bert-base-uncased", runs=PAPER_RUNS, steps=PAPER_STEPS,
                 steps_per_epoch=n // int(batch), epochs=PAPER_STEPS / (n // int(batch)), batch=int(batch),
                 cap=float(cap), hyper=hyper, tuned_by="the grid on the tuning seeds, in this run",
                 prior_loss=float(-(prior[prior > 0] * np.log(prior[prior > 0])).sum()), dtype="float32",
                 device=ctx.device)
    return runs, setup


@fixture
def language_runs(ctx, task: str = "nli", paper=per_budget(False, False, True), epochs: int = EPOCHS,
                  cap: float = CAP, batch: int = BATCH) -> tuple[dict[str, Lg.TextRun], dict]:
    """(name -> TextRun for every variant of VARIANTS, the set-up) for ``task`` ('nli': B.Fig1, 'toxic': B.Fig4):
    BERT on the paper's data at the full budget when $VERIFY_DATA_DIR holds it, else the analog."""
    dirs, scale = paper_scale(paper)
    if dirs is not None:
        runs, setup = _paper_runs(ctx, task, dirs, cap, batch)
        return runs, dict(setup, paper_scale=scale)
    data = analog_task(task)
    per_epoch = N_TRAIN // int(batch)
    steps = int(epochs) * per_epoch
    hyper, tuned_by = tuned_steps(task, epochs, cap, batch)
    n = ctx.pick(*RUNS)
    seeds = [ctx.derived_seed("B.Fig1-4 language runs", task, i) for i in range(n)]
    tf = {v.name: v.make(hyper) for v in VARIANTS}
    same = hyper["SNGD"] <= hyper["cap"] and hyper["SNGD"] == hyper["SGD"]
    if same:  # SNGD without normalization is then SGD itself: its runs are SGD's, not trained twice
        del tf[SNGD_UNNORMALIZED.name]
    runs = Lg.train(data, Lg.config_for(data, **CONFIG), tf, seeds, steps, int(batch))
    if same:
        runs[SNGD_UNNORMALIZED.name] = runs[SGD.name]
    setup = dict(data=f"generated '{task}' task (analog of {PAPER_DATA[task]})", task=task, model="analog",
                 config=CONFIG, runs=n, steps=steps, steps_per_epoch=per_epoch, epochs=float(epochs),
                 batch=int(batch), cap=float(cap), hyper=hyper, tuned_by=tuned_by, prior_loss=data.prior_loss,
                 dtype="float32", device="cpu", paper_scale=scale)
    return runs, setup


#: B.Fig4's runs: the toxic task (CivilComments at the paper's scale)
TOXIC_RUNS = language_runs.bind(task="toxic")


def cap_choice(request, checks) -> FreeChoice:
    return FreeChoice(
        "cap", CAP, "the seed lost its value (one 'for SPS and SNGD'); 0.1 binds at most steps, 1e4 at almost none",
        {c: (lambda v: {"runs": request.bind(cap=float(v))}) for c in checks},
        low=CAP_RANGE[0], high=CAP_RANGE[1], scale="log")


def epochs_choice(request, checks) -> FreeChoice:
    return FreeChoice(
        "epochs", EPOCHS, f"the paper fine-tunes 10 epochs; from {EPOCHS_RANGE[0]} epochs of the analog to those 10",
        {c: (lambda v: {"runs": request.bind(epochs=int(v))}) for c in checks},
        low=EPOCHS_RANGE[0], high=EPOCHS_RANGE[1], scale="log", integer=True)


def batch_choice(request, checks) -> FreeChoice:
    return FreeChoice(
        "batch", BATCH, "the seed lost the batch size; 16 to 64 around BERT fine-tuning's customary 32",
        {c: (lambda v: {"runs": request.bind(batch=int(v))}) for c in checks},
        low=BATCH_RANGE[0], high=BATCH_RANGE[1], scale="log", integer=True)


# ---------------------------------------------------------------------------
# How "trains faster" is read
# ---------------------------------------------------------------------------

#: "significantly faster" means a train loss at least 22 % lower on average over the run, or 22 % fewer steps to a
#: loss level (0.2 in log), the size B.Fig5's "slower" reads: a smaller gap is hard to see on log-scale loss curves
FASTER = 0.2
#: the effect's plausible range: any gap (0) to 0.3 in log, as for "slower" on the vision analog
FASTER_RANGE = (0.0, 0.3)
#: the readings of "trains faster": the whole run, the early phase (steps to half the label prior's loss), the end
FASTER_METRICS = ("run-averaged log loss", "steps to half the prior loss", "log loss over the last tenth")
#: "faster" is strict: a gap of exactly 0 is a tie
STRICT = 1e-12


def hitting_log_steps(run: Lg.TextRun, level: float) -> torch.Tensor:
    """log of the first step at which the smoothed train loss is <= ``level`` (T + 1 when never), (R,)."""
    L = Lg.trailing_mean(run.batch_loss, max(1, int(SMOOTH * len(run.batch_loss))))
    hit = L <= level
    first = torch.where(hit.any(0), hit.double().argmax(0).double() + 1, torch.full_like(L[0], len(L) + 1.0))
    return first.log()


def faster_values(runs: dict, who: str, base: str, setup: dict, metric: str, faster: float):
    """One paired value per run of the reading ``metric`` (``who`` minus ``base``, in log) and the bound its mean
    must lie below (-``faster``, strictly below 0 when ``faster`` is 0), with the decision's name."""
    a, b = runs[who], runs[base]
    bound = -max(float(faster), STRICT)
    if metric == "run-averaged log loss":
        d = mean_log_loss(a) - mean_log_loss(b)
        name = f"mean over the run of log L[{who}] − log L[{base}] (mean over runs)"
    elif metric == "steps to half the prior loss":
        lvl = 0.5 * setup["prior_loss"]
        d = hitting_log_steps(a, lvl) - hitting_log_steps(b, lvl)
        name = f"log(steps to L ≤ {lvl:.3g}: {who} / {base}) (mean over runs)"
    elif metric == "log loss over the last tenth":
        k = max(1, len(a.batch_loss) // 10)
        la, lb = (r.batch_loss[-k:].double().mean(0).clamp_min(LOSS_FLOOR).log() for r in (a, b))
        d = la - lb
        name = f"log(train loss over the last tenth: {who} / {base}) (mean over runs)"
    else:
        raise ValueError(f"unknown reading of 'trains faster': {metric!r} (one of {FASTER_METRICS})")
    return d.numpy(), bound, name


def faster_choice(checks) -> FreeChoice:
    return FreeChoice(
        "faster by", FASTER, "'significantly faster' fixes no size: any gap (0) to 0.3 in log, about the declared "
        "0.2 (22 %)", {c: (lambda v: {"faster": float(v)}) for c in checks}, low=FASTER_RANGE[0],
        high=FASTER_RANGE[1], analysis=True)


def metric_choice(checks, value: str) -> FreeChoice:
    return FreeChoice(
        "faster metric", value, "'trains faster' names no metric: the loss over the whole run, the steps to a loss "
        "level, or the loss at the end", {c: (lambda v: {"metric": v}) for c in checks}, levels=FASTER_METRICS,
        analysis=True)


# ---------------------------------------------------------------------------
# B.Fig10: the token vectors whose within-sentence cosines are read
# ---------------------------------------------------------------------------


# ---------------------------------------------------------------------------
# "Trains faster", decided the same way for B.Fig1 and B.Fig4
# ---------------------------------------------------------------------------

#: "faster" is a one-sided bound: a wide interval whose upper end lies below it still says which is faster
MAX_WIDTH = math.inf
#: the metric "trains faster" is read on: the log smoothed train loss averaged over the run (the whole run)
METRIC = "run-averaged log loss"


def _report(ev, runs: dict, setup: dict) -> str:
    """The setting, the test accuracies and Adam's gap to SGD (measured, not decided); one line."""
    from numerics.stats import mean_se

    h = setup["hyper"]
    ev.say(f"{setup['paper_scale']}; data {setup['data']}; {setup['runs']} paired runs, {setup['steps']} steps "
           f"({setup['epochs']:g} epochs), batch {setup['batch']}, cap {setup['cap']:g}; step sizes SGD {h['SGD']:g}, "
           f"SNGD {h['SNGD']:g}, Adam {h['Adam']:g} ({setup['tuned_by']})")
    for name in OPTIMIZERS:
        ev.measure(f"test accuracy at T, {name} (mean over runs)", float(runs[name].final["test_accuracy"].mean()))
    m, se = mean_se((mean_log_loss(runs["Adam"]) - mean_log_loss(runs[SGD.name])).numpy())
    ev.measure("run-averaged log L[Adam] − log L[SGD] (mean over runs; not decided)", m, lo=m - ev.z * se,
               hi=m + ev.z * se, level=ev.level)
    return f"Adam − SGD {m:.3g} ± {ev.z * se:.2g} (not decided); {setup['paper_scale']}"


def faster_outcome(ctx, runs: tuple, who: Variant, faster: float, metric: str, figure: str):
    """The paired gap ``who`` minus SGD on ``metric`` (:func:`faster_values`) decided below -``faster``, with the
    setting, Adam's gap (measured) and the train-loss figure titled ``figure``."""
    from numerics.stats import decide_upper, mean_se
    from theorems.evidence import Evidence

    r, setup = runs
    ev = Evidence(ctx)
    d, bound, name = faster_values(r, who.name, SGD.name, setup, metric, faster)
    m, se = mean_se(np.asarray(d))
    dec = decide_upper(m - ev.z * se, m + ev.z * se, bound, max_width=MAX_WIDTH)
    ev.decide(name, dec, value=m)
    extra = _report(ev, r, setup)
    if ev.plots:
        ev.figure(figure, loss_figure(r, setup), "Median over runs, 10–90 % band.")
    return ev.outcome(headline=f"{name}: {m:.3g} {dec}; {extra}", constants=setup, optimizer=who.name)


def check_sngd_faster(ctx, runs: tuple, figure: str, sngd: Variant = SNGD, faster: float = FASTER,
                      metric: str = METRIC):
    """Paired gap SNGD minus SGD (``metric``) below -``faster``; ``sngd``: the variant whose runs play SNGD (a
    control passes the mutant); ``figure``: the claim's title for the train-loss figure."""
    return faster_outcome(ctx, runs, sngd, faster, metric, figure)


def check_sps_faster(ctx, runs: tuple, figure: str, sps: Variant = SPS, faster: float = FASTER,
                     metric: str = METRIC):
    """Paired gap SPS minus SGD (``metric``) below -``faster``; ``sps``: the variant whose runs play SPS."""
    return faster_outcome(ctx, runs, sps, faster, metric, figure)


def faster_parts(runs, figure: str) -> dict:
    """What B.Fig1 and B.Fig4 share, declared once: the two "trains faster" checks on ``runs`` (their figure titled
    ``figure``), the controls that put a slipped optimizer in each one's place, and the free choices that set both.

    Returned as the :class:`~theorems.claim.Claim` fields ``checks``, ``controls`` and ``free_choices``."""
    checks = ("sngd-faster", "sps-faster")
    return dict(
        checks=(
            Check("sngd-faster", "numeric", "Paired run-averaged log-loss gap, SNGD minus SGD, ≤ −0.2",
                  check_sngd_faster, params={"figure": figure}, uses={"runs": runs}),
            Check("sps-faster", "numeric", "Paired run-averaged log-loss gap, SPS minus SGD, ≤ −0.2",
                  check_sps_faster, params={"figure": figure}, uses={"runs": runs}),
        ),
        controls=(
            Control("SNGD without normalization", "sngd-faster",
                    "−min(η, cap) g, the division by ‖g‖ dropped (SGD at SNGD's step): must not count as faster",
                    {"sngd": SNGD_UNNORMALIZED}),
            Control("SPS with ‖g‖ for ‖g‖²", "sps-faster",
                    "the Polyak step's square dropped, min(L/‖g‖, cap) g: must not count as faster",
                    {"sps": SPS_UNSQUARED}),
        ),
        free_choices=(cap_choice(runs, checks), epochs_choice(runs, checks), batch_choice(runs, checks),
                      faster_choice(checks), metric_choice(checks, METRIC)),
    )


def loss_figure(runs: dict, setup: dict):
    """Each optimizer's smoothed minibatch train loss: the median over runs and its 10-90 % band."""
    from theorems.plots import new_figure

    fig, ax = new_figure()
    for name in OPTIMIZERS:
        L = Lg.trailing_mean(runs[name].batch_loss, max(1, len(runs[name].batch_loss) // 10)).numpy()
        lo, mid, hi = np.quantile(L, [0.1, 0.5, 0.9], axis=1)
        t = np.arange(1, len(L) + 1)
        ax.plot(t, mid, lw=1.2, label=name)
        ax.fill_between(t, lo, hi, alpha=0.2, lw=0)
    ax.set_yscale("log")
    ax.set_xlabel("step t")
    ax.set_ylabel("train loss (minibatch, smoothed)")
    ax.set_title(setup["data"])
    ax.legend(fontsize=7)
    return fig


#: the analog's sentences B.Fig10 reads per run: held-out examples of the nli task
FIG10_SENTENCES = 512
#: the paper's numbers of texts: 100k MNLI sentences, 50k CivilComments comments (App. C)
PAPER_SENTENCES = {"mnli": 100_000, "civil_comments": 50_000}
#: the paper's scale: sentences passed through BERT for the contextual control (a forward pass each)
PAPER_CONTEXT_SENTENCES = 2000


@fixture(uses={"lang": language_runs})
def token_vectors(ctx, lang: tuple, paper=per_budget(False, False, True)) -> dict:
    """What B.Fig10 reads: per unit (a run of the analog; a data set at the paper's scale), the sentences' token ids,
    which positions are words, the embedding table, the table at initialization and the last block's states.

    The analog's tables are the Adam runs' of B.Fig1's task (the pretrained model's optimizer; BERT was pretrained
    with Adam).  At the paper's scale: bert-base-uncased's word-embedding table and sentences of MNLI and
    CivilComments."""
    dirs, scale = paper_scale(paper)
    if dirs is not None:
        return _paper_vectors(ctx, dirs, scale)
    runs, setup = lang
    task = analog_task(setup["task"])
    X = task.X_test[:FIG10_SENTENCES]
    keep = ~torch.isin(X, torch.as_tensor(task.specials))
    run = runs[ADAM.name]
    cfg = Lg.config_for(task, **CONFIG)
    with torch.no_grad():
        states = Lg.hidden(run.params, cfg, X.expand(run.params[0].shape[0], -1, -1))
    units = []
    for r in range(run.params[0].shape[0]):
        units.append(dict(name=f"run {r + 1}", ids=X, keep=keep, table=run.params[0][r], init=run.init[0][r],
                          states=states[r]))
    return dict(kind="runs", units=units, scale=scale, setup=setup)


def _paper_vectors(ctx, dirs: dict, scale: str) -> dict:
    model, tok = Lg.load_bert(dirs["bert"], num_labels=2, device=ctx.device)
    table = model.bert.embeddings.word_embeddings.weight.detach().cpu()
    units = []
    for name, read in (("mnli", Lg.read_mnli), ("civil_comments", Lg.read_civil_comments)):
        data = read(dirs[name], limit=PAPER_SENTENCES[name])
        ids, keep = Lg.bert_sentences(tok, data, PAPER_SENTENCES[name], PAPER_MAX_LEN)
        few = ids[:PAPER_CONTEXT_SENTENCES]
        with torch.no_grad():
            states = model.bert(input_ids=few.to(ctx.device),
                                attention_mask=(few != tok.pad_token_id).long().to(ctx.device)).last_hidden_state
        units.append(dict(name=name, ids=ids, keep=keep, table=table, init=None, states=states.cpu(),
                          states_ids=few))
    return dict(kind="sentences", units=units, scale=scale, setup=dict(model="bert-base-uncased"))


if __name__ == "__main__":  # the frozen TUNED: the grid at the claims' own settings
    import pprint

    pprint.pprint({(k, EPOCHS, cap_key(CAP), BATCH): tune(_analog_trainer(analog_task(k), BATCH), GRID, (CAP,),
                                                          EPOCHS * (N_TRAIN // BATCH))[cap_key(CAP)]
                   for k in ("nli", "toxic")}, width=118)
