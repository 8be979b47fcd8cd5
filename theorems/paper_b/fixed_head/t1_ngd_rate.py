r"""B.T1 — implicit-bias rate of normalized GD (Vasudeva, Deora, Thrampoulidis; Theorem 1).

Statement (our reconstruction: qualitative; exponent reconstructed).  Under Ass. 1-2, from any initial direction with a
small initial norm, NGD ``W_{t+1} = W_t - eta grad L / ||grad L||`` on the fixed-head model satisfies, for
``t >= t_0``,

    1 - <Wbar_t, Wbar_mm> <= C polylog(t) / t        (equivalently ||Wbar_t - Wbar_mm|| = O~(t^{-1/2})).

The source text lost the formula; our reconstruction rebuilds the exponent from the proof's structure (norm ~ eta t, the
Lemma-7 slack eps_t ~ log t / t summed over t) and a third-party summary quoting O(t^{-1/2}).

How the envelope is decided (ours).  ``1 - corr`` is fitted as a power of t over a late window
``[t_1, t_2] = [N/10, N]`` of ``N = example1_suite.ENVELOPE_STEPS`` steps (3000 / 8000 / 20000): per run, the
least-squares slope of ``log U`` (U: the upper envelope of ``1 - corr``) on ``log t``.  A polylog factor
``log^k t`` changes a local log-log slope by ``k / log t``; averaged over the window its contribution is
``s_k = k (log log t_2 - log log t_1) / (log t_2 - log t_1)``.  We allow ``k = 2`` (the proof's ``eps_t``
summation gives at most ``log^2``), so the claimed envelope means: window exponent ``<= -1 + s_2``, the
**effective bound** every line and headline prints (-0.71 at the quick window [300, 3000], -0.74 at standard, -0.77
at full).  With the interval ``[lo, hi]`` of the mean exponent over iid runs (random data set and random initial
direction, z at the Bonferroni-split alpha):

    fail  if lo > -1 + s_2        (decays slower than any C log^2 t / t: the envelope is violated)
    pass  if hi <= -1 + s_2, the interval is narrower than 0.25 and s_2 <= 0.3
    inconclusive otherwise;

and, exactly, every run's own exponent must be <= -1 + s_2 (the claim is per run, "from any direction").
Treating the degree k in [0, 2] as a nuisance of the fit ``log(1 - corr) = a + b log t + k log log t`` gives the
same rule (the claim's best case is k = 2, which moves b by the LS slope of log log t on log t); the rule is only
as sharp as the window is late, hence the cap s_2 <= 0.3 (``MAX_ALLOWANCE``: above it the effective bound is
above -0.7 and t^{-2/3} would pass, as t^{-0.65} does at a window [50, 500], effective bound -0.60).

Why per-run slopes and not one WLS fit of the mean curve: every run contributes to every time point, so
the errors of a mean curve are perfectly correlated across t and a WLS fit treating them as independent
(``stats.loglog_slope``) mis-states the interval (its reduced chi^2 comes out ~1e-4).  Runs are iid, so
the mean of per-run slopes with its standard error is the honest interval; the mean-curve fit is reported
alongside.

What we find: the exponent is about -2 (1 - corr ~ log^2 t / t^2 on small instances, -2 exactly once the
residual orthogonal to W_mm stops growing), well inside the envelope: Theorem 1's rate is not tight,
as Appendix A.4 (B.A4) says for the two-token example.

Oscillations.  Once saturated, NGD with a large step can zigzag with period 2 between support samples
(found by the standard-tier probe at n = T = 2, eta = 1.8); the claim bounds 1 - corr for all t >= t_0,
so every fit uses the upper envelope ``U_t = max_{s >= t} (1 - corr_s)`` over recorded steps, and the
records include each log-spaced step's successor so both phases are seen (``rates``).

Instances (ours; the source text's constants are lost).  The rate check and global convergence run inside the
assumptions as we reconstruct them: the in-scope family of ``inscope`` (n = 4, T = 3, d = 14: exactly orthonormal
noise tokens perturbed until each data set sits at half our Ass 1's level, nu/(1 - 3 nu) = nu*/2 at NGD's step,
nu ~ 3e-4; Example 1's scores, so Ass 2 holds; ``||W_0|| = 1/(4 R^2)``, Lemma 2's small init in every direction;
three quarters of the runs in a uniformly random direction, one quarter along the adversarial ``-Wbar_mm``, which
violates every W-SVM constraint); eta = 1.  Each run's scope is read off its own record (Ass 1 at its initial
logit bound and largest step) and recorded (``scope_evidence``: "in scope" only when every run is inside).  On the
paper's own Example 1 (the Example-1 suite of ``example1_suite``: n = 4, T = 3, d = 16, gamma_opt = 1,
gamma_other = 0, ``||W_0|| = 0.5``), whose runs lie outside our Ass 1 (B.L3's sufficient nu/(1 - 3 nu) <= nu*,
defined once in ``assumptions``: nu ~ 0.4 against nu* ~ 1e-3), the same rule on the same NGD runs is
B.Fig2's check "rates-follow-theory" (the paper's Figure 2; there the exponent is -1.99 [-2.02, -1.96] at quick
seed 0).  The envelope rule and the probe's instances are in
``rates`` and ``phase_probe`` (B.T7 and B.Fig2 decide with the same rule).

Evidence: (1) the rate rule above on NGD, inside the assumptions; (2) global convergence: every
run inside the assumptions, adversarial starts included, ends with ``1 - corr < 1e-3``; (3) a probe over the token
geometry (nu on both sides of nu*: orthogonal tokens + rho, or Example 1), the non-opt score spread (Ass 2), the
init norm (Lemma 2's eps = 1/4) and the step size, each on both sides, classified with the suite's single
definitions; each run is continued until a rule fixed in advance places a window in its asymptotic phase (a decade
of its own clock: ``phase_probe.decide_in_phase``), and its conclusion reads the rate in the run's own clock
``||W_t|| / v`` plus linear norm growth there (``phase_probe.probe_rate``: a local exponent in t mistakes a time
offset for a slow rate); an instance it cannot decide (infeasible W-SVM, no complete phase window by the cap, 1 -
corr at solver precision) is "not decided", and at least ``MIN_DECIDED`` in-assumption instances must be decided.

Negative controls (each re-runs its check with another run or reference in place of the right one; those of the
rate check run on the in-scope family): GD (constant step) in place of NGD
(1 - corr decays like 1/log^2 t; B.S33); a wrong W_mm (W-SVM with its most-loaded constraint dropped); NGD on
the linear-domain autograd gradient for the same horizon: once s_opt rounds to 1 (logit gap >~ 37) the opt
token's term s_o (gamma_o - m) cancels to 0, the direction is wrong and the alignment degrades (1 - corr grows
back to ~0.5; NaN only later, when every non-opt score underflows at gap >~ 745), so the upper envelope of
1 - corr stops decreasing; global convergence against the wrong W_mm; GD in place of NGD in the probe (its norm
grows like log t, not linearly: the probe must meet a counterexample).  (A claimed exponent <= -3 would be a
rescaled claim, not a mutant of the mathematics.)
"""
from __future__ import annotations

