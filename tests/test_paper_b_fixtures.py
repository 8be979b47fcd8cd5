"""Paper B fixed-head fixtures (theorems.paper_b.trajectory_fixtures) and B.L3's step condition: the bounds the
claims derive, against direct computations."""
import math

import torch

from numerics import DTYPE
from numerics.paper_b import algorithms as A
from numerics.paper_b import data, model, runs, svm
from theorems.claim import Context
from theorems.paper_b import trajectory_fixtures as fx
from theorems.paper_b.l3_opt_score import monotone_violations


def test_l4_ratio_metric_matches_direct_computation():
    ds = data.example1(n=5, T=3, d=8, seed=3)
    r = svm.w_svm(ds)
    W = 0.3 * torch.randn(4, 8, 8, generator=torch.Generator().manual_seed(0), dtype=DTYPE)
    _, info = A.objective(ds)((W,))
    rec = runs.step_recorder(ds, r.solution, extra=fx.l4_ratio_metrics({"": r.solution}))((W,), info)
    # LB = (1/n) sum_i e^{-m_i} s_io (1 - s_io)(gamma_io - gammabar_i); Ass 2 holds (spread 0), gamma gap 1
    s = torch.softmax(model.logits(W, ds), -1)
    s_opt = s.gather(-1, ds.opt_index.expand(4, -1).unsqueeze(-1)).squeeze(-1)
    m = (s * ds.gamma).sum(-1)
    lb = (torch.exp(-m) * s_opt * (1 - s_opt) * 1.0).mean(-1)
    ln, d_ = model.grad_W_autograd(W, None, ds)
    corr = (-d_ * ln.exp()[:, None, None] * r.solution).sum((1, 2))
    assert torch.allclose(rec["log_l4_ratio"], corr.log() - lb.log(), atol=1e-10)
    assert bool((rec["log_l4_ratio"] >= -1e-12).all())
    ev = model.evaluate(W, None, ds, values=False)
    assert torch.allclose(fx.log_l4_bound(ev, ds), lb.log(), atol=1e-12)


def test_floor_and_nu_star():
    b = fx.opt_score_floor(4, 1.5, torch.tensor([0.1, 0.3]), 0.1)
    assert torch.allclose(b, 1 / (1 + 3 * torch.exp(torch.tensor([0.2, 0.6], dtype=DTYPE))))
    b2 = fx.opt_score_floor(4, 1.5, 0.0, 1.0)  # 2 R^2 Delta - 1 = 3.5 dominates
    assert math.isclose(float(b2), 1 / (1 + 3 * math.exp(3.5)))
    geo = runs.geometry(runs.orthogonal_tokens(4, 3, seed=2))
    assert math.isinf(float(fx.nu_star(geo, 1, 0.2)))
    ns = float(fx.nu_star(geo, 4, 0.2))
    assert math.isclose(ns, geo["q"] ** 2 * 0.2 * (1 - 0.2 / math.e) * geo["lo"]
                        / (math.e * 3 * geo["R"] ** 2 * geo["hi"]))
    assert bool(fx.ass1_holds(geo, 4, 0.2))
    assert not bool(fx.ass1_holds(runs.geometry(data.example1(n=4, T=3, d=8, seed=0)), 4, 0.2))


def test_sigma0():
    ds = runs.orthogonal_tokens(4, 3, seed=0)
    R = float(data.assumptions(ds)["R"])
    assert math.isclose(fx.sigma0(ds), 0.25 / (R**2 * math.sqrt(2 * math.log(4 * 12 / 0.05))))
    assert math.isclose(fx.sigma0(ds, r_power=0), fx.sigma0(ds) * R**2)


def test_monotone_violations():
    log_s = torch.log(torch.tensor([[0.3], [0.2], [0.25], [0.24]], dtype=DTYPE)).unsqueeze(1)  # (K=4, B=1, n=1)
    gap = torch.tensor([[0.5], [2.0], [0.5], [0.0]], dtype=DTYPE).unsqueeze(1)
    viol, elig = monotone_violations(log_s, gap)
    assert elig.flatten().tolist() == [True, False, True]
    assert viol.flatten().tolist() == [True, False, True]


def test_probe_problem_records_nu_and_feasibility():
    inst = dict(kind="orthogonal", n=2, T=2, d=6, rho=0.0, spread=0.0, seed=1)
    ds, r = fx.probe_problem(inst)
    assert r is not None and inst["feasible"] and inst["_nu"] < 1e-12
    assert fx.svm_probe_assumptions(inst) == {"Ass 2 (equal non-opt scores)": True, "W-SVM feasible": True}


