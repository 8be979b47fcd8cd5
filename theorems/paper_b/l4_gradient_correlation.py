r"""B.E5 — the one-direction gradient form under Ass 2 (eqs. (5)/(14)); B.L4 — the gradient correlates with W_mm.

Setting (fixed head u, exp loss).  a_i = X_i W x_i1, s_i = softmax(a_i), gamma_it = y_i u^T x_it,
m_i = sum_t s_it gamma_it, L(W) = (1/n) sum_i e^{-m_i}.

B.E5 (reconstructed; the spec: "checked against autograd while writing; derive it symbolically").
The softmax Jacobian is diag(s) - s s^T, so d m_i / d a_it = s_it (gamma_it - m_i), and with
d a_it / d W = x_it x_i1^T,

    -grad L(W) = (1/n) sum_i e^{-m_i} sum_t s_it (gamma_it - m_i) x_it x_i1^T.                 (G)

Under Ass 2 (gamma_it = gammabar_i for every t != o = opt_i): m_i = s_io gamma_io + (1 - s_io) gammabar_i, so
gamma_io - m_i = (1 - s_io) Delta_i and gammabar_i - m_i = -s_io Delta_i with Delta_i = gamma_io - gammabar_i,
and the token sum collapses onto one direction per sample:

    -grad L(W) = (1/n) sum_i c_i (x_io - xbar_i) x_i1^T,   c_i = e^{-m_i} s_io (1 - s_io) Delta_i,
    xbar_i = sum_{t != o} s_it x_it / (1 - s_io)   (a convex combination of the non-opt tokens).   (5)/(14)

B.L4 (exact in shape; the paper's quantitative bound is lost, this one is ours).  Pair (5) with W_mm:
<v x^T, W> = v^T W x, so

    <-grad L(W), W_mm> = (1/n) sum_i c_i sum_{t != o} (s_it / (1 - s_io)) (x_io - x_it)^T W_mm x_i1
                       >= (1/n) sum_i c_i  =: LB(W)  > 0,

because every W-SVM constraint value (x_io - x_it)^T W_mm x_i1 is >= 1 and the weights s_it/(1 - s_io)
sum to 1.  This holds for *every* W (no Ass 1, no init condition) under Ass 2.  Moreover
||grad L|| <= (1/n) sum_i c_i ||x_io - xbar_i|| ||x_i1|| <= 2 R^2 LB(W), so the normalized correlation obeys

    <-grad L / ||grad L||, Wbar_mm> >= 1 / (2 R^2 ||W_mm||)                                      (c of B.L5)

Evidence: sympy proves (G), the Jacobian, (5) and the decomposition LB + nonnegative remainder;
autograd vs (5) on random W; along GD / NGD / Polyak trajectories (every step) and on sampled W
(random directions mixed with the W_mm ray, norms 1e-2..1e2) the correlation is positive and at
least LB.  Negative controls: (5) with Ass 2 broken (unequal non-opt scores, gammabar = their mean);
a W-SVM solved with one sample's constraints dropped (the wrong W_mm); LB with Ass 2 broken.
"""
from __future__ import annotations

import functools
import math

import numpy as np
import sympy as sp
import torch
from hypothesis import strategies as st

from numerics import DTYPE
from numerics.paper_b import algorithms as al
from numerics.paper_b import data, model
from numerics.paper_b import trajectory_checks as tc
from theorems.claim import Assumption, Check, Claim, Context, Control, Figure, Measurement, Outcome
from theorems.plots import new_figure, to_svg
from theorems.probe import run_probe
from theorems.symbolic import Derivation

ID_E5, ID_L4 = "B.E5", "B.L4"

STATEMENT_E5 = (
    r"\text{Ass. 2}\Rightarrow\;-\nabla L(W)=\frac1n\sum_{i=1}^n e^{-m_i}\,s_{i,o}(1-s_{i,o})"
    r"(\gamma_{i,o}-\bar\gamma_i)\Big(x_{i,o}-\sum_{t\neq o}\frac{s_{it}}{1-s_{i,o}}x_{it}\Big)x_{i1}^\top"
)
STATEMENT_L4 = (
    r"\langle-\nabla L(W),W_{mm}\rangle\;\ge\;\frac1n\sum_{i=1}^n e^{-m_i}s_{i,o}(1-s_{i,o})"
    r"(\gamma_{i,o}-\bar\gamma_i)\;>\;0\quad\text{for every }W"
)

