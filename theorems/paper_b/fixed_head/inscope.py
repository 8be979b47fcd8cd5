r"""Instances inside the fixed-head claims' assumptions as we reconstruct them, and each run's scope.  Defines no claim.

Why a family of our own.  Our Ass 1 (``assumptions``: B.L3's sufficient ν/(1 − 3ν) ≤ ν*) needs ν of order
1e-3 or less at NGD's unit step, and ν* falls like e^{-2 R² Δ} with the largest step Δ: Example 1 meets it only at d of
order 10^6 (B.L6), so the Example-1 suite of ``example1_suite`` (ν ≈ 0.4) lies outside it.  This family starts
from exactly orthonormal noise tokens (``runs.orthogonal_tokens``, ν = 0, the Example-1 scores γ_opt = 1, γ_other = 0,
so Ass 2 holds exactly) and perturbs them just so far that each data set sits at the fraction ``INSCOPE_LEVEL`` of
Ass 1's level, ν/(1 − 3ν) = LEVEL · ν*, with ν* evaluated at Lemma 2's initial logit bound ε = 1/4 and at the largest
step its algorithm takes over its first ``PILOT_STEPS`` steps on the unperturbed tokens from the same start: the
family spans Ass 1 rather than sitting at its exactly orthogonal centre.  Every start has norm ε/R², so Lemma 2's
small-init bound max |a_it(W₀)| ≤ R² ‖W₀‖ = 1/4 holds in every direction; one run in ``ADVERSARIAL_EVERY`` starts along
−W̄mm (every W-SVM constraint violated), the others in a uniformly random direction, as in the Example-1 suite.

Whether a run is inside is read off its own record afterwards (:func:`suite_scope`): Ass 1 at its measured initial
logit bound and its largest recorded step, Ass 2, the small init.  A check records the count and whether its verdict
rests on in-scope evidence, every run its decision reads inside, or on "k of n runs inside" (:func:`record_scope`:
``details["scope_evidence"]``).

* :func:`inscope_suite`: B iid runs (data set, start), as an ``example1_suite.Suite``, so the rate rules of
  ``rates`` read it as they read the Example-1 suite.
* :func:`inscope_run`: GD, NGD or the Polyak step on it (:class:`FamilyRun`: a ``SuiteRun`` that knows its step).
* :func:`inscope_bank`: every-step runs of the trajectory bank's algorithms on the family, from Lemma-2 inits, as
  :class:`StepRuns` (B.L3's every-step check reads them, and its other runs in the same form).
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import torch

from numerics import DTYPE
from numerics.paper_b import algorithms as A
from numerics.paper_b import data, runs, svm
from theorems.claim import ScopeFilter
from theorems.fixture import fixture, per_budget
from theorems.paper_b.fixed_head.assumptions import EPS, ass1, ass2_holds, sigma0
from theorems.paper_b.fixed_head.bank import BANK_ALGOS, BANK_INITS, BANK_STEPS, INIT_DELTA
from theorems.paper_b.fixed_head.example1_suite import (ETA, SUITE_POINTS, SUITE_STEPS, Suite, SuiteRun, record_at,
                                                        record_steps, suite_w_mm)

#: the family's sizes: the Example-1 suite's n = 4, T = 3, so the two families differ in their token geometry only;
#: one spare dimension besides e_1 and the n T noise directions (d = n T + 2 = 14, the suite has 16)
INSCOPE_SIZES = dict(n=4, T=3, extra_dims=1)
#: where inside Ass 1 a data set sits: nu/(1 - 3 nu) = LEVEL x nu*; half-way, so the runs stay inside with a factor 2
#: to spare for a largest step a little above the pilot's (nu* changes by 2 when the step moves by ln 2 / (2 R^2))
INSCOPE_LEVEL = 0.5
#: steps of the pilot run on the unperturbed tokens whose largest step sets nu*: GD's and the Polyak step's largest
#: steps are among their first (the gradient norm, and (L - L*)/||grad L||, shrink or settle once the opt scores grow),
#: NGD's is eta at every step; the run's own largest step decides its scope afterwards (suite_scope)
PILOT_STEPS = 30
#: one run in four starts along -Wbar_mm (violating every W-SVM constraint), as in the Example-1 suite
ADVERSARIAL_EVERY = 4
#: the family's random stream
INSCOPE_SEED_KEY = "B.fixed-head in-scope family"
#: nu/(1 - 3 nu) is placed at LEVEL x nu* by scaling the perturbation rho (nu is linear in rho for small rho): this many
#: corrections after the first guess rho = 2 nu (nu ~ rho / 2) put it there to ~1e-6 relative
LEVEL_CORRECTIONS = 3
#: iid runs of the family at quick / standard / full: its per-run exponents spread far less than the Example-1
#: suite's (NGD: -2.000 [-2.000, -2.000] over 32 runs at quick seed 0), so 16 give intervals far inside the declared
#: widths; standard and full as the suite (SUITE_RUNS)
INSCOPE_RUNS = (16, 32, 96)
#: the in-scope bank (B.L3): data sets per algorithm at quick / standard / full (with the bank's inits and steps)
INSCOPE_BANK_INSTANCES = (3, 6, 12)


#: the restriction the in-scope checks' instances carry (by construction: nothing is dropped)
FAMILY_SCOPE = ScopeFilter(
    "near-orthogonal family", "the checks inside the assumptions run on exactly orthonormal noise tokens perturbed to "
    "half our Ass 1's level at each algorithm's step (fixed_head_inscope; n = 4, T = 3, Example 1's scores), from "
    "‖W₀‖ = 1/(4R²)", why="Example 1 meets our Ass 1 only at d of order 10⁶ (B.L6); this family is inside it at "
    "every step size, but it is one corner of it: nearly orthogonal data, small starts", unit="")


def at_level(n: int, T: int, seed: int, step: float, level: float = INSCOPE_LEVEL):
    """``runs.orthogonal_tokens(n, T, rho, seed)`` with rho such that nu/(1 - 3 nu) = ``level`` x nu* (Ass 1 at
    Lemma 2's eps = 1/4 and the largest step ``step``); rho = 0 where nu* is below float64 rounding of nu."""
    def make(rho):
        return runs.orthogonal_tokens(n, T, rho=rho, extra_dims=INSCOPE_SIZES["extra_dims"], seed=seed)

    def target(ds):
        lhs = level * ass1(ds, step=step, eps=EPS).nu_star
        return lhs / (1 + 3 * lhs)                      # the nu with nu/(1 - 3 nu) = lhs

    rho = 2 * target(make(0.0))
    for _ in range(LEVEL_CORRECTIONS):
        ds = make(rho)
        nu = float(data.assumptions(ds)["nu"])
        if not rho > 0 or nu <= 0:
            return make(0.0)
        rho *= target(ds) / nu
    return make(rho)


def initial(directions: torch.Tensor, adversarial: torch.Tensor, datasets: list, solutions: list) -> torch.Tensor:
    """W_0 (B, d, d) of norm eps / R^2 (Lemma 2's bound in every direction): ``directions`` or, where ``adversarial``,
    -Wbar_mm of each run's data set (``solutions``: its W-SVM result, None where not adversarial)."""
    W0 = directions.clone()
    for b in torch.nonzero(adversarial).flatten().tolist():
        W0[b] = -solutions[b].solution
    scale = torch.tensor([EPS / float(data.assumptions(x)["R"]) ** 2 for x in datasets], dtype=DTYPE)
    return scale[:, None, None] * W0 / torch.linalg.matrix_norm(W0)[:, None, None]


def largest_steps(ds, kind: str, eta: float, W0: torch.Tensor, n_steps: int = PILOT_STEPS) -> torch.Tensor:
    """The largest ||W_{t+1} - W_t|| over ``n_steps`` steps of ``kind`` (``runs.algorithm``) from W0, per run (B,)."""
    traj = A.train(ds, runs.algorithm(kind, eta), n_steps, W0, record_at=range(n_steps + 1), keep_params=True)
    return (traj["W"][1:] - traj["W"][:-1]).flatten(-2).norm(dim=-1).amax(0)


@fixture
def inscope_suite(ctx, kind: str = "ngd", eta: float = ETA, n_runs=per_budget(*INSCOPE_RUNS),
                  n_steps=per_budget(*SUITE_STEPS), n_points=per_budget(*SUITE_POINTS), n: int = INSCOPE_SIZES["n"],
                  T: int = INSCOPE_SIZES["T"], level: float = INSCOPE_LEVEL) -> Suite:
    """``n_runs`` iid (data set, start) pairs of the family (module docstring) for the algorithm ``kind`` at step (or
    cap) ``eta``, which sets each data set's perturbation; recorded at ``n_points`` log-spaced steps up to
    ``n_steps`` (the ``Suite`` fields).  ``Suite.ass1``: Ass 1 at each start's eps and the pilot's largest step."""
    gen = ctx.generator(INSCOPE_SEED_KEY, n, T)
    seeds = torch.randint(0, 2**31 - 1, (n_runs,), generator=gen).tolist()
    base = [runs.orthogonal_tokens(n, T, extra_dims=INSCOPE_SIZES["extra_dims"], seed=s) for s in seeds]
    d = base[0].d
    directions = torch.randn(n_runs, d, d, generator=gen, dtype=DTYPE)
    adversarial = torch.arange(n_runs) % ADVERSARIAL_EVERY == ADVERSARIAL_EVERY - 1
    pilot_sols = [svm.w_svm(x) if a else None for x, a in zip(base, adversarial.tolist())]
    pilot = largest_steps(data.stack(base), kind, eta, initial(directions, adversarial, base, pilot_sols))
    dss = [at_level(n, T, s, float(step), level) for s, step in zip(seeds, pilot)]
    sols = [svm.w_svm(x) for x in dss]
    W0 = initial(directions, adversarial, dss, sols)
    ds = data.stack(dss)
    levels = [ass1(x, step=float(pilot[b]), eps=float(runs.init_logit_bound(W0[b], x))) for b, x in enumerate(dss)]
    return Suite(ds, dss, sols, torch.stack([s.solution for s in sols]),
                 torch.tensor([s.norm for s in sols], dtype=DTYPE), W0, adversarial, data.assumptions(ds)["nu"],
                 levels, n_steps, record_steps(n_steps, n_points))


@dataclass(eq=False)
class FamilyRun(SuiteRun):
    """A ``SuiteRun`` on the family that knows its step size (NGD, GD) or cap (Polyak)."""

    eta: float = ETA


_NAMES = {"ngd": "NGD", "gd": "GD", "polyak": "Polyak (capped)"}   # as the Example-1 suite's runs are named


@fixture(uses={"suite": inscope_suite})
def inscope_run(ctx, suite: Suite, kind: str = "ngd", eta: float = ETA,
                n_steps=per_budget(*SUITE_STEPS)) -> FamilyRun:
    """``kind`` at step ``eta`` (the Polyak step: cap ``eta``, ``math.inf`` uncapped) on every run of ``suite`` for
    ``n_steps`` steps, iterates recorded (``example1_suite.record_at``)."""
    traj = A.train(suite.ds, runs.algorithm(kind, eta), n_steps, suite.W0, record_at=record_at(suite, n_steps),
                   keep_params=True)
    name = "Polyak (uncapped)" if kind == "polyak" and math.isinf(eta) else _NAMES[kind]
    return FamilyRun(name, eta if kind == "polyak" else None, n_steps, traj, eta)


# ---------------------------------------------------------------------------
# Each run's scope, read off its record
# ---------------------------------------------------------------------------


def largest_recorded_step(traj, b: int) -> float:
    """Run b's largest ||W_{t+1} - W_t|| over its recorded consecutive steps (every step to 10, then each
    log-spaced record's successor: ``record_steps``)."""
    steps = traj.steps.numpy()
    nxt = np.flatnonzero(steps[1:] == steps[:-1] + 1)
    W = traj["W"][:, b]
    return float((W[nxt + 1] - W[nxt]).flatten(-2).norm(dim=-1).max())


def suite_scope(suite: Suite, run: SuiteRun) -> list[dict]:
    """Per run of ``run`` (on ``suite``): Ass 1 at its measured initial logit bound and its largest recorded step,
    Ass 2, Lemma 2's small init, and whether all hold (the W-SVM is feasible: the suite solved it)."""
    out = []
    for b, x in enumerate(suite.datasets[: run.traj["W"].shape[1]]):   # a control may run the first few only
        eps = float(runs.init_logit_bound(suite.W0[b], x))
        a = ass1(x, step=largest_recorded_step(run.traj, b), eps=eps)
        row = dict(ass1=a.holds, ass2=ass2_holds(x), small_init=eps <= EPS, nu=a.nu, nu_star=a.nu_star)
        out.append(row | {"inside": row["ass1"] and row["ass2"] and row["small_init"]})
    return out


#: what the rate checks' runs must satisfy to count as inside (the claims' ``phase_probe.ASSUMPTIONS``)
_SCOPE_TEXT = "Ass 1 (ν/(1−3ν) ≤ ν* at the run's ε and largest step), Ass 2, small init (max|a(W₀)| ≤ 1/4)"


def record_scope(ev, inside: int, total: int, what: str = _SCOPE_TEXT) -> dict:
    """Record, as a line of ``ev`` and as details, whether the runs the check's decision reads (``total``, of which
    ``inside`` lie inside the claim's assumptions) are evidence inside them: "in scope" only when every one is; else
    the label is the count, "k of n runs inside" (a decision that pools or averages over the runs rests on that
    fraction of in-scope evidence, and its outside runs are not dropped from it)."""
    if total > 0 and inside == total:
        label = "in scope"
        ev.say(f"scope evidence: in scope ({inside} of {total} runs inside {what})")
    else:
        label = f"{inside} of {total} runs inside"
        ev.say(f"scope evidence: not in scope, {label} {what}")
    return {"scope_evidence": label, "runs_inside": int(inside), "runs": int(total), "scope_assumptions": what}


# ---------------------------------------------------------------------------
# The in-scope bank (B.L3): the trajectory bank's algorithms on the family, every step, from Lemma-2 inits
# ---------------------------------------------------------------------------


@dataclass(eq=False)
class StepRuns:
    """Every-step runs to score, [(ds, label, kind, eta, trajectory, W0)], with the line that names them and the
    set-up they come from (the record's details: source, d, init_mult)."""

    tag: str
    setup: dict
    runs: list


@fixture
def inscope_bank(ctx, level: float = INSCOPE_LEVEL, n: int = INSCOPE_SIZES["n"], T: int = INSCOPE_SIZES["T"],
                 algorithms=BANK_ALGOS) -> StepRuns:
    """Per algorithm of ``algorithms`` (the trajectory bank's: label, kind, step) ``INSCOPE_BANK_INSTANCES`` data sets
    of the family at that algorithm's level, each with B Lemma-2 inits (``bank``: delta = 1e-6) run for
    the bank's steps, recorded at every step (B.L3's every-step check reads them)."""
    gen = ctx.generator(INSCOPE_SEED_KEY, "bank", n, T, level)
    k, B, steps = ctx.pick(*INSCOPE_BANK_INSTANCES), ctx.pick(*BANK_INITS), ctx.pick(*BANK_STEPS)
    out = []
    for label, kind, eta in algorithms:
        for s in torch.randint(0, 2**31 - 1, (k,), generator=gen).tolist():
            base = runs.orthogonal_tokens(n, T, extra_dims=INSCOPE_SIZES["extra_dims"], seed=s)
            noise = torch.randn(B, base.d, base.d, generator=gen, dtype=DTYPE)
            step = float(largest_steps(base, kind, eta, sigma0(base, delta=INIT_DELTA) * noise).max())
            ds = at_level(n, T, s, step, level)
            W0 = sigma0(ds, delta=INIT_DELTA) * noise
            out.append((ds, label, kind, eta, runs.run_recorded(ds, runs.algorithm(kind, eta), W0, steps,
                                                                values=kind == "polyak"), W0))
    return StepRuns(f"near-orthogonal tokens at {level:g} of Ass 1's level, Lemma-2 inits",
                    dict(source="in-scope family", d=out[0][0].d, init_mult=1.0), out)


# ---------------------------------------------------------------------------
# The requests the claims read (a request keys its value by its parameters: equal requests share one value)
# ---------------------------------------------------------------------------


def family(kind: str = "ngd", eta: float = ETA, **params):
    """The family for ``kind`` at step (cap) ``eta``; ``params``: other parameters of :func:`inscope_suite`."""
    return inscope_suite.bind(kind=kind, eta=eta, **params)


def family_run(kind: str = "ngd", eta: float = ETA, n_steps=per_budget(*SUITE_STEPS), on: tuple = ("ngd", ETA),
               **params):
    """``kind`` at ``eta`` for ``n_steps`` on the family of the algorithm ``on`` (kind, eta) (``params``: the family's
    other parameters): the family a run lies inside is its own algorithm's, or one whose steps are no shorter."""
    return inscope_run.bind(suite=family(*on, **params), kind=kind, eta=eta, n_steps=n_steps)


def run_inputs(kind: str = "ngd", eta: float = ETA, n_steps=per_budget(*SUITE_STEPS), **params) -> dict:
    """A check's ``suite`` and ``run`` on the family of ``kind`` at ``eta`` (its own runs), for ``n_steps``."""
    return {"suite": family(kind, eta, **params), "run": family_run(kind, eta, n_steps, (kind, eta), **params)}


def rate_inputs(kind: str = "ngd", eta: float = ETA, n_steps=per_budget(*SUITE_STEPS), **params) -> dict:
    """A rate check's ``suite``, ``run`` and ``W_mm`` on the family of ``kind`` at ``eta`` (its own runs)."""
    inputs = run_inputs(kind, eta, n_steps, **params)
    return inputs | {"W_mm": suite_w_mm.bind(suite=inputs["suite"])}


def scaled(steps: tuple, factor: float):
    """A per-budget horizon ``factor`` times ``steps`` (quick, standard, full): a horizon free choice's value."""
    return per_budget(*(int(round(factor * s)) for s in steps))
