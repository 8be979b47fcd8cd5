r"""Set-ups of paper B's every-step fixed-head claims (B.E5, B.L3, B.L4, B.L5, B.L7, B.C1, B.Fig8): fixtures.

The values are fixtures (``theorems.fixture``): a check names the one it reads in its ``uses`` and the runner
computes it once per run and parameters, and passes it in; nothing here keeps a value.  A value is shared by
reference: do not modify it.

* :func:`example1_instances`: Example 1 (n = 8, T = 4, d = 32; data seeds 0..) and one exactly orthogonal-token
  instance, each with its W-SVM solution and (spread 0) the W-SVM without the constraints of the sample that carries
  the most dual mass (:func:`most_loaded_sample_dropped`, a wrong W_mm for the negative controls).  B.E5 reads them,
  and the bank runs on them.
* :func:`trajectory_bank`: every-step records of GD, NGD and Polyak on those instances, with the correlations and
  B.L4's ratio against both W-SVM solutions; read by B.L3, B.L4, B.L5 and B.L7.  Its horizon is a free choice of the
  claims that read it (:func:`bank_horizon_choice`, declared once here).
* :func:`bad_init_problem`: Appendix C.1's bad-direction problem and its W-SVM (B.C1, B.Fig8).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping

import torch

from numerics import DTYPE
from numerics.paper_b import data, runs, svm
from theorems.claim import FreeChoice
from theorems.fixture import PerBudget, Request, as_request, fixture, per_budget
from theorems.paper_b.fixed_head.assumptions import sigma0
from theorems.paper_b.fixed_head.correlation_bound import l4_ratio_metrics

# ---------------------------------------------------------------------------
# The instances of B.E5 / B.L4 and the trajectory bank (B.L3, B.L4, B.L5, B.L7)
# ---------------------------------------------------------------------------

#: the bank's algorithms (label, kind, step; ``runs.algorithm``): GD at eta = 1, NGD at a small (0.2) and a large
#: (10: ||W|| ~ 2000, deep saturation) step, Polyak capped at 10 (the experiments' cap rule)
BANK_ALGOS = (("GD η=1", "gd", 1.0), ("NGD η=0.2", "ngd", 0.2), ("NGD η=10", "ngd", 10.0),
              ("Polyak cap 10", "polyak", 10.0))
EXAMPLE1_SEEDS = (2, 4, 6)  # Example 1 instances (data seeds 0..) at quick / standard / full
#: the random stream of the run's exactly orthogonal-token instance (B.L2-B.L7's bank and B.L2's instances share it)
ORTHOGONAL_SEED_KEY = "orthogonal-token instance"


def orthogonal_seed(ctx) -> int:
    """The data seed of the run's exactly orthogonal-token instance, drawn under ``ORTHOGONAL_SEED_KEY``."""
    return ctx.derived_seed(ORTHOGONAL_SEED_KEY) % 2**31
#: the bank at quick / standard / full: inits of each kind (Lemma-2 and norm 1..3) per instance, and steps
BANK_INITS, BANK_STEPS = (3, 6, 12), (200, 500, 1500)
INIT_DELTA = 1e-6  # Lemma 2's failure probability for the small inits (the init event is then certain in practice)
BANK_SEED_KEYS = ("B.L4", "bank")  # the bank's random stream (named after the claim that first recorded it)


def most_loaded_sample_dropped(ds, r: svm.SVMResult) -> svm.SVMResult:
    """The W-SVM of ``ds`` without the constraints of the sample that carries the most dual mass in ``r``: a wrong
    W_mm (negative controls)."""
    i = int(r.alpha.sum(1).argmax())
    return svm.w_svm(ds, drop=[(i, t) for t in range(ds.T) if t != int(ds.opt_index[i])])


@dataclass(frozen=True, eq=False)
class Instances:
    """The bank's data: ``problems`` [(dataset, W-SVM result, dropped-constraint W-SVM result)], and their score
    spread (0: Ass 2 holds; the dropped solution is then :func:`most_loaded_sample_dropped`, else the W-SVM's own)."""

    spread: float
    problems: list


