"""Paper B's fixed-head set-ups and rules (theorems.paper_b.fixed_head: assumptions, bank, correlation_bound,
example1_suite, inscope, lemma_probes, phase_probe, rates) and B.L3's step condition: the bounds the claims derive, against direct computations; the fixtures' values."""
import math

import torch

from numerics import DTYPE
from numerics.paper_b import algorithms as A
from numerics.paper_b import data, model, runs, svm
from theorems.claim import Context
from theorems.fixture import Memo, resolve
from theorems.paper_b.fixed_head import assumptions, bank, correlation_bound, lemma_probes
from theorems.paper_b.fixed_head.l3_opt_score import monotone_violations


def test_l4_ratio_metric_matches_direct_computation():
    ds = data.example1(n=5, T=3, d=8, seed=3)
    r = svm.w_svm(ds)
    W = 0.3 * torch.randn(4, 8, 8, generator=torch.Generator().manual_seed(0), dtype=DTYPE)
    _, info = A.objective(ds)((W,))
    rec = runs.step_recorder(ds, r.solution, extra=correlation_bound.l4_ratio_metrics({"": r.solution}))((W,), info)
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
    assert torch.allclose(correlation_bound.log_l4_bound(ev, ds), lb.log(), atol=1e-12)


def test_floor_and_nu_star():
    b = assumptions.opt_score_floor(4, 1.5, torch.tensor([0.1, 0.3]), 0.1)
    assert torch.allclose(b, 1 / (1 + 3 * torch.exp(torch.tensor([0.2, 0.6], dtype=DTYPE))))
    b2 = assumptions.opt_score_floor(4, 1.5, 0.0, 1.0)  # 2 R^2 Delta - 1 = 3.5 dominates
    assert math.isclose(float(b2), 1 / (1 + 3 * math.exp(3.5)))
    geo = runs.geometry(runs.orthogonal_tokens(4, 3, seed=2))
    assert math.isinf(float(assumptions.nu_star(geo, 1, 0.2)))
    ns = float(assumptions.nu_star(geo, 4, 0.2))
    assert math.isclose(ns, geo["q"] ** 2 * 0.2 * (1 - 0.2 / math.e) * geo["lo"]
                        / (math.e * 3 * geo["R"] ** 2 * geo["hi"]))
    assert bool(assumptions.ass1_holds(geo, 4, 0.2))
    assert not bool(assumptions.ass1_holds(runs.geometry(data.example1(n=4, T=3, d=8, seed=0)), 4, 0.2))


def test_sigma0():
    ds = runs.orthogonal_tokens(4, 3, seed=0)
    R = float(data.assumptions(ds)["R"])
    assert math.isclose(assumptions.sigma0(ds), 0.25 / (R**2 * math.sqrt(2 * math.log(4 * 12 / 0.05))))
    assert math.isclose(assumptions.sigma0(ds, r_power=0), assumptions.sigma0(ds) * R**2)


def test_monotone_violations():
    log_s = torch.log(torch.tensor([[0.3], [0.2], [0.25], [0.24]], dtype=DTYPE)).unsqueeze(1)  # (K=4, B=1, n=1)
    gap = torch.tensor([[0.5], [2.0], [0.5], [0.0]], dtype=DTYPE).unsqueeze(1)
    viol, elig = monotone_violations(log_s, gap)
    assert elig.flatten().tolist() == [True, False, True]
    assert viol.flatten().tolist() == [True, False, True]


def test_probe_problem_returns_nu_and_feasibility_as_facts():
    inst = dict(kind="orthogonal", n=2, T=2, d=6, rho=0.0, spread=0.0, seed=1)
    before = dict(inst)
    ds, r, facts = lemma_probes.probe_problem(inst)
    assert r is not None and facts["feasible"] and facts["_nu"] < 1e-12 and inst == before   # nothing written
    assert lemma_probes.svm_probe_assumptions(inst, facts) == {"Ass 2 (equal non-opt scores)": True,
                                                             "W-SVM feasible": True}
    assert lemma_probes.describe(inst, facts) == before | facts


