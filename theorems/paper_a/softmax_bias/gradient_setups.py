r"""Set-ups of paper A's gradient-approximation claims (A.T3, A.T4, A.T5): the instance and its Monte Carlo batches.

These are fixtures (``theorems.fixture``): a check names the one it reads in its ``uses`` and receives the value; the
runner computes each once per run and shares it between the three claims and their controls.  Each draws from the
run's context by its own stream name (``DATA_ID`` and a stream), so its draws depend on the run alone.

* :func:`gradient_instance`: ``Sigma, W*`` and two points ``theta`` near the manifold of minima;
* :func:`gradient_data`: control-variated gradient differences at each context size (A.T3, A.T4); bound with
  ``include_self=True`` it is the include-self softmax's batches (A.T4's control);
* :func:`regularizer_data`: the regularizer's part alone, many more batches (A.T5).

What the theorems leave open and the instance fixes -- A3's scale ``sigma_1(M*)``, the distance ``rho`` of the points
from the manifold, the dimensions -- are free choices of the three claims, declared here once
(:func:`scale_choice`, :func:`radius_choice`, :func:`dim_choice`; :func:`instance_choices` gives all three): each
re-binds the :func:`gradient_instance` that a check's fixtures read (:func:`at_instance`), so a sensitivity map
recomputes the instance, its batches and the pilots' chunks at the new value.  Three choices make the map's design
one at a time: two of them re-bind the same fixture of a check, which a full grid could not merge.
"""
from __future__ import annotations

import functools
import math
from dataclasses import dataclass
from typing import Any, Callable, Mapping

import numpy as np
import torch
from hypothesis import strategies as st
from scipy.stats import norm

from numerics.paper_a import moments as mo
from numerics.paper_a.algorithms import random_instance
from numerics.paper_a.geometry import dist_to_manifold, haar_orthogonal, perturb_from_manifold, target_svd
from numerics.paper_a.model import factor_B
from theorems import strategies as S
from theorems.claim import Assumption, FreeChoice, ScopeFilter
from theorems.evidence import Evidence
from theorems.fixture import Parts, Request, as_request, fixture
from theorems.paper_a.assumptions import a3
from theorems.paper_a.geometry.constants import rho_of
from theorems.paper_a.geometry.instances import instance_tensors, probe_point, spectral_instances
from theorems.pilot import LOOKS, POWER_WIDTH, two_looks, widest_ratio
from theorems.strata import fair_sampled_from

#: the name of the gradient Monte Carlo stream (seeds are derived from it, so its draws do not depend on other checks)
DATA_ID = "A.T3-T5"
#: d = 3, r = 4 (r > d: A2 with room), the smallest dimensions where V, K and W* are generic matrices
DIM, RDIM = 3, 4
#: A3's scale σ₁(W*Σ^{1/2}) = 0.1: ‖B‖op² ≈ 0.1 near the manifold, so the tilted moments E e^{kq} of the first two
#: orders of the bias series (k ≤ 3) are finite (k ‖B‖op² < 1/2)
M_OP = 0.1
SCALE_SCOPE = ScopeFilter(
    "the instance's scale σ₁(M*) = 0.1",
    f"one instance (Σ, W*) with σ₁(W*Σ^(1/2)) = {M_OP:g}, so ‖B‖op² ≈ {M_OP:g} near the manifold",
    why="our derived leading term (the O(n⁻²) remainder) needs E e^(3q) finite, ‖B‖op² < 1/6; the paper's Õ(1/n) "
        "is stated for any instance satisfying A3 (at σ₁ = 0.25 the paper's envelope still held, our −2 did not: "
        "A.T3's findings)", unit="")
#: Σ̃-distance of the points from the manifold ("ρ-close"): small against the manifold's scale (σ₁ = 0.1 → ~0.45)
RADIUS = 0.05
# what A.T3 and A.T4 assume of this instance, stated once: A3 at its scale and the points' distance from Mfold
INSTANCE_A3 = a3("σ₁(W*Σ^{1/2}) = 0.1: ‖B‖op² ≈ 0.1 near the manifold, < 1/6 so the bias series' first two orders "
                 "are finite")