import sympy as sp
import torch

from numerics import optim
from numerics.paper_b import algorithms as A
from numerics.paper_b import data, records
from theorems.claim import Check, Claim, Context, Control, Outcome
from theorems.evidence import Evidence
from theorems.fixture import fixture
from theorems.paper_b.fixed_head.choices import envelope_horizon_choice, n_choice, phase_norm_choice, step_choice
from theorems.paper_b.fixed_head.example1_suite import (ENVELOPE, ETA, Suite, SuiteRun, example1_suite, record_at,
                                                        suite_wrong_w_mm)
from theorems.paper_b.fixed_head.inscope import FAMILY_SCOPE, family_run, rate_inputs, record_scope, suite_scope
from theorems.paper_b.fixed_head.phase_probe import ASSUMPTIONS, PHASE_NORM, PROBE, probe_rate
from theorems.paper_b.fixed_head.rates import POLYLOG_K, check_envelope, one_minus_corr
from theorems.probe import probe
from theorems.symbolic import Derivation

ID = "B.T1"

STATEMENT = (
    r"1-\langle\bar W_t,\bar W_{mm}\rangle\le C\,\frac{\mathrm{polylog}(t)}{t}\quad(t\ge t_0),"
    r"\qquad W_{t+1}=W_t-\eta\,\frac{\nabla L(W_t)}{\|\nabla L(W_t)\|}"
)