def test_trajectory_bank_is_one_value_per_run_and_records_the_l4_ratio():
    memo = Memo(Context(seed=0, budget="quick"))
    gd_bank = bank.trajectory_bank.bind(algorithms=bank.BANK_ALGOS[:1])
    value = memo.value(gd_bank)
    assert memo.value(gd_bank) is value and memo.computed[bank.trajectory_bank.name] == 1
    assert memo.computed[bank.example1_instances.name] == 1
    e = value[0]
    kind, eta, tr = e["runs"]["GD η=1"]
    assert kind == "gd" and e["spread"] == 0.0 and tr["W_norm"].shape == (e["steps"] + 1, 2 * e["n_lemma2"])
    assert {"log_l4_ratio", "log_l4_ratio_dropped", "grad_corr_mm_dropped"} <= set(tr.metrics)
    assert bool((tr["log_l4_ratio"] >= -1e-9).all())
    # the dropped-constraint W_mm leaves out every constraint of the sample with the most dual mass
    i = int(e["r"].alpha.sum(1).argmax())
    assert all(p[0] != i for p in e["r_dropped"].constraints)
    assert len(e["r_dropped"].constraints) == len(e["r"].constraints) - (e["ds"].T - 1)


def test_most_loaded_sample_dropped_is_a_wrong_w_mm():
    ds = data.example1(n=3, T=3, d=6, seed=5)
    r = svm.w_svm(ds)
    d = bank.most_loaded_sample_dropped(ds, r)
    i = int(r.alpha.sum(1).argmax())
    assert all(p[0] != i for p in d.constraints) and len(d.constraints) == len(r.constraints) - 2
    assert not torch.allclose(d.solution, r.solution)


def test_suite_runs_share_values_and_keys():
    """A run of the suite is one value per (algorithm object, horizon); the envelope's horizon is the suite's own at
    standard, so those requests share one value there; the wrong W_mm drops one constraint per run."""
    from theorems.fixture import run_key
    from theorems.paper_b.fixed_head import example1_suite

    std, quick = Context(seed=0, budget="standard"), Context(seed=0, budget="quick")
    assert run_key(example1_suite.NGD_RUN, std) == run_key(example1_suite.NGD_ENVELOPE, std)
    assert run_key(example1_suite.NGD_RUN, quick) != run_key(example1_suite.NGD_ENVELOPE, quick)
    assert run_key(example1_suite.NGD_RUN, quick) != run_key(example1_suite.GD_RUN, quick)
    small = example1_suite.example1_suite.bind(n_runs=4, n_steps=20, n_points=5)
    memo = Memo(quick)
    suite = memo.value(small)
    assert suite.W0.shape == (4, 16, 16) and bool(suite.adversarial[3]) and not bool(suite.adversarial[0])
    assert torch.allclose(torch.linalg.matrix_norm(suite.W0), torch.full((4,), example1_suite.INIT_NORM, dtype=DTYPE))
    run = memo.value(example1_suite.NGD_RUN.bind(suite=small, n_steps=20))
    assert memo.value(example1_suite.NGD_RUN.bind(suite=small, n_steps=20)) is run and memo.computed[example1_suite.example1_suite.name] == 1
    assert run.name == "NGD" and run.n_steps == 20 and run.traj["W"].shape == (len(suite.record_at), 4, 16, 16)
    longer = memo.value(example1_suite.NGD_RUN.bind(suite=small, n_steps=40))
    assert int(longer.traj.steps[-1]) == 40 and torch.equal(longer.traj["W"][0], run.traj["W"][0])
    wrong = memo.value(example1_suite.suite_wrong_w_mm.bind(suite=small))
    assert wrong.shape == suite.W_mm.shape and not torch.allclose(wrong, suite.W_mm)
    assert torch.equal(memo.value(example1_suite.suite_w_mm.bind(suite=small)), suite.W_mm)


def test_instances_breaking_ass2_keep_their_own_w_mm():
    inst = resolve(bank.example1_instances.bind(spread=1.0), Context(seed=0, budget="quick"))
    assert inst.spread == 1.0 and len(inst.problems) == 3
    assert all(r_drop is r for _, r, r_drop in inst.problems)
    assert all(float(data.assumptions(ds)["spread"]) > 0 for ds, _, _ in inst.problems)


