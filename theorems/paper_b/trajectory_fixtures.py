r"""Shared set-ups of paper B's fixed-head claims (B.L2-B.L7, B.E5, B.C1, B.Fig8, B.Fig9).  Defines no claim.

Each formula here is derived in the claim module named beside it; it lives here because more than one claim reads it.

* Lemma 2's init scale ``sigma0`` and its constants ``EPS``, ``DELTA`` (derived in B.L2, ``l2_init_scale``);
  read by B.L3, B.L4 (the bank's inits), B.L6 and B.Fig9.
* B.L3's opt-score floor ``opt_score_floor`` (b) and sufficient near-orthogonality level ``nu_star`` (nu*), i.e.
  our Ass 1 ``nu / (1 - 3 nu) <= nu*`` (derived in ``l3_opt_score``); read by B.L3 and B.L6.  Ass 2 is
  ``spread == 0`` (equal non-opt scores).
* B.L4's lower bound ``LB(W) = (1/n) sum_i e^{-m_i} s_io (1 - s_io)(gamma_io - gammabar_i)`` (derived in
  ``l4_gradient_correlation``); recorded along the trajectory bank as ``log_l4_ratio``.
* The instances of B.E5 / B.L4 and the **trajectory bank**: every-step records of GD, NGD and Polyak on them,
  computed once per (seed, budget, spread, algorithms) and read by B.L3, B.L4, B.L5 and B.L7.
* The probe datasets of B.L3-B.L5 and the probe settings of B.L2-B.L5.
* The C.1 bad-direction problem (B.C1, B.Fig8).
"""
from __future__ import annotations

import functools
import math

import torch

from numerics import DTYPE
from numerics.paper_b import data, model, records, runs
from theorems.claim import Assumption, Context

# ---------------------------------------------------------------------------
# Lemma 2 (B.L2): the init scale
# ---------------------------------------------------------------------------

EPS, DELTA = 0.25, 0.05  # Lemma 2's logit bound eps and failure probability delta (our choices, B.L2)


def sigma0(ds, eps: float = EPS, delta: float = DELTA, r_power: int = 2) -> float:
    """Lemma 2's scale eps / (R^2 sqrt(2 log(4 n T / delta))) (``r_power=0``: B.L2's control without R^2)."""
    R = float(data.assumptions(ds)["R"])
    return eps / (R**r_power * math.sqrt(2 * math.log(4 * ds.n * ds.T / delta)))


# ---------------------------------------------------------------------------
# Lemma 3 (B.L3): the opt-score floor and our Ass 1; Ass 2
# ---------------------------------------------------------------------------

def opt_score_floor(T: int, R: float, eps, step) -> torch.Tensor:
    r"""b = 1 / (1 + (T-1) exp(max(2 eps, 2 R^2 step - 1)))  (B.L3's lower bound on s_opt)."""
    eps, step = torch.as_tensor(eps, dtype=DTYPE), torch.as_tensor(step, dtype=DTYPE)
    return 1.0 / (1.0 + (T - 1) * torch.exp(torch.maximum(2 * eps, 2 * R**2 * step - 1)))


def nu_star(geo: dict, n: int, b) -> torch.Tensor:
    r"""B.L3's sufficient near-orthogonality level: Ass 1 (ours) is nu / (1 - 3 nu) <= nu*,

        nu* = q^2 b (1 - b/e) min_i(e^{-gamma_io} Delta_i) / (e (n-1) R^2 max_j(e^{-gammabar_j} Delta_j)),

    and nu < 1/3 (n = 1: no cross-sample terms, nu* = inf).  ``geo`` is ``runs.geometry(ds)``."""
    b = torch.as_tensor(b, dtype=DTYPE)
    if n == 1:
        return torch.full_like(b, math.inf)
    return geo["q"] ** 2 * b * (1 - b / math.e) * geo["lo"] / (math.e * (n - 1) * geo["R"] ** 2 * geo["hi"])


def ass1_holds(geo: dict, n: int, b) -> torch.Tensor:
    """Our Ass 1: nu / (1 - 3 nu) <= nu* (and nu < 1/3)."""
    nu = geo["nu"]
    lhs = nu / (1 - 3 * nu) if nu < 1 / 3 else math.inf
    return torch.as_tensor(lhs <= nu_star(geo, n, b))


ASS1 = Assumption("Ass 1", "near-orthogonal tokens; our sufficient form ν/(1−3ν) ≤ ν* (B.L3)")
ASS2 = Assumption("Ass 2", "equal non-opt token scores: γ_it = γ̄_i < γ_io for t ≠ opt_i")