class TeX(sp.Symbol):
    """A display-only symbol whose LaTeX is its name verbatim (the report renders it with latex2mathml)."""

    def _latex(self, printer):
        return self.name

    def _mathml_presentation(self, printer):
        el = printer.dom.createElement("mi")
        el.appendChild(printer.dom.createTextNode(self.name))
        return el


TOL_LOG = 1e-9  # log-ratio tolerance: rounding of log-domain quantities (~1e-14 observed)


# ---------------------------------------------------------------------------
# 1. Symbolic derivations
# ---------------------------------------------------------------------------

def _softmax_pieces(T: int):
    a = sp.symbols(f"a1:{T + 1}", real=True)
    g = sp.symbols(f"gamma1:{T + 1}", real=True)
    e = [sp.exp(ai) for ai in a]
    Z = sum(e)
    s = [ei / Z for ei in e]
    m = sum(si * gi for si, gi in zip(s, g))
    return a, g, s, m


def ass2_collapse(T: int = 4, form=None):
    """Sympy: sum_t s_t (gamma_t - m) x_t equals the one-direction form under Ass 2 (per coordinate of x).

    ``form(s_o, s_rest, x_o, x_rest, g_o, g_bar)`` is the candidate right-hand side (controls pass wrong ones).
    Returns (lhs, rhs) with s_o = 1 - sum of the others substituted.
    """
    s_rest = sp.symbols(f"s2:{T + 1}", positive=True)
    x_o = sp.Symbol("x_o", real=True)
    x_rest = sp.symbols(f"x2:{T + 1}", real=True)
    g_o, g_bar = sp.symbols("gamma_o gammabar", real=True)
    s_o = 1 - sum(s_rest)
    m = s_o * g_o + (1 - s_o) * g_bar
    lhs = s_o * (g_o - m) * x_o + sum(st_ * (g_bar - m) * xt for st_, xt in zip(s_rest, x_rest))
    if form is None:
        form = lambda so, sr, xo, xr, go, gb: so * (1 - so) * (go - gb) * (  # noqa: E731
            xo - sum(a * b for a, b in zip(sr, xr)) / (1 - so))
    return lhs, form(s_o, s_rest, x_o, x_rest, g_o, g_bar)


@functools.lru_cache(maxsize=1)
def _gradient_steps() -> tuple:
    """The form-independent part of the B.E5 derivation (cached: the control reuses it)."""
    D = Derivation()
    T = 3
    a, g, s, m = _softmax_pieces(T)
    J = sp.Matrix(T, T, lambda t, k: sp.diff(s[t], a[k]))
    Jc = sp.Matrix(T, T, lambda t, k: (s[t] if t == k else 0) - s[t] * s[k])
    S = sp.MatrixSymbol("s", T, 1)
    D.prove_zero("softmax Jacobian: ∂s/∂a = diag(s) − s sᵀ (T = 3, entrywise)", J - Jc,
                 shown=sp.Eq(TeX(r"\partial s/\partial a"), sp.diag(*[sp.Symbol(f"s_{k}") for k in range(1, T + 1)])
                             - S * S.T, evaluate=False))
    res = sp.Matrix([-sp.diff(sp.exp(-m), a[k]) - sp.exp(-m) * s[k] * (g[k] - m) for k in range(T)])
    D.prove_zero("hence −∂e^{−m}/∂a_t = e^{−m} s_t (γ_t − m),  m = Σ_t s_t γ_t", res,
                 shown=sp.Eq(-sp.Derivative(sp.exp(-sp.Symbol("m")), sp.Symbol("a_t")),
                             sp.exp(-sp.Symbol("m")) * sp.Symbol("s_t") * (sp.Symbol("gamma_t") - sp.Symbol("m")),
                             evaluate=False))
    # the full W-gradient for one sample (the loss is an average, so the sum over samples is linear)
    d = 2
    X = sp.Matrix(T, d, lambda t, j: sp.Symbol(f"x{t + 1}{j + 1}", real=True))
    W = sp.Matrix(d, d, lambda j, k: sp.Symbol(f"W{j + 1}{k + 1}", real=True))
    x1 = X[0, :].T
    sub = dict(zip(a, list(X * W * x1)))
    grad = sp.Matrix(d, d, lambda j, k: -sp.diff(sp.exp(-m).subs(sub), W[j, k]))
    form_G = sp.zeros(d, d)
    for t in range(T):
        form_G += (sp.exp(-m) * s[t] * (g[t] - m)).subs(sub) * X[t, :].T * x1.T
    D.prove_zero("with a = X W x₁ (T = 3 tokens in d = 2, symbolic X, W): "
                 "−∇_W e^{−m} = e^{−m} Σ_t s_t(γ_t − m) x_t x₁ᵀ",
                 (grad - form_G).applyfunc(sp.expand),
                 shown=sp.Eq(-TeX(r"\nabla_W e^{-m}"),
                             TeX(r"e^{-m}\sum_t s_t(\gamma_t-m)\,x_t x_1^\top"), evaluate=False))
    return tuple(D.steps), tuple(D.proved), tuple(D.failed)