def test_trajectory_bank_is_shared_and_records_the_l4_ratio():
    ctx = Context(seed=0, budget="quick")
    bank = fx.trajectory_bank(ctx, algos=fx.BANK_ALGOS[:1])
    assert fx.trajectory_bank(Context(seed=0, budget="quick", figures=False), algos=fx.BANK_ALGOS[:1]) is bank
    e = bank[0]
    kind, eta, tr = e["runs"]["GD η=1"]
    assert kind == "gd" and tr["W_norm"].shape == (e["steps"] + 1, 2 * e["n_lemma2"])
    assert {"log_l4_ratio", "log_l4_ratio_dropped", "grad_corr_mm_dropped"} <= set(tr.metrics)
    assert bool((tr["log_l4_ratio"] >= -1e-9).all())


def test_ass1_is_one_definition_with_b3s_floor():
    """ass1() is nu/(1-3nu) <= nu* at the floor b of Lemma 2's eps and the step; ASS1/ASS2 read a probe instance."""
    ds = data.example1(n=8, T=4, d=32, seed=0)
    geo = runs.geometry(ds)
    a = fx.ass1(ds)
    b = float(fx.opt_score_floor(4, geo["R"], fx.EPS, 0.0))
    assert math.isclose(a.b, b) and math.isclose(a.nu_star, float(fx.nu_star(geo, 8, b)))
    assert a.nu == geo["nu"] and not a.holds and math.isinf(a.lhs)            # nu ~ 0.44 > 1/3
    assert a.holds == bool(fx.ass1_holds(geo, 8, b))
    # a small step leaves the floor alone; a large one lowers it (and nu*)
    assert math.isclose(fx.ass1(ds, step=0.1).b, b) and fx.ass1(ds, step=10.0).nu_star < a.nu_star
    orth = runs.orthogonal_tokens(4, 3, seed=0)
    assert fx.ass1(orth).holds and fx.ass1(orth, step=10.0).holds              # nu is rounding (~1e-16): counted 0
    assert not fx.ass1(runs.orthogonal_tokens(4, 3, rho=0.5, seed=0)).holds
    assert fx.ASS1.holds({"ds": orth}) and not fx.ASS1.holds({"ds": ds})
    assert fx.ASS2.holds({"ds": ds}) and not fx.ASS2.holds({"ds": data.example1(n=8, T=4, d=32, spread=0.5)})
    assert float(fx.ass1_lhs(torch.tensor(0.1, dtype=DTYPE))) == 0.1 / 0.7


def test_probes_leave_infeasible_w_svm_undecided():
    from theorems.paper_b.l4_gradient_correlation import l4_probe_conclusion
    from theorems.paper_b.l5_norm_growth import l5_conclusion

    # more sequences than dimensions can separate: d = 2 with n = 6 Gaussian sequences is infeasible
    inst = dict(kind="gaussian", n=6, T=3, d=2, rho=0.0, spread=0.0, seed=3, log_norm=0.0, mix=0.5,
                log_init=-1.0, log_eta=-1.0)
    ds, r = fx.probe_problem(dict(inst))
    assert r is None
    assert l4_probe_conclusion(dict(inst), 1e-3)[0] is None
    assert l5_conclusion(dict(inst), 1e-3)[0] is None


def test_envelope_rule_states_its_effective_bound_and_refuses_short_windows():
    """rate_fixtures.decide_envelope: bound -1 + s_2 in ``claimed``; a window whose allowance exceeds MAX_ALLOWANCE
    never passes (t^-0.65 passed the old quick window [50, 500]); too wide an interval is inconclusive."""
    from theorems.paper_b import rate_fixtures as rf

    a, bound, _ = rf.effective_bound(300, 3000)
    assert a <= rf.MAX_ALLOWANCE and math.isclose(bound, -1 + a)
    assert rf.decide_envelope(-2.1, -1.9, 300, 3000).status == "pass"
    assert rf.decide_envelope(-0.5, -0.4, 300, 3000).status == "fail"
    assert rf.decide_envelope(-2.2, -1.9, 300, 3000).status == "inconclusive"     # wider than MAX_WIDTH
    short = rf.decide_envelope(-0.70, -0.62, 50, 500)                              # allowance 0.40 > 0.3
    assert short.status == "inconclusive" and short.claimed.startswith("≤ -0.598")