# ---------------------------------------------------------------------------
# Lemma 4 (B.L4): the lower bound LB(W) on <-grad L, W_mm>
# ---------------------------------------------------------------------------

def log_l4_bound(ev: model.Evaluation, ds) -> torch.Tensor:
    r"""log LB(W) (B,), LB = (1/n) sum_i e^{-m_i} s_io (1 - s_io) (gamma_io - gammabar_i), exp loss, fixed head.

    gammabar_i is the mean non-opt score (the common one under Ass 2).  log(1 - s_io) is a
    logsumexp of the non-opt log-scores, so LB is exact where 1 - s_io underflows.
    """
    is_opt = records.opt_mask(ds)
    log_s = ev.log_s                                                          # (B, n, T)
    log_so = (log_s * is_opt).sum(-1)
    log_1mso = torch.logsumexp(log_s.masked_fill(is_opt, -math.inf), -1)
    g = ds.gamma
    g_o = (g * is_opt).sum(-1)
    g_bar = (g * ~is_opt).sum(-1) / (ds.T - 1)
    terms = -ev.margin + log_so + log_1mso + torch.log(g_o - g_bar)
    return torch.logsumexp(terms, -1) - math.log(ds.n)


def log_l4_ratio(neg_dir: torch.Tensor, log_grad_norm: torch.Tensor, W_ref: torch.Tensor,
                 log_lb: torch.Tensor) -> torch.Tensor:
    """log(<-grad L, W_ref> / LB(W)) from the unit direction -grad L/||grad L|| (B, d*d) and log ||grad L||."""
    return torch.log(neg_dir @ W_ref.flatten()) + log_grad_norm - log_lb


def l4_ratio_metrics(refs: dict) -> dict:
    """Recorder metrics ``log_l4_ratio<suffix>`` for each reference ``{suffix: W_ref}`` (LB computed once a step)."""
    def log_lb(a: records.At) -> torch.Tensor:
        if "log_lb" not in a.__dict__:
            a.__dict__["log_lb"] = log_l4_bound(a.ev, a.ds)
        return a.__dict__["log_lb"]

    return {"log_l4_ratio" + k: (lambda a, ref=ref: log_l4_ratio(a.neg_dir, a.info["log_grad_norm"], ref, log_lb(a)))
            for k, ref in refs.items()}


# ---------------------------------------------------------------------------
# The instances of B.E5 / B.L4 and the trajectory bank (B.L3, B.L4, B.L5, B.L7)
# ---------------------------------------------------------------------------

BANK_ALGOS = (("GD η=1", "gd", 1.0), ("NGD η=0.2", "ngd", 0.2), ("NGD η=10", "ngd", 10.0),
              ("Polyak cap 10", "polyak", 10.0))
INIT_DELTA = 1e-6  # Lemma 2's failure probability for the small inits (the init event is then certain in practice)
BANK_SEED_KEYS = ("B.L4", "bank")  # the bank's random stream (named after the claim that first recorded it)


def instance_specs(ctx: Context, spread: float = 0.0) -> list:
    """(maker, kwargs): Example 1 (n = 8, T = 4, d = 32, gamma_opt = 1, gamma_other = 0, sigma = 1/sqrt(d)),
    seeds 0.., and one exactly orthogonal-token instance (n = 4, T = 3, nu = 0); ``spread`` breaks Ass 2."""
    k = ctx.pick(2, 4, 6)
    specs = [(data.example1, dict(n=8, T=4, d=32, spread=spread, seed=s)) for s in range(k)]
    return specs + [(runs.orthogonal_tokens, dict(n=4, T=3, spread=spread, seed=ctx.seed))]


def example1_instances(ctx: Context, spread: float = 0.0, dropped: bool = False) -> list:
    """[(dataset, W-SVM result)]; ``dropped``: the W-SVM solved without the constraints of the sample that
    carries the most dual mass (a wrong W_mm, negative control)."""
    solve = runs.with_dropped_w_mm if dropped else runs.with_w_mm
    return [solve(maker, **kw) for maker, kw in instance_specs(ctx, spread)]


