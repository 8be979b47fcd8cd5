r"""A.L8 — gradients of the softmax weights (Lemma 8).

Statement (our reconstruction).  For a query ``x`` and context ``x_1, ..., x_n`` with scores ``a_j = x^T K x_j`` and
weights
``s_j = e^{a_j} / sum_k e^{a_k}``:

    d s_j / d K = s_j x (x_j - xbar)^T,     xbar = sum_k s_k x_k.

Derivation.  ``d a_j / d K = x x_j^T``; ``d s_j = s_j (d a_j - sum_k s_k d a_k)``, so
``d s_j / d K = s_j (x x_j^T - sum_k s_k x x_k^T) = s_j x (x_j - xbar)^T``.

The source text's Lemma 8 lists several "useful gradients" whose formulas are lost; our reconstruction keeps the
one above.  The Gaussian Poincare bounds of A.L10-A.L23 need the gradients with respect to the *covariates*; we derive
and check them too (label: reconstructed):

    d s_k / d x_j = s_k (1[k = j] - s_j) K^T x        (context covariate, j in the context)
    d s_j / d x   = s_j K (x_j - xbar)                   (the query)
    d xbar / d x_j = s_j [ I + (x_j - xbar)(K^T x)^T ]   (Jacobian, rows index xbar)

Evidence: sympy (d = 2, n = 3, generic symbols, ``e^{a_j}`` kept as symbols with ``d e^a = e^a da``), torch
autograd against the formulas on random instances including saturated softmaxes (large ``K``), and a probe over
explicit small instances (``K``, query, context drawn entrywise by hypothesis, so a counterexample shrinks to a few
round numbers).  Controls: the ``xbar`` dropped (``s_j x x_j^T``), the
transposed outer product, and the ``s_j`` factor dropped from the covariate Jacobian.

Free choice: how deep into saturation the autograd check's key scales reach (the upper end of ``K_SCALE_LOG10``); the
identities hold at every ``K``, and a saturated softmax is where a formula and autograd lose digits by cancellation.
"""
from __future__ import annotations


import numpy as np
import sympy as sp
import torch
from hypothesis import strategies as st

from numerics import DTYPE
from theorems.claim import Check, Claim, Context, Control, FreeChoice, Outcome
from theorems.evidence import Evidence
from theorems.paper_a.displays import barred
from theorems.plots import new_figure
from theorems.probe import probe
from theorems.strategies import matrix, readable, tensor
from theorems.symbolic import Derivation

ID = "A.L8"

STATEMENT = (
    r"\frac{\partial s_j}{\partial K}=s_j\,x\,(x_j-\bar x)^\top,\qquad \bar x=\sum_k s_k x_k,\qquad "
    r"s_j=\frac{e^{x^\top Kx_j}}{\sum_k e^{x^\top Kx_k}}"
)
TITLE = "Softmax gradients: ∂s_j/∂K = s_j x (x_j − x̄)ᵀ"
FIDELITY_NOTE = (
    "The source text's Lemma 8 ('some useful gradients, verified by direct calculation') lost its formulas; "
    "our reconstruction keeps ∂s_j/∂K (exact in shape). The covariate gradients checked alongside are our "
    "reconstruction of what the Poincaré bounds (A.L10-A.L23) need."
)

#: the formula variants: the correct one and the controls' mutants (a label set, not a threshold)
VARIANTS = ("correct", "dropped_xbar", "transposed", "dropped_s_in_jacobian")

#: formula and autograd agree to rounding: an error above 1e-10 of the terms' size is a wrong formula, not round-off
TOL = 1e-10

#: the floor of a term size (float64's smallest normal): a zero size means both sides are exactly 0
TINY = torch.finfo(DTYPE).tiny
#: autograd check: random instances per shape (quick, standard, full), the shapes (n, d) from the smallest to a
#: saturating softmax, and the key scales 10^-2 ... 10^1.5 (0.01 ... 30: up to saturation)
AUTOGRAD_BATCH = (64, 512, 2048)
AUTOGRAD_SHAPES = ((2, 1), (5, 3), (16, 4))
K_SCALE_LOG10 = (-2.0, 1.5)
#: probe examples per budget; every instance is decided (the check is exact), and fewer than 20 decided of the quick
#: budget's 25 would mean the probe did not run as declared
PROBE_EXAMPLES = (25, 100, 300)
PROBE_MIN_DECIDED = 20