def test_probe_rate_reads_a_time_offset_as_undecided_and_gd_as_sublinear():
    """B.T7's standard-seed-1 kind of run (a first Polyak step of length ~195 from W0 = -1.16 Wbar_mm) is "not
    decided" by the probe's rate conclusion (its window lies inside the time offset), not a counterexample; GD on an
    in-assumption instance fails the linear-growth part; NGD there holds."""
    from theorems.paper_b import rate_fixtures as rf

    ds = data.example1(n=2, T=2, d=5, spread=0.0, sigma=2.7815560826659516 / math.sqrt(5), seed=256022430)
    inst = dict(kind="example1", n=2, T=2, d=5, rho=None, extra_dims=1, spread=0.0, init=1.1610536077854636,
                adversarial=True, data_seed=256022430, ds=ds, nu=float(data.assumptions(ds)["nu"]))
    holds, label, _ = rf.probe_rate(inst, "Polyak")
    assert holds is None and label == "time offset" and inst["step"] > 100
    ass1_ok, _, small_init_ok = rf.probe_assumptions(inst).values()
    assert not ass1_ok and not small_init_ok                                       # outside Ass 1 and Lemma 2
    orth = runs.orthogonal_tokens(3, 3, rho=0.0, extra_dims=2, seed=1)
    good = dict(kind="orthogonal", n=3, T=3, d=orth.d, rho=0.0, extra_dims=2, spread=0.0, init=0.01, eta=1.0,
                adversarial=False, data_seed=1, ds=orth, nu=float(data.assumptions(orth)["nu"]))
    assert rf.probe_rate(dict(good), "NGD")[0] is True
    assert rf.probe_rate(dict(good), "GD")[:2] == (False, "sublinear growth")


def test_probe_rate_looks_once_more_a_decade_later():
    """B.T1's quick seed-114 counterexample: from W0 = -0.01 Wbar_mm on exactly orthogonal tokens NGD starts on
    W_mm's line (1 - corr ~ 1e-31, below its C/t^2 asymptote), so 1 - corr rises until t ~ 300 and the window
    [60, 300] sees it flat; a decade later, on [600, 3000], it decays as t^-2.  GD still fails there (log t growth)."""
    from theorems.paper_b import rate_fixtures as rf

    ds = runs.orthogonal_tokens(2, 3, rho=0.0, spread=0.0, extra_dims=1, seed=7)
    inst = dict(kind="orthogonal", n=2, T=3, d=ds.d, rho=0.0, extra_dims=1, spread=0.0, init=0.01,
                eta=1.9109529749704406, adversarial=True, data_seed=7, ds=ds, nu=float(data.assumptions(ds)["nu"]))
    first = rf._probe_rate_on(dict(inst), "NGD", False, rf.PROBE_STEPS)
    assert first[0] is False and "-0.000" in first[2]                              # flat on [60, 300]
    holds, label, detail = rf.probe_rate(dict(inst), "NGD")
    assert (holds, label) == (True, "fitted") and "-2.000" in detail and "looked later" in detail
    assert rf.probe_rate(dict(inst), "GD")[:2] == (False, "sublinear growth")


def test_two_token_draws_start_after_gds_derived_transient():
    """B.S33's W_0 draws are conditioned on tau(z_0) = (e^{-z_0} - 1)/(2 eta) <= TRANSIENT_MAX N, and tau is the
    transient of the exact GD map: z_0 far below 0 stays negative for about tau steps and is past 0 soon after."""
    from numerics.paper_b import two_token
    from theorems.paper_b import s33_two_token as S33

    N = 500
    W0 = S33.initial_points(11, 64, N)
    z0 = (W0[:, 0, 0] - W0[:, 1, 0]).numpy()
    assert W0.shape == (64, 2, 2) and torch.equal(W0, S33.initial_points(11, 64, N))
    assert ((torch.exp(torch.as_tensor(-z0)) - 1) / (2 * S33.ETA_GD) <= S33.TRANSIENT_MAX * N + 1e-12).all()
    for z_start in (-5.0, -7.0):
        tau = (math.exp(-z_start) - 1) / (2 * S33.ETA_GD)
        z = two_token.gd_z(z_start, S33.ETA_GD, [int(0.9 * tau), int(1.5 * tau)])
        assert z[0] < 0 < z[1]