NEAR_MANIFOLD = Assumption("ρ-close", f"θ at Σ̃-distance {RADIUS} from Mfold")
#: two points: a Haar-random one and the one with symmetric positive definite B (self-scores largest)
N_POINTS = 2
#: context sizes: five doublings from n = 8, where the bias series' terms are large, to 256, where they are small
GRAD_NS = [8, 16, 32, 64, 128, 256]
#: batches per context size (quick, standard): the scaled K-projection has standard deviation ~0.35 per batch with the
#: linear control variate, so the K-block's fitted limit has a half-width ~0.1 of its value at quick
GRAD_BATCHES = (2000, 6000)
#: the include-self control draws a third of the batches: its coefficient is 2.5-4× the leave-one-out one
INCLUDE_SELF_SHARE = 3
#: A.T5's own regularizer-only batches (quick, standard): cheap (no softmax), so the squared bias's exponent reaches the
#: rate rule's width (its U-statistic has a relative error ~30% per n at 2000 batches)
REG_BATCHES = (20000, 60000)


def blocks(first: str = "V", second: str = "K", like=None) -> dict[str, slice]:
    """The two parameter blocks of a flattened gradient (``r d`` value entries, then ``d d`` key-query entries), at
    the dimensions of ``like``'s points (its ``V``, (points, r, d)), or at ``DIM``, ``RDIM``."""
    r, d = (RDIM, DIM) if like is None else like.V.shape[-2:]
    return {first: slice(0, r * d), second: slice(r * d, r * d + d * d)}


@dataclass(frozen=True)
class GradientInstance:
    Sigma: torch.Tensor  # (d, d)
    W: torch.Tensor  # (r, d)
    V: torch.Tensor  # (N_POINTS, r, d)
    K: torch.Tensor  # (N_POINTS, d, d)


@fixture
def gradient_instance(ctx, m_op: float = M_OP, radius: float = RADIUS,
                      dims: tuple[int, int] = (DIM, RDIM)) -> GradientInstance:
    """``Sigma, W*`` from ``random_instance(d, r, m_op=m_op)`` (``DIM``, ``RDIM``, ``M_OP``); two ``theta`` at distance
    ``radius`` (``RADIUS``) from the manifold.  The parameters are the free choices' (:func:`instance_choices`).

    Point 1 perturbs a Haar-random point of the manifold; point 2 the point with rotation ``Q = Vs^T``, where
    ``B = Vs Lam^{1/2} Vs^T`` is symmetric positive definite: self-scores ``x_i^T K x_i`` are then largest,
    so that the leave-one-out choice (and its include-self control) matters most.
    """
    gen = ctx.generator(DATA_ID, "instance")
    d, r = dims
    Sigma, W = random_instance(d, r, gen, m_op=m_op)
    Vs = target_svd(Sigma, W)[2]
    Q = torch.stack([haar_orthogonal(1, d, gen)[0], Vs.mT])
    (V, K), _ = perturb_from_manifold(Sigma, W, radius, N_POINTS, gen, Q=Q)
    return GradientInstance(Sigma, W, V, K)


@dataclass(frozen=True)
class GradientData:
    ns: list[int]
    samples: list[mo.GradientBiasSamples]
    Sigma: torch.Tensor
    W: torch.Tensor
    V: torch.Tensor
    K: torch.Tensor
    n_batches: int
    include_self: bool  # the softmax context of the batches: leave-one-out (the claim's) or with the query itself


@fixture(uses={"instance": gradient_instance})
def gradient_data(ctx, instance: GradientInstance, include_self: bool = False) -> GradientData:
    """Control-variated gradient differences at each context size (``GRAD_NS``), ``GRAD_BATCHES`` batches each.

    ``include_self``: the softmax over the whole context, the query included (A.T4's negative control); it draws a
    third of the batches (its effect is many standard errors wide).
    """
    gen = ctx.generator(DATA_ID, "batches")
    N = ctx.pick(*GRAD_BATCHES) // (INCLUDE_SELF_SHARE if include_self else 1)
    i = instance
    samples = [mo.gradient_bias_samples(i.V, i.K, i.Sigma, i.W, n, N, gen, include_self=include_self) for n in GRAD_NS]
    return GradientData(list(GRAD_NS), samples, i.Sigma, i.W, i.V, i.K, N, include_self)