def derivation_e5(form=None) -> Outcome:
    D = Derivation()
    steps, proved, failed = _gradient_steps()
    D.steps, D.proved, D.failed = list(steps), list(proved), list(failed)
    lhs, rhs = ass2_collapse(4, form)
    D.prove_equal("Ass 2 (γ_t = γ̄ for t ≠ o), s_o = 1 − Σ_{t≠o} s_t, T = 4: the token sum collapses onto "
                  "x_o − x̄, x̄ = Σ_{t≠o} s_t x_t/(1 − s_o)", lhs, rhs,
                  shown=sp.Eq(TeX(r"\sum_t s_t(\gamma_t-m)x_t"),
                              TeX(r"s_o(1-s_o)(\gamma_o-\bar\gamma)(x_o-\bar x)"), evaluate=False))
    D.say("Summing over samples with weight 1/n gives (5)/(14).")
    return D.outcome("gradient form (5)/(14) derived")


def derivation_l4(unnormalized: bool = False) -> Outcome:
    """``unnormalized``: the control's candidate weights s_t instead of s_t / (1 - s_o)."""
    D = Derivation()
    d = 2
    v = sp.Matrix(sp.symbols("v1:3", real=True))
    x = sp.Matrix(sp.symbols("x1:3", real=True))
    W = sp.Matrix(d, d, lambda j, k: sp.Symbol(f"W{j + 1}{k + 1}", real=True))
    D.prove_equal("Frobenius pairing of a rank-one matrix: ⟨v xᵀ, W⟩ = vᵀ W x", sum((v * x.T).multiply_elementwise(W)),
                  (v.T * W * x)[0])
    T = 4
    s_rest = sp.symbols(f"s2:{T + 1}", positive=True)
    xi = sp.symbols(f"xi2:{T + 1}", nonnegative=True)
    s_o = 1 - sum(s_rest)
    ell = [1 + z for z in xi]  # W-SVM constraint values (x_o - x_t)^T W_mm x_1 = 1 + xi_t, xi_t >= 0
    c = sp.Symbol("c_i", positive=True)
    corr = c * sum((st_ if unnormalized else st_ / (1 - s_o)) * lt for st_, lt in zip(s_rest, ell))
    D.prove_equal("with (5): ⟨c_i (x_o − x̄) x₁ᵀ, W_mm⟩ = c_i Σ_{t≠o} s_t/(1−s_o) (x_o − x_t)ᵀW_mm x₁; writing the "
                  "constraint values as 1 + ξ_t (ξ_t ≥ 0 by W-SVM feasibility) it equals c_i + c_i Σ_{t≠o} "
                  "s_t ξ_t/(1 − s_o)", corr, c + c * sum(st_ * z for st_, z in zip(s_rest, xi)) / (1 - s_o))
    D.say("The remainder is a sum of nonnegative terms, so ⟨−∇L, W_mm⟩ ≥ LB = (1/n) Σ_i c_i with "
          "c_i = e^{−m_i} s_io (1 − s_io)(γ_io − γ̄_i) > 0 (Ass 2: γ_io > γ̄_i; finite W: 0 < s_io < 1).")
    D.say("Norm: ‖x_io − x̄_i‖ ≤ max_t ‖x_io − x_it‖ ≤ 2R and ‖x_i1‖ ≤ R, so ‖∇L‖ ≤ 2R² LB and "
          "⟨−∇L/‖∇L‖, W̄_mm⟩ ≥ 1/(2R²‖W_mm‖) — the constant c of B.L5.")
    return D.outcome("correlation lower bound derived")