# ---------------------------------------------------------------------------
# The formulas (with the negative-control variants)
# ---------------------------------------------------------------------------

def weights(K, x, xs):
    """``s`` (B, n) for queries ``x`` (B, d), contexts ``xs`` (B, n, d)."""
    return torch.softmax(((x.unsqueeze(-2) @ K) * xs).sum(-1), dim=-1)


def grad_K(K, x, xs, variant: str = "correct"):
    """``d s_j / d K`` as (B, n, d, d)."""
    s = weights(K, x, xs)
    xbar = (s.unsqueeze(-1) * xs).sum(-2)
    right = xs if variant == "dropped_xbar" else xs - xbar.unsqueeze(-2)
    outer = x[:, None, :, None] * right[:, :, None, :]
    if variant == "transposed":
        outer = outer.mT
    return s[..., None, None] * outer


def grad_context(K, x, xs):
    """``d s_k / d x_j`` as (B, n_k, n_j, d): ``s_k (1[k=j] - s_j) K^T x``."""
    s = weights(K, x, xs)
    n = s.shape[-1]
    coef = s.unsqueeze(-1) * (torch.eye(n, dtype=DTYPE) - s.unsqueeze(-2))
    return coef.unsqueeze(-1) * (K.mT @ x.unsqueeze(-1)).squeeze(-1)[:, None, None, :]


def grad_query(K, x, xs):
    """``d s_j / d x`` as (B, n, d): ``s_j K (x_j - xbar)``."""
    s = weights(K, x, xs)
    xbar = (s.unsqueeze(-1) * xs).sum(-2)
    return s.unsqueeze(-1) * ((xs - xbar.unsqueeze(-2)) @ K.mT)


def jacobian_xbar(K, x, xs, variant: str = "correct"):
    """``d xbar / d x_j`` as (B, n_j, d, d): ``s_j [I + (x_j - xbar)(K^T x)^T]``."""
    s = weights(K, x, xs)
    xbar = (s.unsqueeze(-1) * xs).sum(-2)
    d = x.shape[-1]
    Ktx = (K.mT @ x.unsqueeze(-1)).squeeze(-1)
    J = torch.eye(d, dtype=DTYPE) + (xs - xbar.unsqueeze(-2)).unsqueeze(-1) * Ktx[:, None, None, :]
    return J if variant == "dropped_s_in_jacobian" else s[..., None, None] * J


# ---------------------------------------------------------------------------
# 1. Symbolic
# ---------------------------------------------------------------------------

#: display-only symbols (d = 2, n = 3): the query x, the context x_j, their weighted mean x̄, K and the weights s_j
_X, _XBAR, _K = sp.MatrixSymbol("x", 2, 1), barred("x", 2, 1), sp.MatrixSymbol("K", 2, 2)
_XS = [sp.MatrixSymbol(f"x_{j}", 2, 1) for j in (1, 2, 3)]
_S = sp.symbols("s_1:4")