@dataclass(frozen=True)
class RegularizerData:
    ns: list[int]
    dR: list[tuple[torch.Tensor, torch.Tensor]]  # per n: E = bias (linear term removed), pair (V, K)
    Sigma: torch.Tensor
    V: torch.Tensor
    K: torch.Tensor
    n_batches: int


@fixture(uses={"instance": gradient_instance})
def regularizer_data(ctx, instance: GradientInstance) -> RegularizerData:
    """A.T5's regularizer-only batches at the same instance and points, on their own stream, ``REG_BATCHES`` each:
    the control-variated differences only (the raw ones, drawn with them, are not kept: nothing reads them)."""
    gen = ctx.generator(DATA_ID, "regularizer batches")
    N = ctx.pick(*REG_BATCHES)
    i = instance
    dR = [mo.regularizer_bias_samples(i.V, i.K, i.Sigma, n, N, gen)[0] for n in GRAD_NS]
    return RegularizerData(list(GRAD_NS), dR, i.Sigma, i.V, i.K, N)


@dataclass
class PilotChunks:
    """A claim's pilot over the shared batches ``data``: its later chunks (``more[c]``, c = 1, 2, ..., drawn on first
    use and kept with the value, so the checks and controls that share it draw each chunk once).  Each claim draws
    its chunks on its own stream (A.T3's ``more_samples``, A.T4's and A.T5's ``more_batches``); the pilot's rule is
    :meth:`sized`, the same for the three claims."""

    data: object
    more: Parts

    def pooled(self, shared: list, growth: int) -> list[list]:
        """Per n, the shared batches' entry (``shared``: the data's per-n list) and those of chunks 1..growth-1."""
        return [[s, *more] for s, *more in zip(shared, *(self.more[c] for c in range(1, growth)))]

    def sized(self, ctx, decide: Callable[[Evidence, int], Any], decisions: int,
              cap: int) -> tuple[Evidence, Any, dict]:
        """``decide(ev, growth)`` (``decisions`` of them, on ``growth`` chunks pooled: chunk 0 the shared batches) in
        two looks (:func:`theorems.pilot.two_looks`): decided at the pilot (``growth = 1``) when every decision is,
        or one fails; else once more on as many chunks as the pilot's widest interval asks to reach its 95 %-power
        width, at most ``cap`` (the claim's declared cost limit).  Each look decides at half the check's level (the
        evidence counts ``LOOKS`` times its decisions).  Returns the deciding evidence, ``decide``'s result and what
        the pilot did (for the record)."""
        ratios = []

        def decide_at(growth):
            ev = Evidence(ctx, decisions=LOOKS * decisions)
            result = decide(ev, growth)
            ratios.append(widest_ratio(ev.decisions, decisions))
            return ratios[-1], ev.decisions, (ev, result)

        (ev, result), growth = two_looks(decide_at, POWER_WIDTH, cap)
        return ev, result, dict(n_batches=growth * self.data.n_batches, pilot_growth=growth, stage_widest=ratios,
                                pilot_cap=cap)


# ---------------------------------------------------------------------------
# The free choices of the instance (A.T3, A.T4, A.T5)
# ---------------------------------------------------------------------------

def _reads_instance(request: Request) -> bool:
    return request.fixture is gradient_instance or any(_reads_instance(d) for d in request.dependencies().values())


def at_instance(request, **params: Any) -> Request:
    """``request`` with the :func:`gradient_instance` it reads, at any depth, bound at ``params`` (the fixtures on the
    way re-bound to read that instance); at the instance's defaults it has the key of ``request`` itself."""
    r = as_request(request)
    if r.fixture is gradient_instance:
        return r.bind(**params)
    return r.bind(**{k: at_instance(d, **params) for k, d in r.dependencies().items()})


def _instance_sets(reads: Mapping[str, Mapping[str, Any]], params_at: Callable[[Any], dict]) -> dict:
    """``FreeChoice.sets`` for a choice of the instance: ``reads`` maps each check to the fixtures it reads that
    depend on the instance (parameter -> fixture); at value ``v`` each is re-bound at ``params_at(v)``."""
    for check, uses in reads.items():
        for name, req in uses.items():
            if not _reads_instance(as_request(req)):
                raise ValueError(f"check {check!r}: {name} does not read gradient_instance; a choice of the instance "
                                 "cannot set it")
    return {check: (lambda v, uses=uses: {name: at_instance(req, **params_at(v)) for name, req in uses.items()})
            for check, uses in reads.items()}