def test_ass1_is_one_definition_with_b3s_floor():
    """ass1() is nu/(1-3nu) <= nu* at the floor b of Lemma 2's eps and the step; ASS1/ASS2 read a probe instance."""
    ds = data.example1(n=8, T=4, d=32, seed=0)
    geo = runs.geometry(ds)
    a = assumptions.ass1(ds)
    b = float(assumptions.opt_score_floor(4, geo["R"], assumptions.EPS, 0.0))
    assert math.isclose(a.b, b) and math.isclose(a.nu_star, float(assumptions.nu_star(geo, 8, b)))
    assert a.nu == geo["nu"] and not a.holds and math.isinf(a.lhs)            # nu ~ 0.44 > 1/3
    assert a.holds == bool(assumptions.ass1_holds(geo, 8, b))
    # a small step leaves the floor alone; a large one lowers it (and nu*)
    assert math.isclose(assumptions.ass1(ds, step=0.1).b, b) and assumptions.ass1(ds, step=10.0).nu_star < a.nu_star
    orth = runs.orthogonal_tokens(4, 3, seed=0)
    assert assumptions.ass1(orth).holds and assumptions.ass1(orth, step=10.0).holds              # nu is rounding (~1e-16): counted 0
    assert not assumptions.ass1(runs.orthogonal_tokens(4, 3, rho=0.5, seed=0)).holds
    assert assumptions.ASS1.holds({"ds": orth}) and not assumptions.ASS1.holds({"ds": ds})
    assert assumptions.ASS2.holds({"ds": ds}) and not assumptions.ASS2.holds({"ds": data.example1(n=8, T=4, d=32, spread=0.5)})
    assert float(assumptions.ass1_lhs(torch.tensor(0.1, dtype=DTYPE))) == 0.1 / 0.7


def test_probes_leave_infeasible_w_svm_undecided():
    from theorems.paper_b.fixed_head.l4_gradient_correlation import l4_probe_conclusion
    from theorems.paper_b.fixed_head.l5_norm_growth import l5_conclusion

    # more sequences than dimensions can separate: d = 2 with n = 6 Gaussian sequences is infeasible
    inst = dict(kind="gaussian", n=6, T=3, d=2, rho=0.0, spread=0.0, seed=3, log_norm=0.0, mix=0.5,
                log_init=-1.0, log_eta=-1.0)
    ds, r, facts = lemma_probes.probe_problem(dict(inst))
    assert r is None and facts["feasible"] is False
    for conclusion in (l4_probe_conclusion, l5_conclusion):
        holds, _, _, facts = conclusion(dict(inst), 1e-3)
        assert holds is None and facts["feasible"] is False


def test_envelope_rule_states_its_effective_bound_and_refuses_short_windows():
    """rates.decide_envelope: bound -1 + s_2 in ``claimed``; a window whose allowance exceeds
    MAX_ALLOWANCE never passes (t^-0.65 passed the old quick window [50, 500]); too wide an interval is
    inconclusive."""
    from theorems.paper_b.fixed_head import rates

    a, bound, _ = rates.effective_bound(300, 3000)
    assert a <= rates.MAX_ALLOWANCE and math.isclose(bound, -1 + a)
    assert rates.decide_envelope(-2.1, -1.9, 300, 3000).status == "pass"
    assert rates.decide_envelope(-0.5, -0.4, 300, 3000).status == "fail"
    assert rates.decide_envelope(-2.2, -1.9, 300, 3000).status == "inconclusive"     # wider than MAX_WIDTH
    short = rates.decide_envelope(-0.70, -0.62, 50, 500)                              # allowance 0.40 > 0.3
    assert short.status == "inconclusive" and short.claimed.startswith("≤ -0.598")