def symbolic_derivation(variant: str = "correct") -> Outcome:
    """Total derivatives of the softmax weights with ``E_j = e^{a_j}`` kept as symbols: for any expression
    ``F(E, y)``, ``dF/dv = dF/dv|_E + sum_k dF/dE_k E_k da_k/dv`` (the only property of ``exp`` used is
    ``d e^a = e^a da``), so every identity below is a rational-function identity that sympy settles by ``cancel``."""
    D = Derivation()
    d, n = 2, 3
    x = sp.Matrix(sp.symbols("x1:3", real=True))
    xs = [sp.Matrix(sp.symbols(f"y{j}_1:3", real=True)) for j in range(n)]
    K = sp.Matrix(d, d, sp.symbols("K_11 K_12 K_21 K_22", real=True))
    a = [(x.T * K * xj)[0] for xj in xs]
    E = sp.symbols("E1:4", positive=True)
    s = [Ei / sum(E) for Ei in E]
    xbar = sum((sj * xj for sj, xj in zip(s, xs)), sp.zeros(d, 1))

    def total(F, v):
        return sp.diff(F, v) + sum(sp.diff(F, Ek) * Ek * sp.diff(ak, v) for Ek, ak in zip(E, a))

    def zero(expr):
        return expr.applyfunc(lambda e: sp.cancel(sp.together(e)))

    D.say("Scores a_j = xᵀKx_j, E_j = e^{a_j}, weights s_j = E_j/Σ_k E_k, x̄ = Σ_k s_k x_k; d = 2, n = 3, generic "
          "symbols; d E_j = E_j d a_j.")
    for j in range(n if variant == "correct" else 1):  # a control needs one failing weight
        dK = sp.Matrix(d, d, lambda p, q: total(s[j], K[p, q]))
        right = xs[j] if variant == "dropped_xbar" else xs[j] - xbar
        claim = s[j] * x * right.T
        if variant == "transposed":
            claim = claim.T
        shown = sp.MatMul(_S[j], _X, sp.Transpose(_XS[j] if variant == "dropped_xbar" else _XS[j] - _XBAR))
        D.prove_zero(f"∂s_{j + 1}/∂K = s_{j + 1} x (x_{j + 1} − x̄)ᵀ", zero(dK - claim),
                     sp.Eq(sp.Derivative(_S[j], _K), sp.Transpose(shown) if variant == "transposed" else shown,
                           evaluate=False))
    if variant != "correct":  # the controls change only the K-gradient
        return D.outcome("∂s/∂K")
    # covariate gradients (used by the Poincare bounds)
    Ktx = K.T * x
    for k, j in ((0, 0), (0, 1)):  # one diagonal and one off-diagonal pair (the rest by symmetry)
        g = sp.Matrix([total(s[k], v) for v in xs[j]])
        D.prove_zero(f"∂s_{k + 1}/∂x_{j + 1} = s_{k + 1}(1[k=j] − s_{j + 1}) Kᵀx",
                     zero(g - s[k] * ((1 if k == j else 0) - s[j]) * Ktx),
                     sp.Eq(sp.Derivative(_S[k], _XS[j]),
                           sp.MatMul(_S[k] * ((1 if k == j else 0) - _S[j]), _K.T, _X), evaluate=False))
    gq = sp.Matrix([total(s[0], v) for v in x])
    D.prove_zero("∂s₁/∂x = s₁ K (x₁ − x̄)", zero(gq - s[0] * K * (xs[0] - xbar)),
                 sp.Eq(sp.Derivative(_S[0], _X), sp.MatMul(_S[0], _K, _XS[0] - _XBAR), evaluate=False))
    Jx = sp.Matrix(d, d, lambda p, q: total(xbar[p], xs[0][q]))
    D.prove_zero("∂x̄/∂x₁ = s₁ [I + (x₁ − x̄)(Kᵀx)ᵀ]", zero(Jx - s[0] * (sp.eye(d) + (xs[0] - xbar) * Ktx.T)),
                 sp.Eq(sp.Derivative(_XBAR, _XS[0]),
                       sp.MatMul(_S[0], sp.Identity(2) + sp.MatMul(_XS[0] - _XBAR, sp.Transpose(_K.T * _X))),
                       evaluate=False))
    return D.outcome("softmax gradients derived")


# ---------------------------------------------------------------------------
# 2. Numeric check: against torch autograd
# ---------------------------------------------------------------------------

def autograd_all(K, x, xs):
    """Autograd Jacobians of ``s`` wrt ``K``, ``xs``, ``x`` and of ``xbar`` wrt ``xs`` (instances independent,
    so a backward pass of the batch sum gives every instance's row)."""
    K, x, xs = K.clone().requires_grad_(True), x.clone().requires_grad_(True), xs.clone().requires_grad_(True)
    s = weights(K, x, xs)
    xbar = (s.unsqueeze(-1) * xs).sum(-2)
    n, d = xs.shape[-2], xs.shape[-1]
    gK, gC, gQ, gJ = [], [], [], []
    for j in range(n):
        a, b, c = torch.autograd.grad(s[:, j].sum(), (K, xs, x), retain_graph=True)
        gK.append(a), gC.append(b), gQ.append(c)
    for p in range(d):
        (b,) = torch.autograd.grad(xbar[:, p].sum(), xs, retain_graph=True)
        gJ.append(b)  # (B, n_j, d): row p of d xbar / d x_j
    return (torch.stack(gK, 1), torch.stack(gC, 1), torch.stack(gQ, 1), torch.stack(gJ, 2))