def scale_choice(reads: Mapping[str, Mapping[str, Any]]) -> FreeChoice:
    """A3's scale ``sigma_1(M*)``, a free choice of the checks in ``reads`` (check -> {parameter: fixture}); its range
    reaches 0.25, where ``||B||_op^2 > 1/6`` and our derived leading term is not yet reached at these n (A.T3's
    docstring: the paper's envelope holds there), so the map shows each claim's verdict there."""
    return FreeChoice(
        "σ₁(M*)", M_OP, "A3 only bounds it (its constant is lost): 0.04, a factor 2.5 below ours, to 0.25, where "
        "‖B‖op² ≈ 0.25 > 1/6 and our derived leading term is not yet reached (A.T3's findings)",
        _instance_sets(reads, lambda v: {"m_op": float(v)}), low=0.04, high=0.25, scale="log")


def radius_choice(reads: Mapping[str, Mapping[str, Any]]) -> FreeChoice:
    """The Sigmatilde-distance ``rho`` of the two points from the manifold, a free choice of the checks in ``reads``."""
    return FreeChoice(
        "distance ρ", RADIUS, "'ρ-close' with ρ lost: 0.02 to 0.125, a factor 2.5 either side of ours, below the "
        "manifold's scale (σ₁(M*)^½ ≈ 0.32 at ours)",
        _instance_sets(reads, lambda v: {"radius": float(v)}), low=0.02, high=0.125, scale="log")


def dim_choice(reads: Mapping[str, Mapping[str, Any]]) -> FreeChoice:
    """The dimension ``d`` (``r = d + 1``, as ``DIM``, ``RDIM``), a free choice of the checks in ``reads``."""
    return FreeChoice(
        "d", DIM, "the theorems hold in every d and fix none: 2 (the smallest non-scalar Σ) to 6 (twice ours), "
        "r = d + 1 (A2 with room) as ours",
        _instance_sets(reads, lambda v: {"dims": (int(v), int(v) + RDIM - DIM)}), low=2, high=6, integer=True)


def instance_choices(reads: Mapping[str, Mapping[str, Any]]) -> tuple[FreeChoice, ...]:
    """The three free choices of the instance (:func:`scale_choice`, :func:`radius_choice`, :func:`dim_choice`) for
    the checks in ``reads`` (check -> {parameter: the fixture it reads that depends on the instance})."""
    return scale_choice(reads), radius_choice(reads), dim_choice(reads)


# ---------------------------------------------------------------------------
# The probe of the bias law (A.T3, A.T4, A.T5): one search, one conclusion rule, a bias and a leading term per claim
# ---------------------------------------------------------------------------

# Each claim's probe decides, at a drawn instance and context size n, that the bias it measures is its derived
# leading term: ‖E D_n − lead(n)‖ ≤ PROBE_SHARE ‖lead(n)‖, where D_n are the claim's per-batch control-variated
# differences (their mean is the bias) and lead(n) is ∇c/(n−1), c_R/n or their regularized sum.  The search crosses
# the two assumptions the claims rest on: A3's scale (σ₁(M*); our derived term needs ‖B‖op² < 1/6 at θ, where the
# bias series' second order is finite) and the distance of θ from the manifold ("ρ-close", with ρ the radius of
# A.T1.3, (2/√5) σ_d(M*)^½).  The three claims' free choices fix one instance; this probe is not set by them.