# ---------------------------------------------------------------------------
# 2. Instances (constants stated here)
# ---------------------------------------------------------------------------

def instance_specs(ctx: Context, spread: float = 0.0) -> list:
    """(maker, kwargs): Example 1 (n = 8, T = 4, d = 32, gamma_opt = 1, gamma_other = 0, sigma = 1/sqrt(d)),
    seeds 0.., and one exactly orthogonal-token instance (n = 4, T = 3, nu = 0); ``spread`` breaks Ass 2."""
    k = ctx.pick(2, 4, 6)
    specs = [(data.example1, dict(n=8, T=4, d=32, spread=spread, seed=s)) for s in range(k)]
    return specs + [(tc.orthogonal_tokens, dict(n=4, T=3, spread=spread, seed=ctx.seed))]


def example1_instances(ctx: Context, spread: float = 0.0, dropped: bool = False) -> list:
    """[(dataset, W-SVM result)]; ``dropped``: the W-SVM solved without the constraints of the sample that
    carries the most dual mass (a wrong W_mm, negative control)."""
    out = []
    for maker, kw in instance_specs(ctx, spread):
        ds, r = tc.with_w_mm(maker, **kw)
        if dropped:
            i = int(r.alpha.sum(1).argmax())
            r = tc.with_w_mm(maker, **kw, drop=[(i, t) for t in range(ds.T) if t != int(ds.opt_index[i])])[1]
        out.append((ds, r))
    return out


def sampled_W(gen: torch.Generator, W_ref: torch.Tensor, count: int, log_range=(-2.0, 2.0)) -> torch.Tensor:
    """count W: norm 10^U(log_range), direction = normalize(mix Wbar_ref + (1 - mix) G),
    mix ~ U(0, 1), G a random unit matrix."""
    d = W_ref.shape[-1]
    norms = 10 ** (log_range[0] + (log_range[1] - log_range[0]) * torch.rand(count, generator=gen, dtype=DTYPE))
    G = torch.randn(count, d, d, generator=gen, dtype=DTYPE)
    G = G / G.flatten(1).norm(dim=1)[:, None, None]
    mix = torch.rand(count, 1, 1, generator=gen, dtype=DTYPE)
    D = mix * W_ref / W_ref.norm() + (1 - mix) * G
    return norms[:, None, None] * D / D.flatten(1).norm(dim=1)[:, None, None]


# ---------------------------------------------------------------------------
# 3. B.E5 numeric: (5) vs autograd
# ---------------------------------------------------------------------------

def check_e5_autograd(ctx: Context, spread: float = 0.0) -> Outcome:
    gen = ctx.generator(ID_E5, "autograd")
    count = ctx.pick(100, 1000, 3000)
    rows, worst = [], 0.0
    for ds, r in example1_instances(ctx, spread):
        W = sampled_W(gen, r.solution, count, (-2.0, 0.7))  # ||W|| <= 5: the linear-domain autograd stays accurate
        ln, dr = model.grad_W_autograd(W, None, ds)
        G = -dr * ln.exp()[:, None, None]
        F_ = model.neg_grad_W_ass2(W, ds)
        rel = (G - F_).flatten(1).norm(dim=1) / G.flatten(1).norm(dim=1)
        worst = max(worst, float(rel.max()))
        rows.append((W.flatten(1).norm(dim=1).numpy(), rel.numpy(), ds.meta["name"]))
    tol = 1e-9
    status = "pass" if worst <= tol else "fail"
    fig, ax = new_figure()
    for nrm, rel, name in rows:
        ax.scatter(nrm, np.maximum(rel, 1e-18), s=4, alpha=0.5, label=name)
    ax.axhline(tol, color="k", ls="--", lw=0.8, label="tolerance 1e-9")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("‖W‖")
    ax.set_ylabel("‖(5) − (−∇L autograd)‖ / ‖∇L‖")
    ax.set_title("one-direction form vs autograd" + (f" (spread {spread}: Ass 2 broken)" if spread else ""))
    ax.legend(fontsize=7)
    return Outcome(status, f"max relative deviation of (5) from autograd {worst:.2e} over {count * len(rows)} W "
                           f"(tolerance {tol:g}){'; Ass 2 broken by spread ' + str(spread) if spread else ''}",
                   [Measurement("max relative deviation (5) vs autograd", worst, claimed=f"≤ {tol:g} (rounding)")],
                   [Figure("Gradient form (5)/(14) against autograd", to_svg(fig),
                           "Relative deviation per sampled W (norms 1e-2..5, directions mixing W̄_mm and random).")],
                   details={"W_per_instance": count, "spread": spread})


