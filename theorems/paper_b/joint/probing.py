r"""The probe engine of the joint-training claims (B.L10-B.L13, B.T2-B.T4): one family of instances over the data
model's parameters and the training's, Condition 1 classified on each instance, and one run of (10) (or of a mutant)
per instance, continued into its own asymptotic phase.  Defines no claim; each claim instantiates it with its
conclusion (``theorems.probe``: strategy, conclusion, assumptions, parameters, describe).

* **Instances** (:func:`instances`): a coin between two strata (:class:`Stratum`).  The sizes n, T, d, the opt-token
  ratio rho, the step as ``eta R^2`` (R the largest token norm of the draw) and the initialization scale are
  hypothesis primitives and shrink; the tokens of a DM draw (``n T d`` Gaussian entries, up to a few hundred) come from
  ``data.dm`` with a drawn seed: the claims are about DM's Gaussian tokens, not about a shrunk matrix.  An *aimed*
  stratum draws inside Condition 1 (its draws conditioned on Lemma 9's event, as the claims' main set-up is); a
  *wide* one crosses every part of it (rho <= 1, nu > nu_0, a nonzero init, T = 3, eta R^2 > 1).  A claim may draw
  more (``extra``: B.T2 draws the schedule's exponents).  B.L11's probe is the same engine at its own strata.
* **Condition 1** on an instance (:func:`condition1`): the parts of ``assumptions.condition1_assumptions``, each read
  off the instance; the four-cell accounting of ``theorems.probe`` sorts every instance by them.
* **The run** (:func:`phase_run`): the horizon is the run's own clock, not a drawn number.  A window decides a rate
  only once the attention has saturated, and when it does depends on rho, eta R^2, d and the schedule by a factor of
  ten and more (a fixed horizon would place most windows in the transient, where no rate is decided).  So each
  instance is run until every sample's attention has decided (the phase: every ``|logit gap| >= PHASE_GAP``, on its
  opt token or against it; a mutant that drives attention away from the opt token reaches it too), searched over
  the first ``PHASE_SEARCH`` steps, and then for ``PHASE_SPAN`` times that long: the claims' own window ``[N/5, N]``
  (``rates.WINDOW``) then starts where the phase does.  An instance without a phase by the search's end is not
  decided (its reason is counted); one whose iterates stop being finite is reported as diverged, for the claim's
  conclusion to judge.  The horizon ``N`` and the phase's start are returned as facts and plotted.
* **Decisions**: a run is one DM draw, so an exponent's interval is the drift between the window's halves
  (``rates.tail_exponent`` with one run), and each conclusion applies its claim's own decision rule to it
  (:func:`holds`: pass, fail, or not decided).
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field

import hypothesis
import numpy as np
import torch
from hypothesis import strategies as st

from numerics import DTYPE, optim
from numerics.paper_b import data, svm
from numerics.paper_b import joint as J
from theorems.paper_b.joint.assumptions import nu_threshold
from theorems.paper_b.joint.rates import WINDOW
from theorems.paper_b.joint.setups import DM, EQ10_UPDATE, DMBatch, JointRun, Update, changed
from theorems.probe import probe
from theorems.strata import fair_sampled_from
from theorems.strategies import log_uniform

#: the phase: every sample's |logit gap| (opt token against its strongest other token, ``records``' logit_gap) at
#: least 5, so the attention's minority mass is below (T - 1) e^-5: the level at which ``fixed_head.phase_probe``'s
#: grown-norm rule places every logit gap
PHASE_GAP = 5.0
#: the window is the claims' own [N/5, N] (``rates.WINDOW``) with N = PHASE_SPAN times the phase's start
PHASE_SPAN = round(1 / WINDOW)
#: steps searched for the phase (the run is then at most PHASE_SPAN times as long): at eta R^2 = 1 the main
#: set-up's attention saturates by t ~ 100-150 (rates.WINDOW's reason: the transient ends near t ~ 100 at eta = 0.05),
#: so 400 leaves room for slower instances while a run stays below ~2000 steps (~1.5 s)
PHASE_SEARCH = 400
#: the shortest decided run: a phase from the first steps (a large step) still leaves a window [N/5, N] of ~20 records
MIN_HORIZON = 50
#: records of the decided run (log-spaced over [0, N]), as the claims' runs (``setups.N_POINTS``)
RUN_RECORDS = 60
#: hypothesis examples at the quick / standard / full budget: an example is a run of a few hundred to ~2000 steps
#: (0.1-1 s) and a control's counterexample is shrunk over ~12 more, so the quick tier decides a few (a probe and its
#: control a few seconds each) and the standard one searches
EXAMPLES = (5, 40, 120)
#: a probe decides at least this many instances inside Condition 1, else it draws again (``theorems.probe.ROUNDS``)
#: and is inconclusive: "no counterexample" among fewer says nothing (the quick tier's handful of examples decides
#: 2-4 inside; the standard tier's 40, ~25)
MIN_DECIDED = 2


# ---------------------------------------------------------------------------
# Instances
# ---------------------------------------------------------------------------


@dataclass(frozen=True)
class Stratum:
    """The ranges one stratum draws from: ``n`` an integer range, ``T``, ``d``, ``init`` lists of options (one option:
    not drawn), ``rho`` a float range, ``eta_R2`` a log-uniform range; ``conditioned``: DM draws conditioned on Lemma
    9's event (the first draw in the seed order of ``numerics.paper_b.joint.Setup`` that lies in it)."""

    n: tuple[int, int]
    T: tuple[int, ...]
    d: tuple[int, ...]
    rho: tuple[float, float]
    eta_R2: tuple[float, float]
    init: tuple[float, ...] = (0.0,)
    conditioned: bool = False


