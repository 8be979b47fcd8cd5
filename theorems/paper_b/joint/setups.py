r"""Set-ups of the joint-training claims (B.L10-B.L13, B.T2-B.T4, B.Fig3): batches of DM draws under Condition 1 with
their max-margin solutions, runs of the updates (10) on them, and the update rules those runs use (the factors B.T2
reads off, and the mutants of (10) several claims' controls run).  The batches and runs are fixtures
(``theorems.fixture``): a check names the one it reads in ``uses``, a control passes another request (other draws,
another update, another horizon), and the runner computes each once per run.

* Condition 1 and the DM sizes: ``assumptions``.  A batch (:func:`dm_batch`) is ``B`` DM draws (6 / 16 / 24 by
  budget) conditioned on Lemma 9's event; the draws are tried in a fixed order of seeds, so a larger batch starts
  with a smaller one's draws.
* ``EQ10 = (a, alpha, b) = (1/3, 1, 2/3)``: our reading of (10)'s lost factors.  B.T2 derives the law ``p = 1 - b``
  (loss ``exp(-c t^p)``), the condition ``a + b >= 1`` and ``alpha = 1`` as the only exponential case; then
  **b = 2/3 is put in** so that ``p = 1 - b`` equals a third-party summary's ``1/3``, and ``a = 1/3`` is the
  smallest ``a`` with ``a + b >= 1``.  So "p = 1/3", "||W_t|| ~ t^{2/3}", "||u_t|| ~ t^{1/3}" and B.T3's
  ``t^{-2/3}`` are consequences of this choice, not measurements of the paper's rate; the claims decide what the
  schedule does not imply (B.T2: the law across a sweep of b; B.L10: the lower bounds; B.T3: alignment per unit
  of ``||W_t||``).
* The main run (:data:`MAIN_RUN`): updates (10) on the main batch for ``N`` steps (1500 / 6000 / 15000), W and u kept at
  60 log-spaced records; the extra runs (controls, Fig. 3) are a third as long (:data:`N_CTRL`).
* Free choices (:func:`joint_choices`, :func:`opt_ratio_choice`): the step eta, the DM dimension d, the horizon and
  Condition 1's opt-token ratio rho are ours where the source text is silent; the claims declare them with their ranges,
  and :func:`at_choices` gives a run at other values of them (:func:`batch_at` a batch, :func:`update_at` an update;
  keyed by the numbers, so ``verify sensitivity`` shares each run between the checks that read it).
* An update rule is a value (:class:`Update`): the function that builds its transform, its numbers, and its label in
  the records.  The mutants of (10) shared by several claims' controls are here, each beside its reason; a mutant only
  one claim runs is in that claim's module.

A run's DM draws come from one seed drawn from its context under the name ``DM_SEED_KEY``: a batch tries the data
seeds ``seed * 100003 + k`` in order (``numerics.paper_b.joint.Setup``), so a larger batch begins with a smaller one's.
"""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Callable, Mapping

import torch

from numerics import optim
from numerics.paper_b import joint as J
from numerics.paper_b.model import Dataset
from theorems.claim import FreeChoice
from theorems.fixture import Request, as_request, fixture, per_budget
from theorems.paper_b.joint.assumptions import MAIN, nu_threshold