# ---------------------------------------------------------------------------
# 4. The trajectory bank shared by B.L3, B.L4, B.L5, B.L7 (every step recorded once)
# ---------------------------------------------------------------------------

BANK_ALGOS = (("GD η=1", "gd", 1.0), ("NGD η=0.2", "ngd", 0.2), ("NGD η=10", "ngd", 10.0),
              ("Polyak cap 10", "polyak", 10.0))
INIT_DELTA = 1e-6  # Lemma 2's failure probability for the small inits (the init event is then certain in practice)


def algorithm(kind: str, eta: float):
    return {"gd": al.gd, "ngd": al.ngd, "polyak": al.polyak}[kind](eta)


_BANK: dict = {}


def trajectory_bank(ctx: Context, spread: float = 0.0, algos=BANK_ALGOS) -> list[dict]:
    r"""Per instance (``example1_instances``): every-step records of GD (eta = 1), NGD (eta = 0.2 and 10, the latter
    reaching ||W|| ~ 2000, deep in softmax saturation) and Polyak (cap 10) from 2B inits: B at Lemma 2's scale
    (B.L2 with delta = 1e-6) and B of norm U(1, 3) in random directions.  Correlations are recorded against
    the true W_mm and (spread = 0) against the dropped-constraint W_mm used by the negative controls.
    Cached per (seed, budget, spread): B.L3, B.L4, B.L5 and B.L7 read the same runs."""
    from theorems.paper_b.l2_init_scale import sigma0
    key = (ctx.seed, ctx.budget, spread, algos)
    if key in _BANK:
        return _BANK[key]
    gen = ctx.generator(ID_L4, "bank", spread)
    B, steps = ctx.pick(3, 6, 12), ctx.pick(200, 500, 1500)
    bank = []
    pairs = zip(example1_instances(ctx, spread), example1_instances(ctx, spread, dropped=spread == 0.0))
    for (ds, r), (_, r_drop) in pairs:
        W0 = torch.cat([tc.gaussian_init(B, ds.d, sigma0(ds, delta=INIT_DELTA), gen),
                        tc.gaussian_init(B, ds.d, (1 + 2 * torch.rand(B, generator=gen, dtype=DTYPE)) / ds.d, gen)])
        runs = {}
        for label, kind, eta in algos:
            runs[label] = (kind, eta, tc.run_recorded(ds, algorithm(kind, eta), W0, steps, W_mm=r.solution, l4=True,
                                                      values=kind == "polyak",
                                                      extra_refs={"dropped": r_drop.solution}))
        bank.append(dict(ds=ds, r=r, r_dropped=r_drop, W0=W0, n_lemma2=B, steps=steps, runs=runs))
    _BANK[key] = bank
    return bank


# ---------------------------------------------------------------------------
# 5. B.L4 numeric: trajectories and sampled W
# ---------------------------------------------------------------------------