#: the probe's strata, (σ₁(M*) range, dist(θ)/ρ range): inside both assumptions (σ₁ up to the claims' own 0.1, θ
#: within half of ρ), A3's scale beyond our derived term's scope (σ₁ from 0.17 > 1/6, where ‖B‖op² ≥ 1/6 on the
#: manifold itself, up to 0.4, short of Lemma 7's 1/2), and points beyond ρ (up to 2.5 ρ) at the inside scales
PROBE_STRATA = {
    "inside": ((0.03, 0.1), (0.05, 0.5)),
    "A3 scale": ((0.17, 0.4), (0.05, 0.5)),
    "far": ((0.03, 0.1), (1.0, 2.5)),
}
#: the strata as drawn (``strata.fair_sampled_from``): "inside" twice, so that about half of the examples can be
#: counterexamples; the other two once each
PROBE_DRAW = ("inside", "inside", "A3 scale", "far")
#: Σ's eigenvalues (A1 with room, as the claims' random_instance: floor 1/2) and the singular values of M* before its
#: rescaling to σ₁(M*) = the stratum's scale (σ_d/σ₁ ≥ 1/4: ρ, which scales with σ_d^½, stays at least half of its
#: σ₁ value)
PROBE_SIGMA, PROBE_M = (0.5, 3.0), (0.25, 1.0)
#: context sizes a probed instance is drawn at: the middle of the claims' window n = 8..256, where the numeric checks'
#: fits already read the leading term (a softmax batch costs O(n²): 128 would quadruple the probe's cost)
PROBE_NS = (32, 64)
#: batches per probed instance: the control-variated differences have a standard deviation of the order of the bias
#: itself, so the relative squared deviation is known to about ±0.03 (at z ≈ 3.8, the probe's per-example level)
PROBE_BATCHES = 300
#: A.T5's probe draws ten times as many regularizer-only batches (no softmax: as REG_BATCHES to GRAD_BATCHES), whose
#: control-variated differences are noisier relative to c_R/n
PROBE_REG_BATCHES = 3000
#: the conclusion's band: the bias lies within half the norm of the derived leading term, half the distance from it to
#: the nearest alternative that has no O(1/n) term of that size (zero), as ``decisions.ALTERNATIVE_SHARE``
PROBE_SHARE = 0.5
#: our derived leading term's scope (gradient_setups.SCALE_SCOPE): the bias series' second order needs E e^{3q} < ∞
SCOPE_B2 = 1 / 6
#: probe examples at quick / standard / full: each costs a Monte Carlo of PROBE_BATCHES softmax batches (~0.05-0.2 s)
PROBE_EXAMPLES = (16, 60, 200)
#: at least 4 decided instances inside both assumptions (about half of the examples are drawn inside)
PROBE_MIN_DECIDED = 4


def probe_instances() -> st.SearchStrategy[dict]:
    """A stratum (``PROBE_STRATA``, drawn by ``PROBE_DRAW``), then ``(d, r)`` (d ≤ 3, r ≤ d + 1), ``Sigma``, ``M``
    (``spectral_instances``; rescaled to ``sigma_1 = m_op``), a point near the manifold (rotation ``Q`` of its base
    point, direction ``H`` projected on the normal space) at distance ``frac`` × rho and the context size ``n``; the
    probed Monte Carlo (``PROBE_BATCHES`` batches of ``n`` samples, far too many for hypothesis to draw) comes from a
    seed derived from the instance (``strategies.instance_seed``)."""
    return fair_sampled_from(PROBE_DRAW).flatmap(_probe_stratum)


@functools.cache  # one strategy per stratum: hypothesis draws faster from one it has seen
def _probe_stratum(name: str) -> st.SearchStrategy[dict]:
    (m0, m1), (f0, f1) = PROBE_STRATA[name]
    return spectral_instances(PROBE_SIGMA, PROBE_M, dims=S.dims(3, 1), point=True, stratum=st.just(name),
                              m_op=st.floats(m0, m1), frac=st.floats(f0, f1), n=fair_sampled_from(PROBE_NS))


def _probe_target(inst: dict) -> np.ndarray:
    """``M*`` of the instance: the drawn ``M`` rescaled to ``sigma_1 = m_op``."""
    return inst["M"] * (inst["m_op"] / np.linalg.svd(inst["M"], compute_uv=False)[0])


@dataclass(frozen=True)
class ProbePoint:
    """A probed instance in tensors: ``Sigma`` (d, d), ``W`` (r, d), the point ``V`` (1, r, d), ``K`` (1, d, d), the
    context size ``n`` and what the assumptions and the plot read (``facts``)."""

    Sigma: torch.Tensor
    W: torch.Tensor
    V: torch.Tensor
    K: torch.Tensor
    n: int
    facts: dict