def test_probe_rate_reads_a_time_offset_as_undecided_and_gd_as_sublinear():
    """B.T7's standard-seed-1 kind of run (a first Polyak step of length ~195 from W0 = -1.16 Wbar_mm) is "not
    decided" by the probe's rule (in its phase from the start, but its norm does not grow tenfold by the cap: its
    whole run lies inside the time offset), not a counterexample; GD on an in-assumption instance never reaches the
    phase and fails the linear-growth part on its last decade; NGD and the Polyak step there hold on their first
    window.  The run's largest step and initial logit bound come back as facts (nothing is written into the
    instance)."""
    from theorems.paper_b.fixed_head import phase_probe

    ds = data.example1(n=2, T=2, d=5, spread=0.0, sigma=2.7815560826659516 / math.sqrt(5), seed=256022430)
    inst = dict(kind="example1", n=2, T=2, d=5, rho=None, extra_dims=1, spread=0.0, init=1.1610536077854636,
                adversarial=True, data_seed=256022430, ds=ds, nu=float(data.assumptions(ds)["nu"]))
    before = dict(inst)
    holds, label, _, facts = phase_probe.probe_rate(inst, "Polyak")
    assert holds is None and label == "window not complete" and facts["step"] > 100 and inst == before
    ass1_ok, _, small_init_ok = phase_probe.probe_assumptions(inst, facts).values()
    assert not ass1_ok and not small_init_ok                                       # outside Ass 1 and Lemma 2
    assert phase_probe.describe(inst, facts)["step"] == facts["step"] and "step" not in phase_probe.describe(inst, {})
    orth = runs.orthogonal_tokens(3, 3, rho=0.0, extra_dims=2, seed=1)
    good = dict(kind="orthogonal", n=3, T=3, d=orth.d, rho=0.0, extra_dims=2, spread=0.0, init=0.01, eta=1.0,
                adversarial=False, data_seed=1, ds=orth, nu=float(data.assumptions(orth)["nu"]))
    for algorithm in ("NGD", "Polyak"):
        holds, label, detail, _ = phase_probe.probe_rate(dict(good), algorithm)
        assert (holds, label) == (True, "fitted") and "-2.000" in detail and "looked" not in detail
    assert phase_probe.probe_rate(dict(good), "GD")[:2] == (False, "sublinear growth")


def test_probe_rate_looks_once_more_a_decade_later():
    """B.T1's quick seed-114 counterexample: from W0 = -0.01 Wbar_mm on exactly orthogonal tokens NGD starts on
    W_mm's line (1 - corr ~ 1e-31, below its C/t^2 asymptote), so 1 - corr rises until t ~ 300: the run's first
    window in its phase, [33, 337], sees it flat; the next decade of its clock, [337, 4000], decays as t^-2.  GD still
    fails (log t growth)."""
    from theorems.paper_b.fixed_head import phase_probe

    ds = runs.orthogonal_tokens(2, 3, rho=0.0, spread=0.0, extra_dims=1, seed=7)
    inst = dict(kind="orthogonal", n=2, T=3, d=ds.d, rho=0.0, extra_dims=1, spread=0.0, init=0.01,
                eta=1.9109529749704406, adversarial=True, data_seed=7, ds=ds, nu=float(data.assumptions(ds)["nu"]))
    run = phase_probe.probe_run(inst, "NGD")
    first = phase_probe.phase_window(run)
    assert [int(run.traj.steps[k]) for k in first] == [33, 337]
    assert phase_probe.rate_window(run, phase_probe._mask(run, first))[0] is False                     # flat on the first decade
    holds, label, detail, facts = phase_probe.probe_rate(inst, "NGD", run)
    assert (holds, label) == (True, "fitted") and "-2.000" in detail and "looked a decade later" in detail
    assert facts == run.facts and run.t == phase_probe.PHASE_CAP
    assert phase_probe.probe_rate(dict(inst), "GD")[:2] == (False, "sublinear growth")


def test_probe_records_do_not_depend_on_where_the_run_paused():
    """A probe run continued segment by segment records the same steps and iterates as one run of the same length
    (``phase_probe.probe_grid``), so its windows and decisions do not depend on the segments."""
    from theorems.paper_b.fixed_head import phase_probe

    ds = runs.orthogonal_tokens(3, 2, rho=0.0, extra_dims=1, seed=3)
    inst = dict(kind="orthogonal", n=3, T=2, d=ds.d, rho=0.0, extra_dims=1, spread=0.0, init=0.01, eta=0.3,
                adversarial=False, data_seed=3, ds=ds, nu=0.0)
    run = phase_probe.probe_run(inst, "NGD")
    while run.t < 1200:
        run.extend()
    whole = phase_probe.train_segment(ds, run.transform, run.W0, 0, 1200, phase_probe.probe_grid())
    assert torch.equal(run.traj.steps, whole.steps)
    assert torch.allclose(run.traj["W"], whole["W"], rtol=1e-12, atol=0)