CONVERGED = 1e-3  # 1 - corr at t = N below which a run counts as aligned (NGD reaches ~1e-4 by t = 500)
#: the rate's runs inside the assumptions: NGD at eta on the in-scope family (inscope), over the envelope's
#: horizon; global convergence reads the same runs at t = N
RATE = rate_inputs("ngd", ETA, ENVELOPE)
GD_IN_SCOPE = family_run("gd", ETA, ENVELOPE)   # the control's: GD on the same data and starts


# ---------------------------------------------------------------------------
# 1. Numeric checks: the rate and global convergence
# ---------------------------------------------------------------------------
# The rate check is ``rates.check_envelope``: the rule of the docstring on the suite's runs of an algorithm
# (B.T7 runs it on the Polyak step); its controls pass another run (GD, the autograd NGD) or the wrong W_mm.


@fixture(uses={"suite": example1_suite})
def autograd_ngd_run(ctx, suite: Suite, n_steps=ENVELOPE) -> SuiteRun:
    """NGD on float64 autograd of the linear-domain loss (a control), the suite's first four runs only (it is slow,
    and it breaks the same way on every run): once s_opt rounds to 1 the opt token's gradient term cancels."""
    ds = data.Dataset(suite.ds.X[:4], suite.ds.y[:4], u=suite.ds.u[:4])
    traj = optim.run((suite.W0[:4],), A.objective_autograd(ds), A.ngd(ETA), n_steps,
                     record=records.recorder(ds, ["W"]), record_at=record_at(suite, n_steps))
    return SuiteRun("NGD (autograd)", None, n_steps, traj)


def check_global(ctx: Context, suite: Suite, run: SuiteRun, W_mm: torch.Tensor) -> Outcome:
    """Every run of NGD ends aligned with ``W_mm`` (deterministic given the runs; control: a wrong W_mm); the record
    says whether the runs lie inside the assumptions (``inscope.record_scope``)."""
    s, traj = suite, run.traj
    final = one_minus_corr(traj["W"], W_mm).numpy()[-1]
    ok = final < CONVERGED
    k, B = int(ok.sum()), len(ok)
    ev = Evidence(ctx)
    ev.exact("runs aligned at t = N (1 − corr < 1e-3)", k == B,
             f"{k}/{B} runs aligned with W_mm at t = {run.n_steps} (max 1 − corr {final.max():.2e}; "
             f"{int(s.adversarial.sum())} started along −W̄mm)", value=k / B, claimed="all")
    ev.measure("largest final 1 − corr", float(final.max()), claimed=f"< {CONVERGED:g}")
    ev.measure("largest final 1 − corr, adversarial inits", float(final[s.adversarial.numpy()].max()))
    where = record_scope(ev, sum(r["inside"] for r in suite_scope(s, run)), B)
    return ev.outcome(final_one_minus_corr=final.tolist(), **where)


# ---------------------------------------------------------------------------
# 2. Symbolic: the rate from the recursion of Theorem 1's proof (our reconstruction)
# ---------------------------------------------------------------------------
#
# The proof's words: NGD's norm grows like eta t (Lemma 5), Lemma 7's eq. (4) holds with a slack eps_t that shrinks
# as the norm grows, and the slack is summed over t.  The recursion (ours, in those words): with n_t = ||W_t||,
# p_t = <W_t, Wbar_mm> and d_t = -grad L / ||grad L||,
#     p_{t+1} - p_t = eta <d_t, Wbar_mm> >= (1 - eps_t) eta <d_t, Wbar_t>                      (eq. (4))
#     n_{t+1} <= n_t + eta <d_t, Wbar_t> + eta^2 / (2 n_t)                                      (one unit step)
# so n_t - p_t <= n_0 - p_0 + sum_s (eps_s (n_{s+1} - n_s) + eta^2 / (2 n_s)) and 1 - corr_t = (n_t - p_t) / n_t.
# With n_s >= c eta s (Lemma 5) and eps_s = kappa log s / s (the slack at norm ~ eta s; its law is lost with the
# proof's constants, log s / s is how our reconstruction's O~(t^{-1/2}) reads), the sums grow like
# kappa eta log^2 t / 2 and (eta / 2c) log t: 1 - corr_t <= C log^2 t / t.  The rate rule's allowance s_2
# (``rates.polylog_allowance``) is the window average of that envelope's local exponent.