def _option(draw, options):
    return options[0] if len(options) == 1 else draw(st.sampled_from(list(options)))


#: the strata of the rate probes.  Aimed: inside Condition 1, at eta R^2 in [0.7, 1] and rho in [2.5, 4], where the
#: phase starts within ~150 steps (a run of at most ~750): smaller steps and larger rho saturate later (t ~ 250-1500
#: at eta R^2 = 0.3), cost more than the quick tier has and are left to the sensitivity maps of the step; n <= 3 and
#: d in {64, 96} keep Lemma 9's event frequent
AIMED = Stratum(n=(2, 3), T=(2,), d=(64, 96), rho=(2.5, 4.0), eta_R2=(0.7, 1.0), conditioned=True)
#: wide: every part of Condition 1 crossed (rho down to 0.8, d down to 16 so that nu > nu_0, T = 3, eta R^2 up to 4,
#: a nonzero init), unconditioned; its step and ratio otherwise as AIMED's
WIDE = Stratum(n=(2, 4), T=(2, 3), d=(16, 32, 64), rho=(0.8, 4.0), eta_R2=(0.7, 4.0), init=(0.0, 0.0, 0.5))
#: aimed draws per wide one: the quick tier's few examples must land inside Condition 1 often enough to decide
#: MIN_DECIDED there
AIM_WEIGHT = 3


def dm_draw(n: int, T: int, d: int, rho: float, seed: int, conditioned: bool):
    """(dataset, data seed): the DM draw of the seed ``seed``, or with ``conditioned`` the first draw in the seed
    order ``seed * 100003 + k`` inside Lemma 9's event (as ``numerics.paper_b.joint.instances`` tries them)."""
    if not conditioned:
        return data.dm(n=n, T=T, d=d, opt_ratio=rho, seed=seed), seed
    nu0 = nu_threshold(n, T, rho)
    for k in range(100):
        ds = data.dm(n=n, T=T, d=d, opt_ratio=rho, seed=seed * 100003 + k)
        if float(data.assumptions(ds)["nu"]) <= nu0:
            return ds, seed * 100003 + k
    raise ValueError(f"Lemma 9's event too rare at n={n}, T={T}, d={d}, rho={rho:g}")


@st.composite
def instances(draw, aimed: Stratum = AIMED, wide: Stratum = WIDE, coin=None, extra=None):
    """An instance (a dict of plain numbers and its DM draw ``ds``): ``coin`` chooses the stratum (default: AIM_WEIGHT
    aimed draws per wide one, by a fair residue, ``theorems.strata``); ``extra(aim)``: a strategy of more numbers the
    claim draws (merged into the instance; drawn before the data seed)."""
    aim = draw(fair_sampled_from([True] * AIM_WEIGHT + [False]) if coin is None else coin)
    s = aimed if aim else wide
    n = draw(st.integers(*s.n))
    T = _option(draw, s.T)
    d = _option(draw, s.d)
    rho = draw(st.floats(*s.rho))
    eta_R2 = draw(log_uniform(*s.eta_R2))
    init = _option(draw, s.init)
    more = draw(extra(aim)) if extra is not None else {}
    seed = draw(st.integers(0, 2**31 - 1))
    try:
        ds, data_seed = dm_draw(n, T, d, rho, seed, s.conditioned)
    except ValueError:                  # Lemma 9's event not met in 100 draws (rare in the aimed ranges): redraw
        hypothesis.reject()
    R2 = float(ds.X.norm(dim=-1).max() ** 2)
    inst = {"n": n, "T": T, "d": d, "rho": rho, "eta_R2": eta_R2, "eta": eta_R2 / R2, "init": init, "seed": seed,
            "nu": float(data.assumptions(ds)["nu"]), "nu0": nu_threshold(n, T, rho), "ds": ds}
    if s.conditioned:
        inst["data_seed"] = data_seed
    return inst | more


