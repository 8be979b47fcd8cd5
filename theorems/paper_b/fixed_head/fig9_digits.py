r"""B.Fig9 — Figure 9 (Appendix C.2): binary digits; W aligns with W_mm and NGD beats GD.

Source text: "each input consists of multiple patches, one patch containing either a 0 or 1 digit (the 'signal' patch)
and the remaining patches containing Gaussian noise ... a fixed linear classifier (pre-trained on 0/1
classification) ... (1) the self-attention parameters converge in direction to W_mm, and (2) normalized gradient
descent achieves faster convergence than standard gradient descent."  MNIST is replaced by sklearn's bundled
8x8 digits (``numerics.paper_b.data.digits``: d = 64, head = logistic regression on the centred 0/1 images
rescaled to mean margin 1; the signal patch is the opt token; the noise patches' scores differ slightly, so
Ass 2 holds only approximately, as the source text says).

Constants (ours; also in ``details["constants"]``): n = 16 sequences, T = 4 patches, noise 0.1, W_0 at Lemma 2's
scale (B.L2), GD eta = 1, NGD eta = 0.1, horizon 300 (quick) steps.

Checks.  alignment: every GD and NGD run ends with 1 - <Wbar_T, Wbar_mm> <= 0.05 (from ~1 at the random init), still
decreasing (below its value at T/2).  NGD beats GD: over the runs (digit draws x inits), the paired log ratios
log((1-corr)_GD / (1-corr)_NGD) and log((L - L*)_GD / (L - L*)_NGD) at the horizon have a mean whose lower
confidence bound is > 0 (z-interval, Bonferroni over the two decisions).  The runs are a fixture
(:func:`digit_runs`) both checks read.  Negative controls (each passes other runs): alignment recorded against a W_mm
solved with one sample's constraints dropped (alignment); NGD's step without its normalization 1/||grad L|| (i.e. GD
at NGD's eta = 0.1; comparison).  Free choices (decided over their ranges by ``verify sensitivity``): NGD's step
(0.01-1), the alignment threshold (0.01-0.2), the noise level (0.03-0.3) and the horizon (0.5-4 times the budget's).  (The comparison's control is a mutant of NGD's
step, not the claim reversed on the same runs, which would test the check against itself.)
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from numerics.paper_b import algorithms as al
from numerics.paper_b import data, runs, svm
from numerics.stats import decide_lower, mean_se
from theorems.claim import Check, Claim, Context, Control, FreeChoice, Outcome
from theorems.evidence import Evidence
from theorems.fixture import fixture
from theorems.paper_b.fixed_head.assumptions import sigma0
from theorems.paper_b.fixed_head.bank import most_loaded_sample_dropped
from theorems.plots import new_figure

ID = "B.Fig9"
STATEMENT = (
    r"\text{digits: }1-\langle\bar W_t,\bar W_{mm}\rangle\to0\ \text{(GD, NGD)},\quad "
    r"\big(1-\langle\bar W_T,\bar W_{mm}\rangle\big)_{NGD}<\big(\cdot\big)_{GD},\ (L-L^*)_{NGD}<(L-L^*)_{GD}"
)
#: the figure's constants (ours; the source text's are lost): sequences, patches, noise level, step sizes, init, and the
#: alignment thresholds 1 - corr <= 0.05 at the horizon for both algorithms
CONSTANTS = dict(n=16, T=4, noise=0.1, gd_eta=1.0, ngd_eta=0.1, init="Lemma 2 scale (B.L2, eps=1/4, delta=0.05)",
                 ngd_tol=0.05, gd_tol=0.05)
RECORD_POINTS = 40  # log-spaced record steps (plus the middle)
#: "NGD beats GD" is a sign: the paired log ratios' mean must have its lower confidence bound above 0 (a wide
#: interval whose lower end is above 0 still says which is faster); no width rule on top
MAX_WIDTH = math.inf
#: "beats" is strict: a paired log ratio of exactly 0 (the compared rule stepping as GD does) is a tie, not a win
STRICT = 1e-12
DRAWS = (1, 4, 6)  # digit draws (datasets) at quick / standard / full
INITS = (4, 6, 12)  # Lemma-2 inits per draw (paired: GD and NGD start from the same W_0)
STEPS = (300, 1000, 3000)  # horizon at quick / standard / full


#: the compared rule by its step: the figure's NGD, and the comparison's control, NGD's step eta grad L without its
#: normalization 1/||grad L|| (GD at NGD's eta); a rule, not a run, so that a map's other NGD step keeps the mutant
RULE_NAMES = {al.ngd: "NGD", al.gd: "NGD without normalization"}


def w_svm_solution(ds, r: svm.SVMResult) -> svm.SVMResult:
    """The W-SVM solution itself: the W_mm the runs' alignment is recorded against."""
    return r