def derivation(polylog_degree: int = POLYLOG_K) -> Outcome:
    """The envelope's exponent and polylog degree from the recursion (block comment above); ``polylog_degree``: the
    degree claimed for the envelope C log^k t / t (the rate rule's ``rates.POLYLOG_K``; control: 1)."""
    D = Derivation()
    n, eta = sp.Symbol("n", positive=True), sp.Symbol("eta", positive=True)
    x = sp.Symbol("x", real=True)
    D.prove_equal("one NGD step (‖d‖ = 1, x = ⟨d, W̄⟩): (n + ηx + η²/(2n))² − ‖W + ηd‖² = (ηx + η²/(2n))² ≥ 0 with "
                  "‖W + ηd‖² = n² + 2nηx + η², so ‖W_{t+1}‖ ≤ ‖W_t‖ + η⟨d, W̄_t⟩ + η²/(2‖W_t‖)",
                  (n + eta * x + eta**2 / (2 * n)) ** 2 - (n**2 + 2 * n * eta * x + eta**2),
                  (eta * x + eta**2 / (2 * n)) ** 2)
    steps = 3
    dn = sp.symbols(f"Delta_n1:{steps + 1}", real=True)
    ep = sp.symbols(f"epsilon1:{steps + 1}", nonnegative=True)
    qs = sp.symbols(f"q1:{steps + 1}", positive=True)
    n0, p0 = sp.symbols("n_0 p_0", real=True)
    # eq. (4) and the step bound give Delta p_s >= (1 - eps_s)(Delta n_s - q_s), q_s = eta^2 / (2 n_s): the lower
    # bound on p_t telescopes into an upper bound on n_t - p_t
    gap = (n0 + sum(dn)) - (p0 + sum((1 - e) * (d - qq) for e, d, qq in zip(ep, dn, qs)))
    D.prove_equal("with eq. (4), Δp_s ≥ (1 − ε_s)(Δn_s − q_s) (q_s = η²/(2n_s)); telescoped over t = 3 steps: "
                  "n_t − p_t ≤ n₀ − p₀ + Σ_s (ε_s Δn_s + (1 − ε_s) q_s)", gap,
                  n0 - p0 + sum(e * d + (1 - e) * qq for e, d, qq in zip(ep, dn, qs)))
    t, u = sp.Symbol("t", positive=True), sp.Symbol("u", positive=True)
    c, kappa, C0 = sp.Symbol("c", positive=True), sp.Symbol("kappa", positive=True), sp.Symbol("C_0", positive=True)
    slack_int = sp.Integral(kappa * eta * sp.log(u) / u, (u, 1, t))
    norm_int = sp.Integral(eta**2 / (2 * c * eta * u), (u, 1, t))
    slack_sum, norm_sum = slack_int.doit(), norm_int.doit()
    D.prove_equal("with Δn_s ≤ η and ε_s = κ log s / s (the slack at norm ~ ηs): Σ_s ε_s Δn_s ≲ ∫₁ᵗ κη log u/u du "
                  "= κη log²t/2", slack_sum, kappa * eta * sp.log(t) ** 2 / 2,
                  shown=sp.Eq(slack_int, kappa * eta * sp.log(t) ** 2 / 2, evaluate=False))
    D.prove_equal("with n_s ≥ cηs (Lemma 5): Σ_s q_s ≲ ∫₁ᵗ η²/(2cηu) du = (η/2c) log t", norm_sum,
                  eta * sp.log(t) / (2 * c), shown=sp.Eq(norm_int, eta * sp.log(t) / (2 * c), evaluate=False))
    bound = (C0 + slack_sum + norm_sum) / (c * eta * t)
    k = polylog_degree
    D.prove_equal(f"1 − corr_t = (n_t − p_t)/n_t ≤ (C₀ + κη log²t/2 + (η/2c) log t)/(cηt): over log^{k}t/t it tends to "
                  f"κ/(2c), a finite positive constant: the envelope C log^{k} t/t"
                  + ("" if k == POLYLOG_K else " [control: wrong polylog degree]"),
                  sp.limit(bound / (sp.log(t) ** k / t), t, sp.oo), kappa / (2 * c),
                  shown=sp.Eq(sp.Limit(sp.Function("B")(t) * t / sp.log(t) ** k, t, sp.oo), kappa / (2 * c),
                              evaluate=False))
    slope = sp.diff(sp.log(sp.log(t) ** k / t), t) * t
    D.prove_equal(f"the envelope's local exponent d log(log^{k}t/t)/d log t = −1 + {k}/log t → −1: the statement's "
                  "t⁻¹ up to the polylog", sp.limit(slope, t, sp.oo), -1,
                  shown=sp.Eq(sp.Limit(sp.Derivative(sp.log(sp.log(t) ** k / t), t) * t, t, sp.oo), -1,
                              evaluate=False))
    t1, t2 = sp.Symbol("t_1", positive=True), sp.Symbol("t_2", positive=True)
    lt = sp.Symbol("ell", positive=True)                 # ell = log t
    avg_int = sp.Integral(sp.simplify(slope.subs(t, sp.exp(lt))) + 1, (lt, sp.log(t1), sp.log(t2)))
    rule = POLYLOG_K * (sp.log(sp.log(t2)) - sp.log(sp.log(t1))) / (sp.log(t2) - sp.log(t1))
    D.prove_equal(f"averaged over the window log t ∈ [log t₁, log t₂] the polylog adds s_{k} = {k}(log log t₂ − log "
                  f"log t₁)/(log t₂ − log t₁) to −1: the rate rule's effective bound −1 + s_{POLYLOG_K} "
                  "(rates.polylog_allowance)", sp.expand_log(avg_int.doit() / (sp.log(t2) - sp.log(t1)), force=True),
                  sp.expand_log(rule, force=True),
                  shown=sp.Eq(avg_int / (sp.log(t2) - sp.log(t1)), rule, evaluate=False))
    return D.outcome("Theorem 1's envelope C log²t/t from the proof's recursion")