def condition1(inst, drop_ratio: bool = False) -> dict[str, bool]:
    """Condition 1 on an instance (``assumptions.condition1_assumptions``); ``drop_ratio``: without (ii) rho > 1 and
    Lemma 9's event, which needs it (nu_0 = 0 for rho <= 1)."""
    a = {"Cond. 1 (i) zero init": inst["init"] == 0.0,
         "Cond. 1 (iv) eta R^2 <= 1": inst["eta_R2"] <= 1.0,
         "T = 2 (Ass. 2)": inst["T"] == 2}
    if not drop_ratio:
        a["Cond. 1 (ii) rho > 1"] = inst["rho"] > 1.0
        a["Cond. 1 (iii) Lemma 9 event nu <= nu_0"] = inst["nu"] <= inst["nu0"]
    return a


# the facts a conclusion returns that the plot shows along with the instance's own parameters
_PLOTTED_FACTS = ("horizon N",)


def parameters(inst, facts: dict | None = None) -> dict[str, float]:
    """The assumption parameters plotted against the conclusion (and the run's horizon, when the conclusion ran)."""
    p = {"ν − ν₀": inst["nu"] - inst["nu0"], "ρ": inst["rho"], "ηR²": inst["eta_R2"], "d": float(inst["d"])}
    return p | {k: float(facts[k]) for k in _PLOTTED_FACTS if facts and k in facts}


# the numbers that rebuild an instance: ``dm_draw(n, T, d, rho, seed, conditioned)`` (``data.dm(..., seed=data_seed)``
#: for a conditioned one), the step eta_R2 / R^2, the init's scale (directions from ``seed + 1``), a schedule's a, b
_DESCRIBED = ("n", "T", "d", "rho", "eta_R2", "init", "seed", "nu", "nu0", "data_seed", "a", "b")


def describe(inst, facts: dict | None = None) -> dict:
    """The instance as plain numbers (:data:`_DESCRIBED`), and the facts its conclusion computed."""
    return {k: inst[k] for k in _DESCRIBED if k in inst} | dict(facts or {})


# ---------------------------------------------------------------------------
# The run, into its phase
# ---------------------------------------------------------------------------


def initial(inst):
    """(W_0, u_0) of the instance: zero, or ``init`` times Gaussian directions from the seed ``seed + 1`` (scaled by
    1/d and 1/sqrt(d))."""
    d = inst["ds"].d
    g = torch.Generator().manual_seed(inst["seed"] + 1)
    W0 = inst["init"] * torch.randn(1, d, d, generator=g, dtype=DTYPE) / d
    u0 = inst["init"] * torch.randn(1, d, generator=g, dtype=DTYPE) / math.sqrt(d)
    return W0, u0


def instance_update(inst, update: Update = EQ10_UPDATE) -> Update:
    """``update`` at the instance's step (and at its schedule's a, b when the instance draws them)."""
    numbers = {"eta": inst["eta"]} | {k: inst[k] for k in ("a", "b") if k in inst}
    return changed(update, **numbers)


@dataclass
class ProbeRun:
    """An instance's run and what it reached: ``status`` "phase" (``run`` over [0, N], its window [N/5, N] in the
    phase), "no phase" (``run`` over the search), "phase lost" (a gap fell back below the level inside the window),
    "diverged" (``run`` up to the piece where an iterate stopped being finite), "SVM infeasible" (``run`` None); why,
    the phase's start, and the facts the probe records.  A rate is decided only in the phase (:meth:`rate_run`); a
    statement for every t reads any run it has."""

    run: JointRun | None
    status: str
    why: str = ""
    t_phase: int | None = None
    facts: dict = field(default_factory=dict)

    def rate_run(self) -> JointRun | None:
        """The run when its window is in the phase (None otherwise: the instance is not decided on a rate)."""
        return self.run if self.status == "phase" else None