def trajectory_bank(ctx: Context, spread: float = 0.0, algos=BANK_ALGOS) -> list[dict]:
    r"""Per instance (``example1_instances``): every-step records of GD (eta = 1), NGD (eta = 0.2 and 10, the latter
    reaching ||W|| ~ 2000, deep in softmax saturation) and Polyak (cap 10) from 2B inits: B at Lemma 2's scale
    (B.L2 with delta = 1e-6) and B of norm U(1, 3) in random directions.  Correlations and B.L4's ratio are
    recorded against the true W_mm and (spread = 0) against the dropped-constraint W_mm of the negative controls.

    Depends on the run's seed and budget only, and is computed once per process for each (seed, budget, spread,
    algos): B.L3, B.L4, B.L5 and B.L7 read the same runs.  Treat the result as read-only."""
    return _bank(ctx.seed, ctx.budget, spread, tuple(algos))


@functools.cache
def _bank(seed: int, budget: str, spread: float, algos: tuple) -> list[dict]:
    ctx = Context(seed=seed, budget=budget)  # the bank's sizes and random stream depend on these two only
    gen = ctx.generator(*BANK_SEED_KEYS, spread)
    B, steps = ctx.pick(3, 6, 12), ctx.pick(200, 500, 1500)
    bank = []
    pairs = zip(example1_instances(ctx, spread), example1_instances(ctx, spread, dropped=spread == 0.0))
    for (ds, r), (_, r_drop) in pairs:
        W0 = torch.cat([runs.gaussian_init(B, ds.d, sigma0(ds, delta=INIT_DELTA), gen),
                        runs.gaussian_init(B, ds.d, (1 + 2 * torch.rand(B, generator=gen, dtype=DTYPE)) / ds.d, gen)])
        extra = l4_ratio_metrics({"": r.solution, "_dropped": r_drop.solution})
        trajs = {label: (kind, eta, runs.run_recorded(ds, runs.algorithm(kind, eta), W0, steps, W_mm=r.solution,
                                                      values=kind == "polyak", extra_refs={"dropped": r_drop.solution},
                                                      extra=extra))
                 for label, kind, eta in algos}
        bank.append(dict(ds=ds, r=r, r_dropped=r_drop, W0=W0, n_lemma2=B, steps=steps, runs=trajs))
    return bank


# ---------------------------------------------------------------------------
# Probes of B.L2-B.L5
# ---------------------------------------------------------------------------

PROBE_EXAMPLES = (10, 60, 200)  # examples at quick / standard / full (each runs a small training or Monte Carlo)


#: the settings these probes share (``theorems.probe.probe_check`` parameters): instances are dicts of plain numbers
#: (``describe=dict``); the cells' minimal examples are shrunk beyond the quick (CI) profile (the default)
PROBE = dict(examples=PROBE_EXAMPLES, describe=dict)


def probe_dataset(inst: dict):
    """The probe instance's dataset: exactly orthogonal tokens perturbed by ``rho``, or Example 1 at dimension ``d``.

    The dataset keeps a seed (``inst["seed"]``): its n T tokens in up to 40 dimensions are too many numbers to draw
    through hypothesis; the sizes, scores, perturbation and scales around it are hypothesis primitives and shrink."""
    if inst["kind"] == "orthogonal":
        return runs.orthogonal_tokens(inst["n"], inst["T"], rho=inst["rho"], spread=inst["spread"], seed=inst["seed"])
    return data.example1(n=inst["n"], T=inst["T"], d=inst["d"], spread=inst["spread"], seed=inst["seed"])


def probe_problem(inst: dict):
    """(dataset, W-SVM result, or None when the W-SVM is infeasible); records ν and feasibility on ``inst``."""
    from numerics.paper_b import svm

    ds = probe_dataset(inst)
    inst["_nu"] = float(data.assumptions(ds)["nu"])
    try:
        r = svm.w_svm(ds)
    except svm.SVMInfeasible:
        inst["feasible"] = False
        return ds, None
    inst["feasible"] = True
    return ds, r


def svm_probe_assumptions(inst: dict) -> dict:
    """Ass 2 (exactly equal non-opt scores) and W-SVM feasibility of a ``probe_problem`` instance."""
    return {"Ass 2 (equal non-opt scores)": inst["spread"] == 0.0, "W-SVM feasible": inst.get("feasible", True)}


# ---------------------------------------------------------------------------
# Appendix C.1: the bad-direction problem (B.C1, B.Fig8)
# ---------------------------------------------------------------------------

@functools.cache
def bad_init_problem():
    """(dataset, W-SVM result) of ``data.bad_init`` (d = n = T = 2, u = e_1); ``ds.meta["W0_bar"]`` is the bad
    direction.  Read-only."""
    from numerics.paper_b import svm

    ds, _ = data.bad_init(1.0)
    return ds, svm.w_svm(ds)
