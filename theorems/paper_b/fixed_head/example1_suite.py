r"""Set-up of the fixed-head rate claims (B.T1, B.T6, B.T7, B.L1, B.Fig2): the Example-1 suite and its runs, as
fixtures.

* **The Example-1 suite** (:func:`example1_suite`): B iid pairs (data set, initial direction), each data set
  Example 1 with n = 4, T = 3, d = 16, gamma_opt = 1, gamma_other = 0 (Ass 2 by construction: noise orthogonal to
  u), and its W-SVM solution W_mm; ``||W_0|| = 0.5``, three quarters of the runs in a uniformly random direction and
  one quarter along the adversarial ``-Wbar_mm`` (violates every W-SVM constraint).  **These runs are outside our
  Ass 1** (``assumptions.ass1``, B.L3's sufficient level nu / (1 - 3 nu) <= nu*): nu ~ 0.3-0.5 there
  against nu* ~ 1e-3 (recorded per run as ``Suite.ass1``).  The rate checks therefore test the conclusions on the
  paper's own example; the probes (``phase_probe``) cover instances inside.
* **Its runs** (:func:`suite_run`): one :class:`~numerics.paper_b.algorithms.Algorithm` on the suite for a horizon;
  the algorithms the claims run are bound here once (``NGD``, ``GD``, ...), and so are the requests several claims
  share (``NGD_RUN``, ``NGD_ENVELOPE``, ...): a request keys its value by the algorithm object.
* **The references** :func:`suite_w_mm` (the W-SVM solutions) and :func:`suite_wrong_w_mm` (the W-SVM with its
  most-loaded constraint dropped: the wrong W_mm of the negative controls).

The values are fixtures (``theorems.fixture``): named in a check's ``uses``, computed once per run and parameters by
the runner and passed in; nothing here keeps a value.  A value is shared by reference: do not modify it.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import torch

from numerics import DTYPE, optim
from numerics.paper_b import algorithms as A
from numerics.paper_b import data, runs, svm
from theorems.fixture import fixture, per_budget
from theorems.paper_b.fixed_head.assumptions import ass1

# ---------------------------------------------------------------------------
# Constants (the source text lost the paper's; ours)
# ---------------------------------------------------------------------------

SIZES = dict(n=4, T=3, d=16)  # Example 1: d >> n T keeps the tokens nearly orthogonal (the paper's Ass. 1 reading)
INIT_NORM = 0.5        # "small initialization": ||W_0|| well below the data's ||W_mm|| ~ 1, the paper's Fig. 2 regime
ETA = 1.0              # NGD / GD step: the natural unit (the paper's value is lost)
BETA = 0.9             # NGD + momentum (the paper's value is lost; Ji et al.-style momentum uses ~0.9)
PS_CAP = 1e4           # Polyak cap for Fig. 2 (the paper's value is lost; "PS fastest early" needs a large cap)
#: iid (data set, initial direction) runs at quick / standard / full: the spread of per-run exponents (sd ~ 0.1 for
#: NGD in t, 0.3-0.5 for GD in log t) then gives intervals inside the declared widths at z(alpha = 5e-5) ~ 4.06
SUITE_RUNS = (32, 32, 96)
SUITE_STEPS = (500, 8000, 20000)  # the suite's horizon (B.Fig2's comparisons at t = N, B.L1's saturation slope)
SUITE_POINTS = (30, 60, 80)       # log-spaced record points of the suite's runs (each with its successor)
#: the horizon of the envelope rule (B.T1, B.T7, B.Fig2): s_2 over [N/10, N] is 0.294 at 3000, 0.256 at 8000 and
#: 0.230 at 20000, all <= MAX_ALLOWANCE; standard and full reuse the suite's runs
ENVELOPE_STEPS = (3000, 8000, 20000)
LONG_POINTS = 40       # log-spaced record points of a run longer than the suite's (each with its successor)
SUITE_SEED_KEY = "B.fixed-head-suite"  # the suite's random stream


# ---------------------------------------------------------------------------
# The Example-1 suite
# ---------------------------------------------------------------------------


@dataclass(eq=False)
class Suite:
    ds: data.Dataset           # per-run Example-1 data, X (B, n, T, d)
    datasets: list             # the same, one data set per run
    solutions: list            # per run: its W-SVM result (svm.SVMResult)
    W_mm: torch.Tensor         # (B, d, d)
    W_mm_norm: torch.Tensor    # (B,)
    W0: torch.Tensor           # (B, d, d)
    adversarial: torch.Tensor  # (B,) bool: W0 along -Wbar_mm
    nu: torch.Tensor           # (B,) Ass. 1 parameter
    ass1: list                 # per run: assumptions.ass1 at the run's initial logit bound and step ETA
    n_steps: int
    record_at: list


def record_steps(N: int, n_points: int) -> list[int]:
    """Log-spaced steps, each with its successor (NGD can oscillate with period 2 once saturated: both phases
    must be seen), and every step up to 10 (B.Fig2's early comparison)."""
    ls = optim.log_spaced_steps(N, n_points)
    return sorted(set(ls) | {t + 1 for t in ls if t < N} | set(range(min(N, 10) + 1)))


@fixture
def example1_suite(ctx, n_runs=per_budget(*SUITE_RUNS), n_steps=per_budget(*SUITE_STEPS),
                   n_points=per_budget(*SUITE_POINTS)) -> Suite:
    """The Example-1 runs shared by the fixed-head rate claims (module docstring): ``n_runs`` pairs (data set,
    initial direction), recorded at ``n_points`` log-spaced steps (and successors) up to ``n_steps``.  B.T6's GD
    runs bind more runs: a different, larger draw of the same family."""
    # Example-1 data sets (B x n T d = 192 numbers each) are drawn from per-run seeds, the initial directions
    # from the same generator: a fixture, not a probe, so nothing here needs to shrink.
    B = n_runs
    gen = ctx.generator(SUITE_SEED_KEY)
    seeds = torch.randint(0, 2**31 - 1, (B,), generator=gen).tolist()
    dss = [data.example1(**SIZES, seed=s) for s in seeds]
    sols = [svm.w_svm(x) for x in dss]
    W_mm = torch.stack([s.solution for s in sols])
    norms = torch.tensor([s.norm for s in sols], dtype=DTYPE)
    d = SIZES["d"]
    W0 = torch.randn(B, d, d, generator=gen, dtype=DTYPE)
    adversarial = torch.arange(B) % 4 == 3
    W0 = torch.where(adversarial[:, None, None], -W_mm, W0)
    W0 = INIT_NORM * W0 / torch.linalg.matrix_norm(W0)[:, None, None]
    ds = data.stack(dss)
    levels = [ass1(x, step=ETA, eps=float(runs.init_logit_bound(W0[b], x))) for b, x in enumerate(dss)]
    return Suite(ds, dss, sols, W_mm, norms, W0, adversarial, data.assumptions(ds)["nu"], levels, n_steps,
                 record_steps(n_steps, n_points))


@fixture(uses={"suite": example1_suite})
def suite_w_mm(ctx, suite: Suite) -> torch.Tensor:
    """The suite's W-SVM solutions W_mm (B, d, d): the reference the rate checks measure alignment against."""
    return suite.W_mm


@fixture(uses={"suite": example1_suite})
def suite_wrong_w_mm(ctx, suite: Suite) -> torch.Tensor:
    """Per run, the W-SVM with the constraint of largest dual weight dropped (B, d, d): a wrong W_mm (controls)."""
    wrong = []
    for x, s in zip(suite.datasets, suite.solutions):
        i, t = divmod(int(s.alpha.flatten().argmax()), x.T)
        wrong.append(svm.w_svm(x, drop=(i, t)).solution)
    return torch.stack(wrong)


# ---------------------------------------------------------------------------
# Runs on the suite
# ---------------------------------------------------------------------------


@dataclass(eq=False)
class SuiteRun:
    """One algorithm on the suite: its name and step cap (``A.Algorithm``), horizon, and the recorded trajectory
    (``records.FIXED_HEAD`` metrics and the iterates W (K, B, d, d))."""

    name: str
    cap: float | None
    n_steps: int
    traj: optim.Trajectory


def record_at(suite: Suite, n_steps: int) -> list[int]:
    """The suite's record steps up to ``n_steps``; beyond its horizon, ``LONG_POINTS`` log-spaced steps (and
    successors)."""
    return [t for t in suite.record_at if t <= n_steps] if n_steps <= suite.n_steps else record_steps(n_steps,
                                                                                                       LONG_POINTS)


@fixture(uses={"suite": example1_suite})
def suite_run(ctx, suite: Suite, algorithm: A.Algorithm, n_steps=per_budget(*SUITE_STEPS)) -> SuiteRun:
    """``algorithm`` on every run of the suite for ``n_steps`` steps (by default the horizon of the suite at its
    default size: bind ``n_steps`` with a suite of another horizon).  At standard and full the envelope's horizon is
    the same number, so those requests share one value."""
    return run_algorithm(suite, algorithm, n_steps)


def run_algorithm(suite: Suite, algorithm: A.Algorithm, n_steps: int) -> SuiteRun:
    """``algorithm`` on every run of the suite for ``n_steps`` steps, recorded at the suite's record steps."""
    traj = A.train(suite.ds, algorithm.transform, n_steps, suite.W0, record_at=record_at(suite, n_steps),
                   keep_params=True)
    return SuiteRun(algorithm.name, algorithm.cap, n_steps, traj)


# the algorithms the claims run, each bound once (a request keys its runs by the algorithm object)
NGD = A.Algorithm("NGD", A.ngd(ETA))                                    # normalized GD, step ETA
GD = A.Algorithm("GD", A.gd(ETA))                                       # constant-step GD, step ETA
PS = A.Algorithm("Polyak (uncapped)", A.polyak(math.inf), math.inf)     # the Polyak step (Theorem 7)
PS_CAPPED = A.Algorithm("Polyak (capped)", A.polyak(PS_CAP), PS_CAP)    # the experiments' capped Polyak step

#: the envelope rule's horizon (B.T1, B.T7, B.Fig2): at standard and full the suite's own, so those runs are shared
ENVELOPE = per_budget(*ENVELOPE_STEPS)
NGD_RUN = suite_run.bind(algorithm=NGD)            # NGD over the suite's horizon (B.T1, B.L1, B.T6, B.Fig2)
GD_RUN = suite_run.bind(algorithm=GD)              # GD over the suite's horizon (B.Fig2, B.T6; B.L1's control)
PS_RUN = suite_run.bind(algorithm=PS)              # the uncapped Polyak step (B.T7; B.T6's control)
NGD_ENVELOPE = NGD_RUN.bind(n_steps=ENVELOPE)      # NGD over the envelope's horizon (B.T1, B.Fig2)
GD_ENVELOPE = GD_RUN.bind(n_steps=ENVELOPE)        # GD over the envelope's horizon (controls of B.T1 and B.Fig2)