def first_non_finite(traj) -> int | None:
    """The first recorded step with a non-finite loss, logit gap or margin (None: the run stayed finite)."""
    ok = np.logical_and.reduce([torch.isfinite(traj[k]).flatten(1).all(-1).numpy()
                                for k in ("log_loss", "logit_gap", "margin")])
    return None if ok.all() else int(traj.steps[int(np.argmin(ok))])


def in_phase(traj) -> np.ndarray:
    """Per record: every sample's |logit gap| at least PHASE_GAP (its attention has decided)."""
    return (traj["logit_gap"].abs().amin(-1) >= PHASE_GAP).all(-1).numpy()


def phase_start(traj) -> int | None:
    """The first recorded step from which on every record is :func:`in_phase` (None: not at the last record)."""
    ok = in_phase(traj)
    if not ok[-1]:
        return None
    k = len(ok) - int(np.argmin(ok[::-1])) if not ok.all() else 0
    return max(int(traj.steps[k]), 1)


def instance_batch(inst, solve: tuple[str, ...] = ("W", "u")) -> DMBatch:
    """The instance's draw as a batch of one, with the max-margin solutions ``solve`` names ("W": the W-SVM, "u": the
    u-SVM; the others None); ``svm.SVMInfeasible`` when one has none."""
    ds = data.stack([inst["ds"]])
    one = inst["ds"]
    ws = [svm.w_svm(one)] if "W" in solve else None
    us = [svm.u_svm(one)] if "u" in solve else None
    W_mm = None if ws is None else torch.stack([w.solution for w in ws])
    u_mm = None if us is None else torch.stack([u.solution for u in us])
    dm = DM(inst["n"], inst["T"], inst["d"], inst["rho"], None)
    setup = J.Setup(n=inst["n"], T=inst["T"], d=inst["d"], opt_ratio=inst["rho"], B=1, seed=inst["seed"])
    return DMBatch(dm, setup, ds, 1, W_mm, u_mm, ws, us)


#: the records of every probe run: a log grid over [1, PHASE_SPAN PHASE_SEARCH] as dense as the main runs' (RUN_RECORDS
#: over [1, 1500]), and step 0
GRID = np.unique(np.concatenate([[0], np.round(np.logspace(
    0, math.log10(PHASE_SPAN * PHASE_SEARCH), int(round(RUN_RECORDS * math.log(PHASE_SPAN * PHASE_SEARCH)
                                                        / math.log(1500))))).astype(int)]))
# the phase search runs in pieces ending at these steps (doubling up to PHASE_SEARCH), each continuing the last, so
# that an instance whose attention saturates early is not run to the end of the search (its cost only: a piece's end
# never sets the horizon, which is PHASE_SPAN times a phase start found past the previous piece's end)
_SEARCH_ENDS = tuple(sorted({min(PHASE_SEARCH, 50 * 2**k) for k in range(int(math.log2(PHASE_SEARCH / 50)) + 2)}))


def _from_step(transform, start: int):
    """``transform`` with its step counter advanced by ``start``: the continuation of a run stopped at ``start``
    takes exactly the steps the whole run would (the update rules of (10) and its mutants keep no state)."""
    def update(g, state, params, info):
        info["step"] = info["step"] + start      # info is the step's own (lazily filled) dict: set, not copied
        return transform.update(g, state, params, info)

    return type(transform)(transform.init, update)


class _Pieces:
    """A run of ``update`` recorded on :data:`GRID`, advanced piece by piece (each piece continues the last)."""

    def __init__(self, batch: DMBatch, update: Update, W0, u0, keep_params: bool):
        self.batch, self.update, self.keep = batch, update, keep_params
        self.params, self.at = (W0, u0), 0
        self.steps: list[torch.Tensor] = []
        self.metrics: dict[str, list[torch.Tensor]] = {}

    def advance(self, end: int) -> None:
        if end <= self.at:
            return
        start = self.at
        record_at = [int(g) - start for g in GRID if (start == 0 and g == 0) or start < g < end]
        traj = J.run_joint(self.batch.ds, _from_step(self.update.transform, start), end - start, W0=self.params[0],
                           u0=self.params[1], W_mm=self.batch.W_mm, u_mm=self.batch.u_mm, record_at=record_at,
                           keep_params=self.keep)
        self.steps.append(traj.steps + start)
        for k, v in traj.metrics.items():
            self.metrics.setdefault(k, []).append(v)
        self.params, self.at = traj.final, end

    def trajectory(self, upto: int | None = None) -> optim.Trajectory:
        steps = torch.cat(self.steps)
        keep = steps <= (self.at if upto is None else upto)
        return optim.Trajectory(steps[keep], {k: torch.cat(v)[keep] for k, v in self.metrics.items()}, self.params)