def check_l4(ctx: Context, spread: float = 0.0, dropped: bool = False) -> Outcome:
    gen = ctx.generator(ID_L4, "samples")
    count = ctx.pick(1500, 4000, 10000)
    algos = BANK_ALGOS if spread == 0.0 else BANK_ALGOS[:1]  # the Ass-2-broken control: GD runs + sampled W
    bank = trajectory_bank(ctx, spread, algos)
    sfx = "_dropped" if dropped else ""
    n_eval = n_neg = n_below = 0
    min_corr, min_log_ratio = math.inf, math.inf
    traj_pts, samp_pts = [], []
    for entry in bank:
        ds = entry["ds"]
        W_mm = (entry["r_dropped"] if dropped else entry["r"]).solution
        for kind, eta, tr in entry["runs"].values():
            corr, lr = tr["grad_corr_mm" + sfx][1:], tr["log_l4_ratio" + sfx][1:]
            traj_pts.append((tr["W_norm"][1:].flatten().numpy(), lr.flatten().numpy()))
            n_eval += corr.numel()
            n_neg += int((~(corr > 0)).sum())
            n_below += int((~(lr >= -TOL_LOG)).sum())
            min_corr = min(min_corr, float(corr.nan_to_num(-math.inf).min()))
            min_log_ratio = min(min_log_ratio, float(lr.nan_to_num(-math.inf).min()))
        # sampled W around the reference ray and in random directions
        W = sampled_W(gen, W_mm, count)
        ev = model.evaluate(W, None, ds, values=False)
        neg = -ev.dir_W.flatten(1)
        corr = neg @ (W_mm / W_mm.norm()).flatten()
        lr = torch.log(neg @ W_mm.flatten()) + ev.log_grad_norm_W - tc.log_l4_bound(ev, ds)
        samp_pts.append((W.flatten(1).norm(dim=1).numpy(), lr.numpy()))
        n_eval += count
        n_neg += int((~(corr > 0)).sum())
        n_below += int((~(lr >= -TOL_LOG)).sum())
        min_corr = min(min_corr, float(corr.nan_to_num(-math.inf).min()))
        min_log_ratio = min(min_log_ratio, float(lr.nan_to_num(-math.inf).min()))
    status = "pass" if n_neg == 0 and n_below == 0 else "fail"
    c5 = min(1 / (2 * tc.geometry(e["ds"])["R"] ** 2 * (e["r_dropped"] if dropped else e["r"]).norm) for e in bank)
    fig, ax = new_figure()
    rng = np.random.default_rng(0)  # thin the scatter to keep the SVG small (every point was checked)
    thin = lambda x, y, k: (x[k], y[k])  # noqa: E731
    for k, (x, y) in enumerate(traj_pts):
        x, y = thin(x, y, rng.random(len(x)) < 1000 / max(n_eval, 1))
        ax.scatter(x, np.clip(y, -5, None), s=2, alpha=0.3, color="tab:blue", label="trajectories" if k == 0 else None)
    for k, (x, y) in enumerate(samp_pts):
        x, y = thin(x, y, rng.random(len(x)) < 150 / len(x))
        ax.scatter(x, np.clip(y, -5, None), s=2, alpha=0.3, color="tab:orange", label="sampled W" if k == 0 else None)
    ax.axhline(0, color="k", lw=0.8)
    ax.set_xscale("log")
    ax.set_xlabel("‖W‖")
    ax.set_ylabel("log(⟨−∇L, W_mm⟩ / LB(W))  (clipped at −5)")
    tag = " (dropped-constraint W_mm)" if dropped else (f" (spread {spread})" if spread else "")
    ax.set_title("B.L4: correlation over its lower bound" + tag)
    ax.legend(fontsize=7)
    e0 = bank[0]
    summary = (f"{n_eval} W ({len(bank)} instances × {len(algos)} algorithms × {e0['W0'].shape[0]} inits × "
               f"{e0['steps']} steps, + {count} sampled W each): {n_neg} with ⟨−∇L, W_mm⟩ ≤ 0, {n_below} below LB; "
               f"min normalized correlation {min_corr:.3g} (derived floor 1/(2R²‖W_mm‖) = {c5:.3g}); "
               f"min log(corr/LB) {min_log_ratio:.2e}")
    return Outcome(status, summary,
                   [Measurement("min ⟨−∇L/‖∇L‖, W̄_mm⟩ over all W", min_corr, claimed=f"> 0 (derived ≥ {c5:.3g})"),
                    Measurement("min log(⟨−∇L, W_mm⟩ / LB)", min_log_ratio, claimed=f"≥ 0 (tolerance {TOL_LOG:g})"),
                    Measurement("W evaluated", float(n_eval))],
                   [Figure("Gradient correlation with W_mm and its lower bound", to_svg(fig),
                           "Every step of GD (η=1), NGD (η=0.2, 10), Polyak (cap 10) from Lemma-2 and norm-1..3 inits, "
                           "and sampled W; above 0 means ⟨−∇L, W_mm⟩ ≥ LB(W).")],
                   details={"steps": e0["steps"], "inits": int(e0["W0"].shape[0]), "sampled": count, "spread": spread,
                            "dropped": dropped, "algorithms": [a[0] for a in algos]},
                   headline=f"{n_neg} non-positive correlations in {n_eval} W; min normalized corr {min_corr:.3g}")