#: step size: Cond. 1 (iv) as we instantiate it, eta R^2 <= 1 with R ~ 4.3 the largest token norm
ETA = 0.05
#: (a, alpha, b): W time power, u loss power, u time power of updates (10): alpha = 1 (B.T2: the only exponential
#: case); b = 2/3 PUT IN so that B.T2's law p = 1 - b gives a third-party summary's 1/3; a = 1/3 the smallest with
#: a + b >= 1 (B.T2's per-step loss control)
EQ10 = (1 / 3, 1.0, 2 / 3)
#: GD step (Fig. 3 and the controls; the paper's is lost): the strongest GD baseline among eta in {0.1, 0.5, 1}
#: (monotone and the fastest of the three), so that "beats GD" is not earned against a slowed-down GD
ETA_GD = 1.0
#: DM draws (runs) of the shared set-up at the quick / standard / full budget: each draw is an independent
#: instance of the claim; 6 keeps the quick tier of all nine joint-training claims near a minute on one core
DRAWS = (6, 16, 24)
#: steps of the main run at the quick / standard / full budget: the window [N/5, N] must lie past the
#: attention-saturation transient (t ~ 100 at eta = 0.05) and span a factor 5
STEPS = (1500, 6000, 15000)
#: the extra runs (controls, Fig. 3) are this many times shorter than the main run (they only need to tell a
#: mutant from the claim, not to resolve an exponent to 1e-3)
CTRL_SHORTER = 3
#: the main horizon, one value per budget (STEPS)
N_MAIN = per_budget(*STEPS)
#: the extra runs' horizon: a third of the main one (CTRL_SHORTER)
N_CTRL = per_budget(*(s // CTRL_SHORTER for s in STEPS))
#: records per run (log-spaced): enough points for the window's exponent fits and their two halves
N_POINTS = 60


# ---------------------------------------------------------------------------
# DM draws and their max-margin solutions
# ---------------------------------------------------------------------------


@dataclass(frozen=True)
class DM:
    """Data model DM at sizes (n, T, d, opt_ratio), its draws kept when ``nu <= nu_max`` (None: every draw)."""

    n: int
    T: int
    d: int
    opt_ratio: float
    nu_max: float | None

    def setup(self, B: int, seed: int) -> J.Setup:
        """``B`` draws of this model, tried in the order of the seeds ``seed * 100003 + k``."""
        return J.Setup(n=self.n, T=self.T, d=self.d, opt_ratio=self.opt_ratio, B=B, seed=seed, nu_max=self.nu_max)


#: DM under Condition 1: the main sizes, draws conditioned on Lemma 9's event (Condition 1 holds on it)
CONDITION1 = DM(**MAIN, nu_max=nu_threshold(MAIN["n"], MAIN["T"], MAIN["opt_ratio"]))
#: Condition 1 (ii), (iii) broken (controls): rho = 1, d = 16, no conditioning on Lemma 9's event
BROKEN = DM(n=MAIN["n"], T=2, d=16, opt_ratio=1.0, nu_max=None)


@dataclass
class DMBatch:
    """B DM draws (``ds``, per run), how many were tried, and each draw's W-SVM and u-SVM (``J.max_margin_solutions``).
    Shared by reference: not to be modified."""

    dm: DM
    setup: J.Setup
    ds: Dataset
    tried: int
    W_mm: torch.Tensor
    u_mm: torch.Tensor
    w_svm: list
    u_svm: list


def draw_batch(dm: DM, B: int, seed: int) -> DMBatch:
    """``B`` draws of ``dm`` from the seed ``seed``, solved."""
    setup = dm.setup(B, seed)
    ds, tried = J.instances(setup)
    W_mm, u_mm, ws, us = J.max_margin_solutions(ds)
    return DMBatch(dm, setup, ds, tried, W_mm, u_mm, ws, us)


#: the random stream of the DM draws: every batch of a run starts from the seed drawn under this name, so a larger
#: batch of a model begins with the smaller one's draws
DM_SEED_KEY = "DM draws"


def resized(dm: DM, d: int | None = None, opt_ratio: float | None = None) -> DM:
    """``dm`` at another dimension ``d`` and opt-token ratio ``opt_ratio`` (None: its own; a free choice's other
    values): a model conditioned on Lemma 9's event keeps that event, at the new ratio's level (the level does not
    depend on d); ``dm`` itself when nothing changes."""
    changes = {}
    if d is not None and d != dm.d:
        changes["d"] = d
    if opt_ratio is not None and opt_ratio != dm.opt_ratio:
        changes["opt_ratio"] = opt_ratio
        if dm.nu_max is not None:
            changes["nu_max"] = nu_threshold(dm.n, dm.T, opt_ratio)
    return dataclasses.replace(dm, **changes) if changes else dm


@fixture
def dm_batch(ctx, dm: DM = CONDITION1, B=per_budget(*DRAWS), seed: int | None = None, d: int | None = None,
             opt_ratio: float | None = None) -> DMBatch:
    """``B`` draws of ``dm`` (default: Condition 1's), tried from the run's ``DM_SEED_KEY`` seed, with their
    max-margin solutions; ``seed``: a fixed data seed instead (to replay a known draw in a test); ``d``, ``opt_ratio``:
    the model at another dimension or opt-token ratio (a free choice's other values: :func:`resized`)."""
    return draw_batch(resized(dm, d, opt_ratio), B, ctx.derived_seed(DM_SEED_KEY) % 2**31 if seed is None else seed)


#: the Condition-1-broken batch (controls of B.L11 and B.T4): as many draws as the main batch
BROKEN_BATCH = dm_batch.bind(dm=BROKEN)


# ---------------------------------------------------------------------------
# Update rules
# ---------------------------------------------------------------------------


@dataclass(frozen=True)
class Update:
    """An update rule of the joint-training runs: its transform is ``make(**params)``.

    ``make`` is a module-level function, so a run's value (which carries its update) pickles by reference; ``params``
    are the numbers the checks read off (the schedule's a and b, a Polyak cap); ``label`` names the rule in the
    records.  Frozen, so a fixture keys a run by its update's value: two updates built alike share one run."""

    label: str
    make: Callable[..., optim.Transform]
    params: tuple[tuple[str, float], ...]

    @property
    def transform(self) -> optim.Transform:
        return self.make(**dict(self.params))

    def __getitem__(self, name: str) -> float:
        return dict(self.params)[name]

    def __repr__(self) -> str:
        return f"{self.make.__name__}({', '.join(f'{k}={v:.4g}' for k, v in self.params)})"


def eq10_update(eta: float, a: float, alpha: float, b: float, label: str | None = None) -> Update:
    """Updates (10) with factors (a, alpha, b) and step eta; labelled by its numbers unless ``label`` is given."""
    label = repr(("eq10", eta, a, alpha, b)) if label is None else label
    return Update(label, J.eq10, (("eta", eta), ("a", a), ("alpha", alpha), ("b", b)))


#: updates (10) with EQ10's factors and the step ETA: the claims' reading of the paper's updates
EQ10_UPDATE = eq10_update(ETA, *EQ10, label="updates (10)")


def _u_step(d_u, info, eta, alpha, b, t1):
    """(10)'s u-step: ``-eta (t+1)^{-b} grad_u L / L^alpha``."""
    log_gn_u = info["log_grad_norms"][1]
    step_u = (log_gn_u - alpha * info["log_loss"]).exp() * (eta * t1 ** -b)
    return optim.tree_scale((d_u,), -step_u)[0]


def raw_w_step(eta: float, a: float, alpha: float, b: float) -> optim.Transform:
    """(10) with the W-step not normalized, ``W+ = W - eta (t+1)^{-a} grad_W L`` (a GD step in W); the u-step is
    (10)'s."""

    def update(g, s, p, info):
        t1 = info["step"] + 1.0
        d_W, d_u = g
        log_gn_W = info["log_grad_norms"][0]
        du = _u_step(d_u, info, eta, alpha, b, t1)
        dW = optim.tree_scale((d_W,), -(eta * t1 ** -a) * log_gn_W.exp())[0]
        return (dW, du), s

    return optim.Transform(lambda p: (), update)


def ascent_w_step(eta: float, a: float, alpha: float, b: float) -> optim.Transform:
    """(10) with the W-step's sign flipped, ``W+ = W + eta (t+1)^{-a} grad_W L / ||grad_W L||``; the u-step is
    (10)'s."""

    def update(g, s, p, info):
        t1 = info["step"] + 1.0
        d_W, d_u = g
        du = _u_step(d_u, info, eta, alpha, b, t1)
        dW = d_W * (eta * t1 ** -a)
        return (dW, du), s

    return optim.Transform(lambda p: (), update)


_EQ10_PARAMS = (("eta", ETA), ("a", EQ10[0]), ("alpha", EQ10[1]), ("b", EQ10[2]))
#: the W-step without its normalization (controls of B.L10 and B.L13): a GD step in W, so ||W_t|| stalls as
#: grad_W L -> 0 and attention never saturates
RAW_W = Update(repr(("eq10_mutant", ETA, *EQ10, "raw_W")), raw_w_step, _EQ10_PARAMS)
#: the W-step with the wrong sign (controls of B.L12, B.T3, B.T4): attention driven to the non-opt tokens
ASCENT_W = Update(repr(("eq10_mutant", ETA, *EQ10, "ascent_W")), ascent_w_step, _EQ10_PARAMS)


# ---------------------------------------------------------------------------
# Runs
# ---------------------------------------------------------------------------


@dataclass
class JointRun:
    """A run of ``update`` for ``n_steps`` steps from zero init: its trajectory (``numerics.paper_b.joint.run_joint``'s
    records, with W_mm and u_mm), the batch it ran on (None when its data are not a DM batch) and a word for its data.
    Shared by reference: not to be modified."""

    traj: optim.Trajectory
    batch: DMBatch | None
    update: Update
    n_steps: int
    data: str = "DM"


def run_on(batch: DMBatch, update: Update, n_steps: int, every_step: bool = False,
           keep_params: bool = False) -> JointRun:
    """``update`` on ``batch`` from zero init, recorded at N_POINTS log-spaced steps (every step with ``every_step``),
    with W and u at the records when ``keep_params``."""
    at = range(n_steps + 1) if every_step else None
    traj = J.run_joint(batch.ds, update.transform, n_steps, W_mm=batch.W_mm, u_mm=batch.u_mm, record_at=at,
                       n_points=N_POINTS, keep_params=keep_params)
    return JointRun(traj, batch, update, n_steps)


def changed(update: Update, **numbers: float) -> Update:
    """``update`` with some of its numbers replaced (a free choice's other values), labelled with them."""
    unknown = sorted(set(numbers) - {k for k, _ in update.params})
    if unknown:
        raise ValueError(f"update {update.label}: no number named {', '.join(unknown)}")
    label = f"{update.label} ({', '.join(f'{k} = {v:g}' for k, v in numbers.items())})"
    return Update(label, update.make, tuple((k, numbers.get(k, v)) for k, v in update.params))


@fixture(uses={"batch": dm_batch})
def joint_run(ctx, batch: DMBatch, update: Update = EQ10_UPDATE, n_steps=N_MAIN, every_step: bool = False,
              keep_params: bool = False) -> JointRun:
    """``update`` on ``batch`` (default: updates (10) on the main batch for the main horizon)."""
    return run_on(batch, update, n_steps, every_step, keep_params)


#: the main run: (10) on the main batch for the main horizon, W and u kept (B.L13 evaluates the loss between them)
MAIN_RUN = joint_run.bind(keep_params=True)
#: the W-step with the wrong sign on the main batch for the control horizon (B.L12's and B.T4's controls)
ASCENT_RUN = joint_run.bind(update=ASCENT_W, n_steps=N_CTRL)


# ---------------------------------------------------------------------------
# Free choices of the joint-training claims (``theorems.claim.FreeChoice``)
# ---------------------------------------------------------------------------

def scaled(steps, factor: float):
    """A horizon (a number or one per budget) times ``factor``, rounded to whole steps."""
    if hasattr(steps, "quick"):
        return per_budget(*(int(round(factor * s)) for s in (steps.quick, steps.standard, steps.full)))
    return int(round(factor * steps))


def batch_at(batch=dm_batch, d: int = MAIN["d"], rho: float = MAIN["opt_ratio"]) -> Request:
    """``batch`` (a :func:`dm_batch` request) at another DM dimension ``d`` and opt-token ratio ``rho``; the request
    itself at the claims' own values."""
    params = {}
    if d != MAIN["d"]:
        params["d"] = d
    if rho != MAIN["opt_ratio"]:
        params["opt_ratio"] = rho
    return as_request(batch).bind(**params) if params else batch


def update_at(update: Update = EQ10_UPDATE, eta: float = ETA) -> Update:
    """``update`` at another step ``eta`` (labelled with it); the update itself at the claims' own step."""
    return update if eta == ETA else changed(update, eta=eta)


def at_choices(run: Request, eta: float = ETA, d: int = MAIN["d"], horizon: float = 1.0,
               rho: float = MAIN["opt_ratio"]) -> Request:
    """``run`` (a :func:`joint_run` request) at other values of the joint-training claims' free choices: the step
    ``eta`` of its update, the DM dimension ``d``, the horizon as ``horizon`` times the run's and the opt-token ratio
    ``rho``; the request itself at the claims' own values, so the claims' runs are one point of every design."""
    params = {}
    if eta != ETA:
        params["update"] = changed(run.params.get("update", EQ10_UPDATE), eta=eta)
    if d != MAIN["d"] or rho != MAIN["opt_ratio"]:
        params["batch"] = batch_at(run.params.get("batch", dm_batch), d=d, rho=rho)
    if horizon != 1.0:
        params["n_steps"] = scaled(run.params.get("n_steps", N_MAIN), horizon)
    return run.bind(**params) if params else run


def _choice_sets(runs: Mapping[str, Mapping[str, Request]] | None,
                 sets: Callable[[str], Mapping[str, Callable]] | None) -> Callable[[str], Mapping[str, Callable]]:
    """``sets`` itself, or the one that sets each check's runs (``runs``: check -> {parameter: joint_run request}) by
    :func:`at_choices`."""
    if sets is not None:
        return sets

    def by_runs(key):
        return {check: (lambda v, rs=rs: {p: at_choices(r, **{key: v}) for p, r in rs.items()})
                for check, rs in runs.items()}

    return by_runs


def joint_choices(runs: Mapping[str, Mapping[str, Request]] | None = None,
                  sets: Callable[[str], Mapping[str, Callable]] | None = None) -> tuple[FreeChoice, ...]:
    """The free choices of a joint-training claim whose checks read runs of (10): ``runs`` maps each check to its
    {parameter: joint_run request}, set by :func:`at_choices`; or ``sets(key)`` gives {check: value -> overrides} for
    the choice ``key`` ("eta", "d", "horizon": :func:`at_choices`' names), for checks that read runs otherwise."""
    sets = _choice_sets(runs, sets)
    return (
        FreeChoice("step η", ETA, "Cond. 1 (iv) asks only for a small step; ours, ηR² ≤ 1 (R ≈ 4.3), puts 0.05 at its "
                   "top: 0.005-0.05 goes a decade below", sets("eta"), low=0.005, high=ETA, scale="log"),
        FreeChoice("DM dimension d", MAIN["d"], "Cond. 1 (iii) asks d ≥ poly(n, T) with its constant lost; 32-256 is "
                   "half to four times our 64, every draw conditioned on Lemma 9's event", sets("d"), low=32, high=256,
                   scale="log", integer=True),
        FreeChoice("horizon factor", 1.0, "the window [N/5, N] must start past the attention-saturation transient "
                   "(t ≈ 100 at η = 0.05); 0.5-2 halves and doubles the budget's horizon", sets("horizon"), low=0.5,
                   high=2.0, scale="log"),
    )


def opt_ratio_choice(runs: Mapping[str, Mapping[str, Request]] | None = None,
                     sets: Callable[[str], Mapping[str, Callable]] | None = None) -> FreeChoice:
    """The opt-token ratio rho of Condition 1 (ii) as a free choice (key "rho" of :func:`at_choices`), for the checks
    of ``runs`` or ``sets`` as in :func:`joint_choices`; draws are conditioned on Lemma 9's event at that ratio."""
    return FreeChoice("opt-token ratio ρ", MAIN["opt_ratio"], "Cond. 1 (ii) asks only for larger opt tokens: 2.5-8 "
                      "around our 4, Lemma 9's level ν₀ moving with it; below 2.5 its event holds for under a tenth of "
                      "the draws at d = 64 (1 % at ρ = 2)", _choice_sets(runs, sets)("rho"), low=2.5, high=8.0,
                      scale="log")