def phase_run(inst, update: Update = EQ10_UPDATE, keep_params: bool = False,
              solve: tuple[str, ...] = ("W", "u")) -> ProbeRun:
    """``update`` at the instance's step from its init, searched for its phase over PHASE_SEARCH steps and run on to
    N = PHASE_SPAN times the phase's start (at least MIN_HORIZON), recording the claims' metrics (with W_mm and u_mm
    when ``solve`` names them) on :data:`GRID` (module docstring).  The run is one computation: the search's pieces
    and the rest continue one another."""
    try:
        batch = instance_batch(inst, solve)
    except svm.SVMInfeasible as e:
        return ProbeRun(None, "SVM infeasible", f"no max-margin solution: {e}")
    upd = instance_update(inst, update)
    W0, u0 = initial(inst)
    run = _Pieces(batch, upd, W0, u0, keep_params)
    t0 = None
    for end in _SEARCH_ENDS:
        run.advance(end)
        traj = run.trajectory()
        bad = first_non_finite(traj)
        if bad is not None:
            return ProbeRun(JointRun(traj, batch, upd, end), "diverged",
                            f"non-finite iterates by step {bad} (phase search)", facts={"horizon N": end})
        t0 = phase_start(traj)
        if t0 is not None:
            break
    if t0 is None:
        gap = float(traj["logit_gap"][-1].abs().amin())
        return ProbeRun(JointRun(traj, batch, upd, run.at), "no phase", f"attention not saturated by t = "
                        f"{PHASE_SEARCH} (min |logit gap| {gap:.3g} < {PHASE_GAP:g})", facts={"horizon N": run.at})
    N = max(PHASE_SPAN * t0, MIN_HORIZON, run.at)
    run.advance(N)
    traj = run.trajectory()
    facts = {"horizon N": N, "phase from t": t0}
    jrun = JointRun(traj, batch, upd, N)
    bad = first_non_finite(traj)
    if bad is not None:
        return ProbeRun(jrun, "diverged", f"non-finite iterates by step {bad}", t0, facts)
    lost = traj.steps.numpy()[(traj.steps.numpy() >= t0) & ~in_phase(traj)]
    if lost.size:
        return ProbeRun(jrun, "phase lost", f"a |logit gap| fell below {PHASE_GAP:g} again at t = {int(lost[0])}",
                        t0, facts)
    return ProbeRun(jrun, "phase", "", t0, facts)


def holds(*statuses: str) -> bool | None:
    """A conclusion from its decisions' statuses: False if one failed, None if one was not decided, else True."""
    if "fail" in statuses:
        return False
    if any(s != "pass" for s in statuses):
        return None
    return True


def z_each(alpha_each: float) -> float:
    """The two-sided normal quantile of one example's false-alarm rate (``rates.tail_exponent``'s z; with one run the
    interval is the window's drift alone, so z enters only through the claims' shared estimator)."""
    from scipy import stats

    return float(stats.norm.isf(alpha_each / 2))


#: the shared probe settings of the rate claims (``theorems.probe.probe_check`` parameters; each claim adds its
#: ``conclusion``, and B.T2 its own strategy and assumptions): EXAMPLES instances of the engine, Condition 1 on
#: each, its parameters plotted, at least MIN_DECIDED decided inside
PROBE = dict(strategy=instances(), examples=EXAMPLES, describe=describe, assumptions=condition1,
             parameters=parameters, min_decided=MIN_DECIDED)


def joint_probe(conclusion_text: str, conclusion, search: str = "hypothesis over n, T, d, ρ, ηR² and the init on both "
                "sides of Condition 1, each run into its phase", **params):
    """A joint-training claim's probe: :data:`PROBE`'s search (described by ``search``) deciding ``conclusion``
    (described by ``conclusion_text``) on each instance; ``params``: the claim's own settings over PROBE's."""
    return probe(f"{search}: {conclusion_text}", PROBE, conclusion=conclusion, **params)