# ---------------------------------------------------------------------------
# 3. Probe: the assumptions drawn on both sides (instances in phase_probe)
# ---------------------------------------------------------------------------


def probe_conclusion(inst, alpha_each, algorithm: str = "NGD", phase_norm: float = PHASE_NORM):
    """B.T1's envelope on the instance's run, in the run's own clock plus linear norm growth, on its window in its
    asymptotic phase (``phase_probe.probe_rate``; its facts: the run's initial logit bound and largest step);
    ``algorithm="GD"``: GD in place of NGD (control); ``phase_norm``: the phase rule's norm factor."""
    return probe_rate(inst, algorithm, phase_norm=phase_norm)


# ---------------------------------------------------------------------------
# 4. The claim
# ---------------------------------------------------------------------------

CLAIM = Claim(
    id=ID,
    title="NGD implicit-bias rate 1 − ⟨W̄ₜ, W̄mm⟩ ≤ C polylog(t)/t, from any direction",
    statement=STATEMENT,
    fidelity="qualitative",
    fidelity_note=("The source text keeps the words (global, finite-time, rate for NGD) but lost the formula; the "
                   "exponent (−1 up to polylog in 1 − corr, i.e. Õ(t^{-1/2}) in ‖W̄ₜ − W̄mm‖) is our reconstruction. "
                   "The polylog degree k = 2 we allow is ours; over the window [N/10, N] it makes the effective bound "
                   "−1 + s₂ (−0.71 at quick, −0.74 standard), and a window with s₂ > 0.3 is not decided. Ass 1 is the "
                   "suite's single definition (B.L3's sufficient ν/(1−3ν) ≤ ν*, fixed_head_assumptions), small init is "
                   "Lemma 2's max|a(W₀)| ≤ 1/4: the rate check runs inside them (near-orthogonal tokens at half Ass "
                   "1's level, ν ≈ 3e-4); on the paper's Example 1 (ν ≈ 0.4, outside Ass 1) the same rule is B.Fig2's "
                   "rates-follow-theory. Measured: exponent ≈ −2 (the envelope holds with room; Theorem 1 is not "
                   "tight, cf. B.A4)."),
    findings=(
        "The envelope holds with room to spare: NGD's rate is t⁻² (also in the two-token closed form, B.A4), not t⁻¹,"
        " consistent with A.4's remark that Theorem 1's rate may not be tight.",
        "With a large step on exactly orthogonal tokens (inside Ass 1 at any step) NGD zigzags and its norm grows at a steady fraction of η per step (0.46 at η = 19-32, 0.76 at η = 5, 1.0 at η = 1; n = 5, T = 3), still Θ(t) with c_t → 1 and 1 − corr ~ t⁻²: a probe conclusion asking growth ≥ η/2 (a constant of ours, not the paper's) counts such instances as counterexamples (quick seed 4), so the probe tests linear growth scale-free (fixed_head_rates.linear_growth).",
        "From W₀ = −0.003 W̄mm on orthogonal tokens perturbed by ρ = 1e-8 (n = 2, T = 3, η = 1.89), NGD is aligned to "
        "1e-18 within 10 steps, then 1 − corr rises to 1e-7 at t ≈ 300 and only then decays as t⁻² (6e-9 at t = 1150, "
        "2e-11 at t = 20000): "
        "the probe's fixed window [60, 300] sees the rise and reports as a counterexample a transient before t₀ ≈ 300, "
        "which the envelope's unknown t₀ allows (standard seed 3; the same shape at quick seeds 113 and 114, where "
        "the run starts exactly on W_mm's line, 1 − corr ~ 1e-31, below its C/t² asymptote). The probe now decides "
        "each run on a window in its own asymptotic phase (a decade of its clock ‖W_t‖, fixed_head_rates."
        "decide_in_phase) and a run that fails there once more a decade later: on the quick-seed-114 instance the "
        "first window [33, 337] is flat and the next, [337, 4000], decays as t⁻².",
    ),
    assumptions=ASSUMPTIONS + (FAMILY_SCOPE,),
    checks=(
        Check("derivation", "symbolic", "The recursion of Theorem 1's proof (a unit step, eq. (4) with slack ε_t, Lemma "
              "5's growth) solved: 1 − corr ≤ C log²t/t, exponent −1, and the window allowance s₂ of the rate rule",
              derivation),
        Check("rate", "numeric", "Exponent of 1 − corr in t over a late window, mean over iid runs inside the "
              "assumptions (near-orthogonal tokens at half Ass 1's level, Lemma 2's small init, random and adversarial "
              "initial directions), against −1 + polylog allowance", check_envelope, uses=RATE),
        Check("global-convergence", "numeric", "Every run inside the assumptions, including W₀ ∝ −W̄mm, aligns with "
              "W_mm", check_global, uses=RATE),
        probe("Hypothesis over token geometry (ν vs ν*), non-opt score spread (Ass 2), init (Lemma "
              "2's ε) and step size on both sides of their assumptions; conclusion: linear norm growth and envelope "
              "exponent ≤ −1 + s₂ in the run's own clock ‖W_t‖/v, on its window in its asymptotic phase", PROBE,
              conclusion=probe_conclusion),
    ),
    controls=(
        Control("symbolic: polylog degree 1", "derivation", "the envelope C log t/t: the summed slack κη log²t/2 "
                "leaves it (the limit is ∞)", {"polylog_degree": 1}),
        Control("GD in place of NGD", "rate", "constant-step GD: 1 − corr ~ 1/log²t (B.S33), must violate the envelope",
                {"run": GD_IN_SCOPE}),
        Control("wrong W_mm", "rate", "alignment measured against the W-SVM with its most-loaded constraint dropped",
                {"W_mm": suite_wrong_w_mm.bind(suite=RATE["suite"])}),
        Control("linear-domain gradient", "rate", "NGD on float64 autograd of the loss: once s_opt rounds to 1 "
                "the opt token's gradient term cancels, the direction is wrong and the alignment degrades",
                {"run": autograd_ngd_run.bind(suite=RATE["suite"])}),
        Control("wrong W_mm (global)", "global-convergence", "alignment against the W-SVM with a dropped constraint",
                {"W_mm": suite_wrong_w_mm.bind(suite=RATE["suite"])}),
        Control("probe: GD in place of NGD", "probe", "constant-step GD on the probe's instances: ‖W_t‖ ~ log t "
                "(B.S33), so the linear-growth part of the conclusion must fail", {"mutant": {"algorithm": "GD"}}),
    ),
    free_choices=(
        step_choice("the paper's NGD step is lost; NGD's direction depends on η only through its clock ηt and its "
                    "early steps: 0.2-5 spans the probe's own range [0.2, 2] and a step 5x the unit",
                    {"rate": lambda v: rate_inputs("ngd", v, ENVELOPE),
                     "global-convergence": lambda v: rate_inputs("ngd", v, ENVELOPE)}),
        envelope_horizon_choice(RATE["run"], ("rate", "global-convergence")),
        n_choice({"rate": lambda v: rate_inputs("ngd", ETA, ENVELOPE, n=v),
                  "global-convergence": lambda v: rate_inputs("ngd", ETA, ENVELOPE, n=v)}),
        phase_norm_choice(),
    ),
)