@fixture
def example1_instances(ctx, spread: float = 0.0) -> Instances:
    """Example 1 (n = 8, T = 4, d = 32, gamma_opt = 1, gamma_other = 0, sigma = 1/sqrt(d)), data seeds 0.., and one
    exactly orthogonal-token instance (n = 4, T = 3, nu = 0; drawn from the run's ``ORTHOGONAL_SEED_KEY`` seed);
    ``spread`` breaks Ass 2."""
    k = ctx.pick(*EXAMPLE1_SEEDS)
    datasets = [data.example1(n=8, T=4, d=32, spread=spread, seed=s) for s in range(k)]
    datasets.append(runs.orthogonal_tokens(n=4, T=3, spread=spread, seed=orthogonal_seed(ctx)))
    problems = []
    for ds in datasets:
        r = svm.w_svm(ds)
        problems.append((ds, r, most_loaded_sample_dropped(ds, r) if spread == 0.0 else r))
    return Instances(spread, problems)


@fixture(uses={"instances": example1_instances})
def trajectory_bank(ctx, instances: Instances, algorithms=BANK_ALGOS, steps=per_budget(*BANK_STEPS)) -> list[dict]:
    r"""Per instance: every-step records of ``algorithms`` (default GD eta = 1, NGD eta = 0.2 and 10, the latter
    reaching ||W|| ~ 2000, deep in softmax saturation, and Polyak cap 10) from 2B inits: B at Lemma 2's scale (B.L2
    with delta = 1e-6) and B of norm U(1, 3) in random directions, for ``steps`` steps (the budget's BANK_STEPS; a
    free choice's other values: :func:`bank_horizon_choice`).  Correlations and B.L4's ratio are recorded against
    the true W_mm and against the dropped-constraint W_mm of the negative controls (the true one again when the
    instances break Ass 2).

    Entries: ds, r, r_dropped, W0, n_lemma2 (= B), steps, spread, runs {label: (kind, eta, trajectory)}."""
    spread = instances.spread
    gen = ctx.generator(*BANK_SEED_KEYS, spread)
    B = ctx.pick(*BANK_INITS)
    bank = []
    for ds, r, r_drop in instances.problems:
        W0 = torch.cat([runs.gaussian_init(B, ds.d, sigma0(ds, delta=INIT_DELTA), gen),
                        runs.gaussian_init(B, ds.d, (1 + 2 * torch.rand(B, generator=gen, dtype=DTYPE)) / ds.d, gen)])
        extra = l4_ratio_metrics({"": r.solution, "_dropped": r_drop.solution})
        trajs = {label: (kind, eta, runs.run_recorded(ds, runs.algorithm(kind, eta), W0, steps, W_mm=r.solution,
                                                      values=kind == "polyak", extra_refs={"dropped": r_drop.solution},
                                                      extra=extra))
                 for label, kind, eta in algorithms}
        bank.append(dict(ds=ds, r=r, r_dropped=r_drop, W0=W0, n_lemma2=B, steps=steps, spread=spread, runs=trajs))
    return bank


def bank_at(bank=trajectory_bank, horizon: float = 1.0) -> Request:
    """``bank`` (a :func:`trajectory_bank` request) at ``horizon`` times its steps (rounded per budget); the request
    itself at 1."""
    if horizon == 1.0:
        return bank
    bank = as_request(bank)
    steps = bank.params.get("steps", per_budget(*BANK_STEPS))
    if isinstance(steps, PerBudget):
        return bank.bind(steps=per_budget(*(int(round(horizon * s)) for s in (steps.quick, steps.standard, steps.full))))
    return bank.bind(steps=int(round(horizon * steps)))


def bank_horizon_choice(checks: Mapping[str, Mapping[str, Request]]) -> FreeChoice:
    """The trajectory bank's horizon, a free choice of the checks ``checks`` (check -> {parameter: bank request}) of
    the claims that read the bank: a factor on BANK_STEPS (:func:`bank_at`)."""
    return FreeChoice(
        "bank horizon factor", 1.0, "the paper fixes no horizon and the bank's (200 steps at quick) sets the largest "
        "‖W‖ examined (NGD η = 10 grows it ~10 a step): half to four times it",
        {c: (lambda v, rs=rs: {p: bank_at(r, v) for p, r in rs.items()}) for c, rs in checks.items()},
        low=0.5, high=4.0, scale="log")


# ---------------------------------------------------------------------------
# Appendix C.1: the bad-direction problem (B.C1, B.Fig8)
# ---------------------------------------------------------------------------

@fixture(scope="static")
def bad_init_problem():
    """(dataset, W-SVM result) of ``data.bad_init`` (d = n = T = 2, u = e_1); ``ds.meta["W0_bar"]`` is the bad
    direction."""
    ds, _ = data.bad_init(1.0)
    return ds, svm.w_svm(ds)