@dataclass(eq=False)
class DigitRuns:
    """Per digit draw (dataset, {"GD": trajectory, "NGD": trajectory}), the horizon, the name of the "NGD" runs'
    algorithm, and what the alignment is recorded against ("" for the W-SVM solution)."""

    runs: list
    steps: int
    fast: str
    reference: str


@fixture
def digit_runs(ctx, reference=w_svm_solution, ngd_rule=al.ngd, ngd_eta: float = CONSTANTS["ngd_eta"],
               noise: float = CONSTANTS["noise"], horizon: float = 1.0) -> DigitRuns:
    """GD and ``ngd_rule(ngd_eta)`` from the same Lemma-2 inits on each digit draw, alignment recorded against
    ``reference(ds, W-SVM result)`` (the controls: the dropped-constraint W_mm; ``ngd_rule`` = ``al.gd``, NGD without
    its normalization).  The free choices' other values: ``ngd_eta`` the compared rule's step, ``noise`` the noise
    patches' level, ``horizon`` times the budget's horizon."""
    k, B, steps = ctx.pick(*DRAWS), ctx.pick(*INITS), int(round(horizon * ctx.pick(*STEPS)))
    ngd = al.Algorithm(RULE_NAMES[ngd_rule], ngd_rule(ngd_eta))
    gen = ctx.generator(ID, "runs")
    at = runs.log_spaced_and_half(steps, RECORD_POINTS)
    out = []
    for s in range(k):
        ds = data.digits(n=CONSTANTS["n"], T=CONSTANTS["T"], noise=noise, seed=s)
        r = reference(ds, svm.w_svm(ds))
        W0 = runs.gaussian_init(B, ds.d, sigma0(ds), gen)
        trs = {name: runs.run_recorded(ds, alg, W0, steps, r.solution, values=True, record_at=at)
               for name, alg in (("GD", al.gd(CONSTANTS["gd_eta"])), ("NGD", ngd.transform))}
        out.append((ds, trs))
    return DigitRuns(out, steps, ngd.name,
                     "" if reference is w_svm_solution else " (dropped-constraint W_mm)")


#: the alignment's control: the runs recorded against the W-SVM without the constraints of the sample that carries
#: the most dual mass (a wrong W_mm)
DROPPED_REFERENCE_RUNS = digit_runs.bind(reference=most_loaded_sample_dropped)


def runs_at(ngd_eta: float = CONSTANTS["ngd_eta"], noise: float = CONSTANTS["noise"], horizon: float = 1.0):
    """The figure's runs at other values of the free choices (the claim's own request at its values)."""
    params = {k: v for k, v, own in (("ngd_eta", ngd_eta, CONSTANTS["ngd_eta"]), ("noise", noise, CONSTANTS["noise"]),
                                     ("horizon", horizon, 1.0)) if v != own}
    return digit_runs.bind(**params) if params else digit_runs


def _runs_choice(key: str) -> dict:
    """Free choice ``key`` (a parameter of :func:`runs_at`) on both checks' runs."""
    return {c: (lambda v: {"digits": runs_at(**{key: v})}) for c in ("alignment", "ngd-beats-gd")}


def _plot(all_runs, title):
    fig, ax = new_figure()
    ax2 = ax.twinx()
    for _, trs in all_runs:
        for name, col in (("GD", "tab:blue"), ("NGD", "tab:orange")):
            tr = trs[name]
            ax.plot(tr.steps.numpy(), tr["one_minus_corr"].numpy(), color=col, lw=0.6, alpha=0.6)
            ax2.plot(tr.steps.numpy(), tr["log_excess_loss"].numpy(), color=col, lw=0.6, alpha=0.4, ls=":")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("step t")
    ax.set_ylabel("1 − ⟨W̄_t, W̄_mm⟩ (solid)")
    ax2.set_ylabel("log(L − L*) (dotted)")
    ax.set_title(title)
    return fig


def check_alignment(ctx: Context, digits: DigitRuns, tol: float = CONSTANTS["gd_tol"]) -> Outcome:
    """Every run ends with 1 - corr <= tol, below its value at T/2 (control: runs recorded against a wrong W_mm);
    ``tol``: the threshold of both algorithms (CONSTANTS' gd_tol = ngd_tol; a free choice)."""
    all_runs, steps = digits.runs, digits.steps
    tols = {"GD": tol, "NGD": tol}
    worst, bad = {}, 0
    for _, trs in all_runs:
        for name, tol in tols.items():
            omc = trs[name]["one_minus_corr"]
            ok = (omc[-1] <= tol) & (omc[-1] < omc[runs.half_index(trs[name])])
            bad += int((~ok).sum())
            worst[name] = max(worst.get(name, 0.0), float(omc[-1].nan_to_num(math.inf).max()))
    ev = Evidence(ctx)
    ev.exact("runs not aligned", bad == 0, f"{bad} runs not aligned; worst final 1−corr: "
             f"GD {worst['GD']:.3g} (≤ {tols['GD']}), NGD {worst['NGD']:.3g} (≤ {tols['NGD']}) after {steps} steps")
    ev.measure("worst final 1 − corr, NGD", worst["NGD"], claimed=f"≤ {tols['NGD']}")
    ev.measure("worst final 1 − corr, GD", worst["GD"], claimed=f"≤ {tols['GD']}")
    if ev.plots:
        ev.figure("Figure 9: alignment with W_mm and loss on binary digits",
                  _plot(all_runs, "digits: GD blue, NGD orange" + digits.reference),
                  "Every run (digit draw × init) for GD and NGD.")
    return ev.outcome(constants=dict(CONSTANTS, steps=steps, draws=len(all_runs)))