def random_batch(gen, B: int, n: int, d: int, k_scale):
    x = torch.randn(B, d, generator=gen, dtype=DTYPE)
    xs = torch.randn(B, n, d, generator=gen, dtype=DTYPE)
    K = torch.randn(B, d, d, generator=gen, dtype=DTYPE) * torch.as_tensor(k_scale, dtype=DTYPE).reshape(-1, 1, 1)
    return K, x, xs


def relative_errors(K, x, xs, variant: str = "correct"):
    """Max error (per instance) of each formula against autograd, relative to the size of the terms the formula
    subtracts (e.g. ``s_j |x| (|x_j| + |xbar|)`` for ``d s_j / d K``): in a saturated softmax ``x_j - xbar`` cancels,
    and both autograd and the formula lose the same absolute digits, so a plain relative error would measure
    round-off, not the identity."""
    aK, aC, aQ, aJ = autograd_all(K, x, xs)
    s = weights(K, x, xs)
    xbar = (s.unsqueeze(-1) * xs).sum(-2)
    size = xs.norm(dim=-1) + xbar.norm(dim=-1).unsqueeze(-1)  # (B, n)
    Ktx = (K.mT @ x.unsqueeze(-1)).squeeze(-1).norm(dim=-1, keepdim=True)
    scale = {"∂s/∂K": (s * x.norm(dim=-1, keepdim=True) * size).max(-1).values,
             "∂s/∂x_j": (s * Ktx).max(-1).values,
             "∂s/∂x": (s * torch.linalg.matrix_norm(K).unsqueeze(-1) * size).max(-1).values,
             "∂x̄/∂x_j": (s * (1 + size * Ktx)).max(-1).values}
    err = {"∂s/∂K": grad_K(K, x, xs, variant) - aK, "∂s/∂x_j": grad_context(K, x, xs) - aC,
           "∂s/∂x": grad_query(K, x, xs) - aQ, "∂x̄/∂x_j": jacobian_xbar(K, x, xs, variant) - aJ}
    # a zero term size (x = 0, or a one-point context) means both sides are exactly 0: the error is then absolute
    return {k: e.flatten(1).abs().max(1).values / scale[k].clamp_min(TINY) for k, e in err.items()}


def check_autograd(ctx: Context, variant: str = "correct", k_scale_log10=K_SCALE_LOG10) -> Outcome:
    """Every formula against autograd on random batches with key scales ``10**k_scale_log10`` (0.01 ... 30: to
    saturation; its upper end is a free choice); ``variant`` (the controls) swaps in a wrong formula
    (:data:`VARIANTS`)."""
    gen = ctx.generator(ID, "autograd")
    B = ctx.pick(*AUTOGRAD_BATCH)
    ev = Evidence(ctx)
    curves = []
    lo, hi = k_scale_log10
    for n, d in AUTOGRAD_SHAPES:
        k_scale = 10 ** (lo + (hi - lo) * torch.rand(B, generator=gen, dtype=DTYPE))  # 0.01 ... 30: up to saturation
        K, x, xs = random_batch(gen, B, n, d, k_scale)
        errs = relative_errors(K, x, xs, variant)
        for name, e in errs.items():
            nb = int((e > TOL).sum())
            ev.exact(f"n={n}, d={d}: max relative error of {name}", nb == 0,
                     f"n={n},d={d} {name}: max rel. err {float(e.max()):.1e}" + (f" ({nb} > {TOL:g})" if nb else ""),
                     value=float(e.max()), claimed="0")
        curves.append((n, d, k_scale, errs["∂s/∂K"]))
    if ev.plots:
        fig, ax = new_figure()
        for n, d, k_scale, e in curves:
            ax.loglog(k_scale.numpy(), e.clamp_min(1e-17).numpy(), ".", ms=3, label=f"∂s/∂K, n={n}, d={d}")
        ax.axhline(TOL, color="k", ls="--", lw=0.8)
        ax.set_xlabel("scale of K")
        ax.set_ylabel("max error vs autograd / term size")
        ax.set_title("softmax gradient" + ("" if variant == "correct" else f" — control: {variant}"))
        ax.legend(loc="best", fontsize=7)
        ev.figure("Softmax gradients vs autograd", fig, "Relative error of s_j x (x_j − x̄)ᵀ against torch autograd as "
                  "the key-query scale grows to saturation; dashed: tolerance.")
    return ev.outcome(tolerance=TOL, variant=variant)