# ---------------------------------------------------------------------------
# 6. Probe: token geometry, Ass 2 on both sides, W scale and direction
# ---------------------------------------------------------------------------

@st.composite
def l4_instances(draw):
    kind = draw(st.sampled_from(["orthogonal", "gaussian"]))
    n, T = draw(st.integers(1, 4)), draw(st.integers(2, 4))
    spread = draw(st.sampled_from([0.0, 0.0, 0.3, 1.0, 1.8]))
    rho = draw(st.sampled_from([0.0, 0.01, 0.1, 0.5]))
    d = draw(st.integers(max(n, T) + 2, 14))
    log_norm = draw(st.floats(-2.0, 2.5))
    mix = draw(st.floats(0.0, 1.0))
    seed = draw(st.integers(0, 2**31 - 1))
    return dict(kind=kind, n=n, T=T, spread=spread, rho=rho, d=d, log_norm=log_norm, mix=mix, seed=seed)


def _probe_dataset(inst):
    if inst["kind"] == "orthogonal":
        return tc.orthogonal_tokens(inst["n"], inst["T"], rho=inst["rho"], spread=inst["spread"], seed=inst["seed"])
    return data.example1(n=inst["n"], T=inst["T"], d=inst["d"], spread=inst["spread"], seed=inst["seed"])


def l4_probe_conclusion(inst, alpha_each, use_wrong_ref=False):
    from numerics.paper_b import svm
    ds = _probe_dataset(inst)
    inst["_nu"] = float(data.assumptions(ds)["nu"])
    try:
        r = svm.w_svm(ds)
    except svm.SVMInfeasible:
        inst["feasible"] = False
        return True, "W-SVM infeasible", ""
    inst["feasible"] = True
    W_mm = r.solution
    if use_wrong_ref:
        W_mm = -W_mm  # control: a reference direction that violates every constraint
    g = torch.Generator().manual_seed(inst["seed"] + 1)
    G = torch.randn(16, ds.d, ds.d, generator=g, dtype=DTYPE)
    G = G / G.flatten(1).norm(dim=1)[:, None, None]
    Dm = inst["mix"] * r.solution / r.norm + (1 - inst["mix"]) * G
    W = 10 ** inst["log_norm"] * Dm / Dm.flatten(1).norm(dim=1)[:, None, None]
    ev = model.evaluate(W, None, ds, values=False)
    neg = -ev.dir_W.flatten(1)
    lr = torch.log(neg @ W_mm.flatten()) + ev.log_grad_norm_W - tc.log_l4_bound(ev, ds)
    ok = bool((lr >= -TOL_LOG).all())
    return ok, "feasible", "" if ok else f"min log(⟨−∇L, W_mm⟩/LB) = {float(lr.nan_to_num(-math.inf).min()):.3g}"


def l4_probe_assumptions(inst):
    return {"Ass 2 (equal non-opt scores)": inst["spread"] == 0.0, "W-SVM feasible": inst.get("feasible", True)}


def check_l4_probe(ctx: Context, wrong_ref: bool = False) -> Outcome:
    n = ctx.pick(10, 60, 200)
    return run_probe(ctx, l4_instances(), lambda i, a: l4_probe_conclusion(i, a, wrong_ref), n,
                     describe=lambda i: {k: v for k, v in i.items()}, assumptions=l4_probe_assumptions,
                     parameters=lambda i: {"ν": i.get("_nu", float("nan")), "spread": i["spread"],
                                           "log10 ‖W‖": i["log_norm"]},
                     shrink_cells=ctx.budget != "quick")