def probe_point_of(inst: dict) -> ProbePoint:
    """The drawn instance's ``(Sigma, W*)``, its point at distance ``frac`` × rho from the manifold and its facts:
    ``‖B‖op²`` at the point, the distance, rho and sigma_1."""
    target = _probe_target(inst)
    Sigma, W = instance_tensors(inst | {"M": target})
    rho = rho_of(float(np.linalg.svd(target, compute_uv=False)[-1]))
    V, K = probe_point(inst, Sigma, W, inst["frac"] * rho, "normal")
    B2 = float(torch.linalg.matrix_norm(factor_B(K, Sigma), ord=2)[0]) ** 2
    dist = float(dist_to_manifold(V, K, Sigma, W)[0])
    return ProbePoint(Sigma, W, V, K, int(inst["n"]), {"B2": B2, "dist": dist, "rho": rho, "m_op": inst["m_op"]})


def bias_law_conclusion(inst: dict, alpha_each: float, draws: Callable, leading: Callable):
    """The probe's conclusion for one claim: ``draws(point, gen)`` (PROBE_BATCHES, 1, p) per-batch differences whose
    mean is the claim's bias at ``point.n``, ``leading(point)`` (1, p) its derived leading term; decided on the
    U-statistic of ``D − lead`` (``mo.squared_norm_of_mean``: the Monte Carlo variance removed): the relative squared
    deviation's interval (at the probe's per-example level) below ``PROBE_SHARE²`` holds, above it fails, across it
    is not decided.  Its facts: the point's (:func:`probe_point_of`) and the deviation."""
    P = probe_point_of(inst)
    gen = torch.Generator().manual_seed(S.instance_seed(inst))
    D = draws(P, gen)
    lead = leading(P)
    size = float(lead.pow(2).sum())
    facts = dict(P.facts)
    if not (math.isfinite(size) and size > 0):
        return None, "no leading term", f"the derived leading term is {size:g} here", facts
    est = mo.squared_norm_of_mean(D - lead)
    z = float(norm.isf(alpha_each / 2))
    value, se = float(est.value[0]) / size, float(est.se[0]) / size
    lo, hi = value - z * se, value + z * se
    facts["deviation"] = math.sqrt(max(value, 0.0))
    band = PROBE_SHARE**2
    holds = True if hi < band else False if lo > band else None
    detail = (f"‖E D − lead‖²/‖lead‖² = {value:.3g} [{lo:.3g}, {hi:.3g}] vs {band:g} at n = {P.n} "
              f"(‖B‖op² = {P.facts['B2']:.3f}, dist/ρ = {P.facts['dist'] / P.facts['rho']:.2f})")
    return holds, "" if holds is not None else "interval across the band's edge", detail, facts


def probe_assumptions(inst: dict, facts: dict) -> dict[str, bool]:
    """Our derived term's scope at the point and the paper's neighbourhood."""
    return {"A3 (ours): ‖B‖op² < 1/6 at θ": facts["B2"] < SCOPE_B2,
            "ρ-close: dist(θ) ≤ ρ = (2/√5) σ_d(M*)^½": facts["dist"] <= facts["rho"]}


def probe_parameters(inst: dict, facts: dict) -> dict[str, float]:
    return {"σ₁(M*)": inst["m_op"], "‖B‖op² at θ (scope < 1/6)": facts["B2"],
            "dist(θ)/ρ (ρ-close ≤ 1)": facts["dist"] / facts["rho"], "n": float(inst["n"]), "d": float(inst["d"])}


def probe_describe(inst: dict, facts: dict) -> dict:
    """The instance as plain numbers and nested lists, with ``M*`` and the point's facts."""
    return S.readable(inst | {"M*": _probe_target(inst)} | {k: float(v) for k, v in facts.items()})


#: the settings A.T3, A.T4 and A.T5's probes share (``theorems.probe.probe_check`` parameters; each claim adds its
#: conclusion, the bias law it decides at the drawn instance)
PROBE = dict(strategy=probe_instances(), examples=PROBE_EXAMPLES, describe=probe_describe, assumptions=probe_assumptions,
             parameters=probe_parameters, min_decided=PROBE_MIN_DECIDED)