def test_in_scope_family_sits_inside_ass1_at_its_level():
    """``inscope``: each data set at nu/(1 - 3 nu) = LEVEL x nu* (Ass 1 at eps = 1/4 and the pilot's
    largest step), every start inside Lemma 2's bound, every run inside the assumptions by its own record; the
    Example-1 suite's runs are outside our Ass 1."""
    from theorems.paper_b.fixed_head import example1_suite, inscope

    memo = Memo(Context(seed=0, budget="quick"))
    for kind, eta in (("ngd", 1.0), ("polyak", math.inf)):
        suite = memo.value(inscope.family(kind, eta, n_runs=4, n_steps=200))
        assert suite.adversarial.tolist() == [False, False, False, True]
        assert all(level.holds and level.lhs > 0 for level in suite.ass1)
        assert (runs.init_logit_bound(suite.W0, suite.ds) <= assumptions.EPS + 1e-12).all()
        run = memo.value(inscope.inscope_run.bind(suite=inscope.family(kind, eta, n_runs=4, n_steps=200), kind=kind, eta=eta,
                                            n_steps=200))
        assert all(r["inside"] for r in inscope.suite_scope(suite, run))
    ngd = memo.value(inscope.family("ngd", 1.0, n_runs=4, n_steps=200))
    ratio = [lv.lhs / assumptions.ass1(x, step=1.0, eps=assumptions.EPS).nu_star for x, lv in zip(ngd.datasets, ngd.ass1)]
    assert all(abs(r - inscope.INSCOPE_LEVEL) < 1e-3 for r in ratio)                     # NGD's step is eta exactly
    ex1 = example1_suite.example1_suite.bind(n_runs=4)
    assert not any(r["inside"] for r in inscope.suite_scope(memo.value(ex1), memo.value(example1_suite.NGD_RUN.bind(suite=ex1,
                                                                                                  n_steps=50))))


def test_record_scope_says_in_scope_only_when_every_run_is_inside():
    from theorems.claim import Context
    from theorems.evidence import Evidence
    from theorems.paper_b.fixed_head import inscope

    ev = Evidence(Context())
    assert inscope.record_scope(ev, 32, 32)["scope_evidence"] == "in scope"
    assert inscope.record_scope(ev, 31, 32)["scope_evidence"] == "31 of 32 runs inside"
    assert inscope.record_scope(ev, 0, 4)["scope_evidence"] == "0 of 4 runs inside"
    assert inscope.record_scope(ev, 0, 0)["scope_evidence"] == "0 of 0 runs inside"
    assert ev.lines[0].startswith("scope evidence: in scope (32 of 32 runs inside")
    assert ev.lines[1].startswith("scope evidence: not in scope, 31 of 32 runs inside")


def test_issue11_instance_is_not_decided_by_the_phase_rule():
    """Issue 11's B.T7 instance (Example 1, n = T = 2, d = 3, noise 3.0, data seed 139, W_0 = -1.78 Wbar_mm) under
    the uncapped Polyak step: its first step is ~1300 long and its norm grows only ~1.4-fold by the cap, so the
    probe's rule leaves it not decided; it lies outside Ass 1 and Lemma 2's init."""
    from theorems.paper_b.fixed_head import t7_polyak as T7

    r = T7.replay_counterexample()
    assert r["holds"] is None and r["label"] == "window not complete" and r["facts"]["step"] > 1000
    assert r["assumptions"] == {"Ass 1 (ν/(1−3ν) ≤ ν*)": False, "Ass 2 (equal non-opt scores)": True,
                                "small init (max|a(W₀)| ≤ 1/4)": False}


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


def _ngd_runs(p0, r0, N=500):
    """Exact NGD runs on the two-token example (p_t = p_0 + t, r constant) in the form ``two_token_runs`` returns."""
    import numpy as np

    from numerics import optim
    from numerics.paper_b import two_token

    steps = np.asarray(optim.log_spaced_steps(N, 30))
    p0, r0 = np.asarray(p0, float), np.asarray(r0, float)
    p = p0[None] + steps[:, None].astype(float)
    r = np.broadcast_to(r0, p.shape).copy()
    return dict(name="NGD", steps=steps, p=p, r=r, p0=p0, r0=r0, eta=1.0, N=N, om=two_token.one_minus_corr(p, r),
                W_norm=np.hypot(p, r))