def check_ngd_beats_gd(ctx: Context, digits: DigitRuns) -> Outcome:
    """Paired log ratios (GD over NGD) of 1 - corr and of L - L* at the horizon have a positive mean (control: the
    "NGD" runs take NGD's step without the normalization 1/||grad L||)."""
    all_runs, steps = digits.runs, digits.steps
    fast, slow = digits.fast, "GD"
    d_corr = np.concatenate([(trs["GD"]["one_minus_corr"][-1].log() - trs["NGD"]["one_minus_corr"][-1].log()).numpy()
                             for _, trs in all_runs])
    d_loss = np.concatenate([(trs["GD"]["log_excess_loss"][-1] - trs["NGD"]["log_excess_loss"][-1]).numpy()
                             for _, trs in all_runs])
    ev = Evidence(ctx, decisions=2)
    ev.say(f"{len(d_corr)} paired runs, {steps} steps")
    for label, dvals in (("log((1−corr)_slow/(1−corr)_fast)", d_corr), ("log((L−L*)_slow/(L−L*)_fast)", d_loss)):
        m, se = mean_se(dvals)
        name = label.replace("slow", slow).replace("fast", fast)
        d = decide_lower(m - ev.z * se, m + ev.z * se, STRICT, max_width=MAX_WIDTH)
        ev.decide(name + " at the horizon (mean over runs)", d, value=m,
                  line=f"{name} = {m:.3g} [{d.lo:.3g}, {d.hi:.3g}] [{d.status}]")
    if ev.plots:
        ev.figure("NGD vs GD on binary digits", _plot(all_runs, "digits: GD blue, NGD orange"),
                  "Paired runs from the same inits.")
    return ev.outcome(constants=dict(CONSTANTS, steps=steps, draws=len(all_runs)), normalized=fast == RULE_NAMES[al.ngd])


CLAIM = Claim(
    id=ID,
    title="Figure 9: binary digits — W aligns with W_mm and NGD beats GD",
    statement=STATEMENT,
    fidelity="qualitative",
    fidelity_note=("Figure claim (Appendix C.2). MNIST replaced by sklearn's bundled 8×8 digits; patch count, noise, "
                   "head, step sizes, horizon and thresholds are ours (details['constants'])."),
    checks=(
        Check("alignment", "numeric", "GD and NGD runs end aligned with W_mm and still improving", check_alignment,
              stochastic=False, uses={"digits": digit_runs}),
        Check("ngd-beats-gd", "numeric", "Paired log ratios of alignment error and excess loss, GD over NGD, > 0",
              check_ngd_beats_gd, uses={"digits": digit_runs}),
    ),
    controls=(
        Control("dropped W-SVM constraints", "alignment", "W_mm solved without one sample's constraints",
                {"digits": DROPPED_REFERENCE_RUNS}),
        Control("NGD without normalization", "ngd-beats-gd",
                "NGD's step η∇L without the factor 1/‖∇L‖ (GD at η = 0.1): must not beat GD",
                {"digits": digit_runs.bind(ngd_rule=al.gd)}),
    ),
    free_choices=(
        FreeChoice("NGD step η", CONSTANTS["ngd_eta"], "the figure's steps are lost (GD's is ours, 1): NGD's 0.01-1, a "
                   "decade either side of ours", _runs_choice("ngd_eta"), low=0.01, high=1.0, scale="log"),
        FreeChoice("alignment threshold", CONSTANTS["gd_tol"], "'converge in direction' fixes no threshold at the "
                   "horizon: 1 − corr ≤ 0.01-0.2", {"alignment": lambda v: {"tol": v}}, low=0.01, high=0.2,
                   scale="log"),
        FreeChoice("noise", CONSTANTS["noise"], "the noise patches' level is lost: a factor 3 either side of ours "
                   "(0.03-0.3 per pixel, against centred digit pixels of order 0.5)", _runs_choice("noise"), low=0.03,
                   high=0.3, scale="log"),
        FreeChoice("horizon factor", 1.0, "the figure's horizon is lost: half to four times the budget's (300 steps "
                   "at quick)", _runs_choice("horizon"), low=0.5, high=4.0, scale="log"),
    ),
)