# ---------------------------------------------------------------------------
# 3. Probe
# ---------------------------------------------------------------------------

@st.composite
def instances(draw):
    """``n``, ``d``, a key scale (0 ... 50: to saturation) and a covariate scale, then ``K``, the query ``x`` and the
    context ``x_1..x_n`` entrywise (unit entries in [-2, 2] times the scales): every piece shrinks to 0, 1 or a
    round number.  Unit entries are rounded to 6 decimals, as the report prints them: an entry like 1e-276 would
    underflow the term sizes the error is measured against (their squares are below float64's range)."""
    n, d = draw(st.integers(1, 12)), draw(st.integers(1, 5))
    k_scale, x_scale = draw(st.floats(0.0, 50.0)), draw(st.floats(0.01, 5.0))
    K, x, xs = (np.round(draw(matrix(*shape, 2.0)), 6) for shape in ((d, d), (1, d), (n, d)))
    return {"n": n, "d": d, "k_scale": k_scale, "x_scale": x_scale, "K": k_scale * K, "x": x_scale * x[0],
            "xs": x_scale * xs}


def probe_conclusion(inst, alpha_each, variant="correct"):
    err = float(relative_errors(tensor(inst["K"]), tensor(inst["x"]), tensor(inst["xs"]), variant)["∂s/∂K"].max())
    cell = "saturated" if inst["k_scale"] * inst["x_scale"] ** 2 > 5 else "smooth"
    return err <= TOL, cell, f"relative err {err:.2e}"


CLAIM = Claim(
    id=ID, title=TITLE, statement=STATEMENT, fidelity="exact", fidelity_note=FIDELITY_NOTE,
    checks=(Check("derivation", "symbolic", "∂s/∂K, ∂s/∂x_j, ∂s/∂x and ∂x̄/∂x_j by sympy (d = 2, n = 3)",
                  symbolic_derivation),
            Check("autograd", "numeric", "All four formulas against torch autograd, softmax scales 0.01 … 30",
                  check_autograd, stochastic=False),
            probe("Hypothesis over n, d, key scale (to saturation) and covariate scale", strategy=instances(),
                  conclusion=probe_conclusion, examples=PROBE_EXAMPLES, describe=readable,
                  min_decided=PROBE_MIN_DECIDED, stochastic=False)),
    controls=(Control("symbolic: dropped x̄", "derivation", "s_j x x_jᵀ in place of s_j x (x_j − x̄)ᵀ",
                      {"variant": "dropped_xbar"}),
              Control("dropped x̄", "autograd", "s_j x x_jᵀ", {"variant": "dropped_xbar"}),
              Control("transposed", "autograd", "s_j (x_j − x̄) xᵀ", {"variant": "transposed"}),
              Control("dropped s_j in ∂x̄/∂x_j", "autograd", "I + (x_j − x̄)(Kᵀx)ᵀ without the factor s_j",
                      {"variant": "dropped_s_in_jacobian"}),
              Control("probe: dropped x̄", "probe", "the probe must find an instance where s_j x x_jᵀ is wrong",
                      {"mutant": {"variant": "dropped_xbar"}})),
    free_choices=(
        FreeChoice("largest key scale (log10)", K_SCALE_LOG10[1], "the lemma holds at every K: from 10^0.5 (a softmax "
                   "barely saturated) to 10^3 (every weight but one underflows), ours 10^1.5 ≈ 30",
                   {"autograd": lambda v: {"k_scale_log10": (K_SCALE_LOG10[0], float(v))}}, low=0.5, high=3.0),
    ),
)