# ---------------------------------------------------------------------------
# 7. The claims
# ---------------------------------------------------------------------------

ASS2 = Assumption("Ass 2", "equal non-opt token scores: γ_it = γ̄_i < γ_io for t ≠ opt_i")

CLAIMS = [
    Claim(
        id=ID_E5,
        paper="B",
        title="One-direction gradient form under Ass 2 (eq. (5)/(14))",
        statement=STATEMENT_E5,
        fidelity="reconstructed",
        fidelity_note=("The seed keeps only the words around (5) and (14) ('under Assumption 2, for any W ... "
                       "where ...'); the formula is the spec's reconstruction, derived here by sympy from the model "
                       "and the softmax Jacobian, and checked against float64 autograd."),
        assumptions=(ASS2, Assumption("exp loss", "ℓ(z) = e^{−z}, fixed head u")),
        checks=(
            Check("derivation", "symbolic",
                  "Softmax Jacobian, the W-gradient of e^{−m} and the Ass-2 collapse, by sympy",
                  lambda ctx: derivation_e5(), stochastic=False),
            Check("autograd", "numeric", "(5) vs autograd on sampled W (Example 1 and orthogonal tokens)",
                  check_e5_autograd, stochastic=False),
        ),
        controls=(
            Control("symbolic: dropped (1 − s_o)", "derivation", "the collapse without the factor (1 − s_o)",
                    lambda ctx: derivation_e5(lambda so, sr, xo, xr, go, gb: so * (go - gb) * (
                        xo - sum(a * b for a, b in zip(sr, xr)) / (1 - so)))),
            Control("Ass 2 broken", "autograd",
                    "non-opt scores spread by 1.0 (γ̄ = their mean): (5) is not the gradient",
                    lambda ctx: check_e5_autograd(ctx, spread=1.0)),
        ),
    ),
    Claim(
        id=ID_L4,
        paper="B",
        title="The negative gradient correlates positively with W_mm",
        statement=STATEMENT_L4,
        fidelity="exact",
        fidelity_note=("Exact in shape (spec: ⟨−∇L(W), W̄_mm⟩ > 0 for every W reached; the paper's quantitative bound "
                       "is lost). The lower bound LB(W) and the normalized floor 1/(2R²‖W_mm‖) are our derivation from "
                       "(5) (reconstructed); they need Ass 2 only, no near-orthogonality and no init condition."),
        assumptions=(ASS2, Assumption("W-SVM feasible", "some W separates every opt token with margin 1")),
        checks=(
            Check("derivation", "symbolic", "⟨−∇L, W_mm⟩ = LB + nonnegative remainder, by sympy",
                  lambda ctx: derivation_l4(), stochastic=False),
            Check("trajectories-and-samples", "numeric",
                  "Every step of GD/NGD/Polyak (the shared trajectory bank) and sampled W: ⟨−∇L, W_mm⟩ > 0 and ≥ LB(W)",
                  check_l4,
                  stochastic=False),
            Check("probe", "probe", "Hypothesis over token geometry (ν), score spread (Ass 2), d, ‖W‖ and direction: "
                  "⟨−∇L, W_mm⟩ ≥ LB(W)", check_l4_probe),
        ),
        controls=(
            Control("symbolic: unnormalized weights", "derivation", "pairing with weights s_t instead of s_t/(1 − s_o)",
                    lambda ctx: derivation_l4(unnormalized=True)),
            Control("dropped W-SVM constraints", "trajectories-and-samples",
                    "W_mm solved without the constraints of the sample with the most dual mass",
                    lambda ctx: check_l4(ctx, dropped=True)),
            Control("Ass 2 broken", "trajectories-and-samples", "non-opt scores spread by 1.0: LB is no longer a bound",
                    lambda ctx: check_l4(ctx, spread=1.0)),
            Control("probe: −W_mm as reference", "probe", "the probe must find W with ⟨−∇L, −W_mm⟩ < LB",
                    lambda ctx: check_l4_probe(ctx, wrong_ref=True)),
        ),
    ),
]