def test_ngd_rate_is_an_equivalence_read_only_when_the_window_allowance_is_below_its_margin():
    """B.A4: the exponent's interval must lie inside -2 ± NGD_RATE_MARGIN (it excludes Theorem 1's -1); a window
    whose derived allowance reaches the margin (a start far along W_mm, |p_0| comparable with t_1) is inconclusive,
    not a pass or a fail; the decision records its margin and the alternative it excludes."""
    from theorems.paper_b import s33_two_token as S33

    ctx = Context()
    good = S33.check_ngd_rate(ctx, _ngd_runs([0.3, -0.5, 0.8, -0.2], [1.0, 0.7, 1.2, 0.9]))
    d = good.details["decisions"][0]
    assert good.status == "pass" and d["band"] == [-2.5, -1.5] and d["margin"] == 0.5 and "−1" in d["excludes"]
    short = S33.check_ngd_rate(ctx, _ngd_runs([20.0, 21.0, 19.0, 22.0], [1.0, 0.7, 1.2, 0.9]))
    assert short.status == "inconclusive" and "window allowance" in short.summary


def test_paper_b_equalities_exclude_a_named_alternative_at_half_its_distance():
    """Each paper-B equivalence margin is half the distance to the alternative it names (issue #30)."""
    from theorems.paper_b import s33_two_token as S33
    from theorems.paper_b.fixed_head import l6_example1_assumptions as L6
    from theorems.paper_b.fixed_head import rates
    from theorems.paper_b.joint import t2_joint_loss as T2
    from theorems.paper_b.vision import fig6_vit_digits as F6

    assert math.isclose(rates.SATURATION_MARGIN.half_width, abs(-1 - -0.5) / 2)        # slope -1 vs -1/2
    assert math.isclose(S33.STOLZ_MARGIN.half_width, abs(1 - 0.5) / 2)              # 2 eta/e vs eta/e
    assert math.isclose(S33.NGD_RATE_MARGIN.half_width, abs(-2 - -1) / 2)           # t^-2 vs Theorem 1's t^-1
    assert math.isclose(L6.RATE_MARGIN.half_width, abs(-0.5 - -1) / 2)              # d^-1/2 vs d^-1 (and d^0)
    assert math.isclose(F6.ADAM_MARGIN.half_width, math.log(2) / 2)                 # a factor 2 in loss
    laws = sorted({T2.loss_exponent(*p) for p in T2.SWEEP})
    assert math.isclose(T2.LAW_MARGIN.half_width, min(b - a for a, b in zip(laws, laws[1:])) / 2)


def test_fig9s_unnormalized_control_stays_unnormalized_at_a_maps_other_ngd_step():
    """At a map's NGD step η = 1 the control "NGD without normalization" still runs the unnormalized rule at that step
    (its runs were an Algorithm that the step's override replaced by a normalized NGD of the same name, so there the
    control compared NGD with GD and passed)."""
    from numerics.paper_b import algorithms as al
    from theorems.paper_b.fixed_head import fig9_digits as F
    from verify import registry, runner

    claim = registry.get("B.Fig9")
    unit = runner.setting_control_unit(claim, "NGD without normalization", {"NGD step η": 1.0})
    (req,) = runner.unit_requests(claim, unit).values()
    assert req.arguments("quick")["ngd_rule"] is al.gd and req.arguments("quick")["ngd_eta"] == 1.0
    assert F.RULE_NAMES[al.gd] == "NGD without normalization" and F.RULE_NAMES[al.ngd] == "NGD"


def test_fig9s_ngd_beats_gd_fails_on_a_tie():
    """Identical GD and "NGD" runs (the compared rule stepping as GD does) are a tie: "beats" fails, as it does when
    NGD is slower, and passes only when NGD's runs end closer."""
    from theorems.claim import Context
    from theorems.paper_b.fixed_head import fig9_digits as F

    def runs(ngd_factor):
        omc = torch.rand(3, 8, dtype=torch.float64, generator=torch.Generator().manual_seed(1)) + 0.1
        loss = omc.log()
        gd = {"one_minus_corr": omc, "log_excess_loss": loss}
        ngd = {"one_minus_corr": omc * ngd_factor, "log_excess_loss": loss + math.log(ngd_factor)}
        return F.DigitRuns([(None, {"GD": gd, "NGD": ngd})], 100, "NGD", "")

    ctx = Context(seed=0, budget="quick", figures=False)
    assert F.check_ngd_beats_gd(ctx, runs(1.0)).status == "fail"
    assert F.check_ngd_beats_gd(ctx, runs(0.5)).status == "pass"
    assert F.check_ngd_beats_gd(ctx, runs(2.0)).status == "fail"
