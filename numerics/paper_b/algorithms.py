r"""Paper B's training algorithms as chains of :mod:`numerics.optim` transforms.

Objectives return *per-leaf unit directions* (grad_k / ||grad_k||) and put the
scales in ``info`` as logs, because in the saturated regime ||grad|| is far
below the float64 range (log ||grad|| ~ -1e4 is routine):

    info["log_grad_norms"]  tuple, one (B,) per leaf:  log ||grad_k L||
    info["log_grad_norm"]   (B,):  log ||grad L|| over the whole tree (W, or (W, u))
    info["loss"], info["log_loss"], info["log_excess_loss"]  (B,):  L, log L, log(L - L*)
        (L* = L*(u) for the fixed head; for joint training L* = inf over (W, u) = 0, and
        info["log_excess_loss_W"] = log(L - L*(u_t)), the gap left in W alone); computed on
        first read, so GD and NGD steps do not pay for them
    info["direction"], info["eval"]   the unit directions and the full ``model.Evaluation``

For the fixed head the tree is the single leaf W and these are exactly the
"directions" of :mod:`numerics.optim` (``optim.rescale_by_grad_norm`` applies).
For joint training the tree is (W, u) with per-leaf units; use the transforms
here (``rescale_by_grad_norms``, ``to_tree_direction``), which are leaf-aware.

Algorithms (eta > 0; g = grad L; ^ a unit direction):

    GD        W+ = W - eta g
    NGD       W+ = W - eta g/||g||                      (optionally step capped: min(eta/||g||, eta_max))
    Polyak    W+ = W - min(eta_max, (L - L*)/||g||^2) g
    NGD+mom   W+ = W - eta g/||g|| + beta (W - W-)        (heavy ball on the normalized step)
    joint     (10), see ``scale_by_joint``

``Algorithm`` pairs a transform with the name a check prints for it (and its step cap): the object a fixture that
runs an algorithm takes as its parameter.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import torch

from numerics import optim
from numerics.optim import Transform, tree_scale

from . import model, records
from .model import Dataset

# ---------------------------------------------------------------------------
# Objectives for optim.run
# ---------------------------------------------------------------------------


def objective(ds: Dataset, loss="exp", joint: bool = False) -> optim.Objective:
    """``params -> (directions, info)`` for params (W,) with the fixed head ``ds.u``, or (W, u) when ``joint``.

    The loss values in ``info`` are computed on first read: GD and NGD never read them (they would
    double the cost of a B = 1 step), recorders read them at record steps, Polyak and joint every step.
    """

    def fixed_head(params):
        (W,) = params
        ev = model.evaluate(W, None, ds, loss, values=False)

        def values():
            log_loss, log_excess = model.loss_values(ev, ds, loss, fixed_head=True)
            return {"loss": log_loss.exp(), "log_loss": log_loss, "log_excess_loss": log_excess}

        return (ev.dir_W,), _info(ev, (ev.log_grad_norm_W,), (ev.dir_W,), values)

    def joint_head(params):
        W, u = params
        ev = model.evaluate(W, u, ds, loss, grad_u=True, values=False)

        def values():
            log_loss, log_excess_W = model.loss_values(ev, ds, loss, fixed_head=False)
            # over (W, u) the infimum of L is 0 (u -> infinity along u_mm), so L - L* = L; the
            # fixed-u gap L - L*(u_t) stays available for the records
            return {"loss": log_loss.exp(), "log_loss": log_loss, "log_excess_loss": log_loss,
                    "log_excess_loss_W": log_excess_W}

        log_norms, dirs = (ev.log_grad_norm_W, ev.log_grad_norm_u), (ev.dir_W, ev.dir_u)
        return dirs, _info(ev, log_norms, dirs, values)

    return joint_head if joint else fixed_head


def objective_autograd(ds: Dataset, loss="exp") -> optim.Objective:
    """Negative control: the fixed-head objective from float64 autograd of the linear-domain loss.

    Same outputs as ``objective`` while the softmax is unsaturated; once 1 - s_opt underflows the
    gradient is exactly 0 and the direction 0/0 = NaN, so an NGD run on it breaks.
    """

    def fixed_head(params):
        (W,) = params
        log_gn, direction = model.grad_W_autograd(W, None, ds, loss)
        L = model.loss_value(W, None, ds, loss)
        info = {"loss": L, "log_loss": L.log(), "log_excess_loss": (L - model.loss_star(None, ds, loss)).log(),
                "log_grad_norm": log_gn, "log_grad_norms": (log_gn,), "direction": (direction,)}
        return (direction,), info

    return fixed_head


class _Info(dict):
    """``info`` whose loss values are filled in by ``values()`` on the first read of a missing key."""

    def __init__(self, values, **items):
        super().__init__(**items)
        self._values = values

    def __missing__(self, key):
        if self._values is None:
            raise KeyError(key)
        self.update(self._values())
        self._values = None
        return self[key]


def _info(ev: model.Evaluation, log_norms, dirs, values) -> dict:
    log_gn = log_norms[0] if len(log_norms) == 1 else 0.5 * torch.logsumexp(2 * torch.stack(log_norms), 0)
    return _Info(values, log_grad_norm=log_gn, log_grad_norms=log_norms, direction=dirs, eval=ev)


# ---------------------------------------------------------------------------
# Transforms (pure init/update, optim style)
# ---------------------------------------------------------------------------


def _no_state(update) -> Transform:
    return Transform(lambda p: (), update)


def rescale_by_grad_norms() -> Transform:
    r"""Per-leaf unit directions -> the true gradient:  d_k <- exp(log ||g_k||) d_k.

    Leaf-wise form of ``optim.rescale_by_grad_norm`` (identical for one leaf).
    Underflows to 0 when ||g_k|| < 1e-308, which is what float64 GD does.
    """

    def update(g, s, p, info):
        return tuple(tree_scale((d,), ln.exp())[0] for d, ln in zip(g, info["log_grad_norms"])), s

    return _no_state(update)


def to_tree_direction() -> Transform:
    r"""Per-leaf unit directions -> the unit direction of the whole tree:

        d_k <- exp(log ||g_k|| - log ||g||) d_k,   log ||g|| = (1/2) logsumexp_k 2 log ||g_k||.

    A no-op for a single leaf.
    """

    def update(g, s, p, info):
        if len(g) == 1:
            return g, s
        lg = info["log_grad_norm"]
        return tuple(tree_scale((d,), (ln - lg).exp())[0] for d, ln in zip(g, info["log_grad_norms"])), s

    return _no_state(update)


def scale_by_capped(eta: float, eta_max: float) -> Transform:
    r"""Capped normalized step on a tree unit direction d = g/||g||:

        u = -min(eta/||g||, eta_max) g = -exp(min(log eta, log eta_max + log ||g||)) d.

    The cap only bites where ||g|| < eta/eta_max (it keeps NGD's step bounded
    early on, as in the paper's experiments).
    """
    log_eta, log_cap = math.log(eta), math.log(eta_max)

    def update(g, s, p, info):
        log_step = torch.clamp(info["log_grad_norm"] + log_cap, max=log_eta)
        return tree_scale(g, -log_step.exp()), s

    return _no_state(update)


def scale_by_polyak(eta_max: float) -> Transform:
    r"""Polyak step on a tree unit direction d = g/||g||:

        u = -min(eta_max, (L - L*)/||g||^2) g
          = -exp(min(log eta_max + log ||g||,  log(L - L*) - log ||g||)) d,

    computed from info["log_excess_loss"] and info["log_grad_norm"] so that
    neither (L - L*) nor ||g||^2 is ever formed (both underflow in saturation).
    """
    log_cap = math.log(eta_max)

    def update(g, s, p, info):
        lg = info["log_grad_norm"]
        log_step = torch.minimum(lg + log_cap, info["log_excess_loss"] - lg)
        return tree_scale(g, -log_step.exp()), s

    return _no_state(update)


def scale_by_polyak_unsquared(eta_max: float) -> Transform:
    r"""A negative control's mutant of :func:`scale_by_polyak`, the square of the gradient norm dropped:

        u = -min(eta_max, (L - L*)/||g||) g
          = -exp(min(log eta_max + log ||g||,  log(L - L*))) d,

    the Polyak step times ||g|| (shorter once ||g|| < 1), from the same log-domain inputs."""
    log_cap = math.log(eta_max)

    def update(g, s, p, info):
        log_step = torch.minimum(info["log_grad_norm"] + log_cap, info["log_excess_loss"])
        return tree_scale(g, -log_step.exp()), s

    return _no_state(update)


def scale_by_joint(eta_w: float, eta_u: float, w_time_power: float = 1 / 3, u_loss_power: float = 1.0,
                   u_time_power: float = 0.0) -> Transform:
    r"""Joint (u, W) updates (10), on per-leaf unit directions (d_W, d_u), params (W, u):

        W+ = W - eta_w (t+1)^{-a} grad_W L / ||grad_W L||                        a = w_time_power
        u+ = u - eta_u (t+1)^{-b} grad_u L / L^p
           = u - eta_u (t+1)^{-b} exp(log ||grad_u L|| - p log L) d_u             p = u_loss_power, b = u_time_power

    The paper's exact factors are lost (spec section 3: "implement the family").
    What survives: W gets an NGD step times an extra decreasing factor, which
    makes ||W_t|| grow slower than Theta(t) (B.L10); u gets a loss-normalized
    step whose factor "can be replaced with a power of the loss; the chosen one
    gives the fastest rate".  Our defaults:
      a = 1/3: ||W_t|| <= eta_w sum_{s<t} (s+1)^{-a} ~ eta_w t^{2/3} / (2/3), sublinear
               but fast enough that W aligns with W_mm within 10^3-10^4 steps on DM;
      p = 1:   the full loss normalization u+ = u - eta_u grad_u L / L (largest step
               among the powers p in (0, 1]; our reading of "fastest");
      b = 0.
    a = b = 0 with ``ngd`` on the tree instead is the plain "NGD" of Fig. 3.
    Claims should sweep (a, p) and report the values used.  ``t`` is
    info["step"], set by ``optim.run``.
    """

    def update(g, s, p, info):
        t1 = info["step"] + 1.0
        d_W, d_u = g
        log_gn_u = info["log_grad_norms"][1]
        step_u = (log_gn_u - u_loss_power * info["log_loss"]).exp() * (eta_u * t1 ** -u_time_power)
        return (d_W * (-eta_w * t1 ** -w_time_power), tree_scale((d_u,), -step_u)[0]), s

    return _no_state(update)


# ---------------------------------------------------------------------------
# Algorithms
# ---------------------------------------------------------------------------


@dataclass(frozen=True, eq=False, repr=False)
class Algorithm:
    """A training rule as a check names it: the name its records print, the transform, and its step cap (the
    largest step size, for the rules that have one: capped NGD, Polyak).  A fixture parameter: runs of it are keyed
    by its fields, the transform by value (``theorems.fixture``), so two built alike share their runs."""

    name: str
    transform: Transform
    cap: float | None = None

    def __repr__(self) -> str:
        return f"Algorithm({self.name!r})"



def gd(eta: float) -> Transform:
    """GD: W+ = W - eta grad L."""
    return optim.chain(rescale_by_grad_norms(), optim.scale(eta))


def ngd(eta: float, eta_max: float | None = None) -> Transform:
    """NGD: W+ = W - eta grad/||grad|| (step size eta/||grad||, capped at eta_max if given)."""
    step = optim.scale(eta) if eta_max is None else scale_by_capped(eta, eta_max)
    return optim.chain(to_tree_direction(), step)


def polyak(eta_max: float) -> Transform:
    """Polyak step: eta_t = min(eta_max, (L - L*)/||grad||^2)."""
    return optim.chain(to_tree_direction(), scale_by_polyak(eta_max))


def polyak_unsquared(eta_max: float) -> Transform:
    """The Polyak step with ||grad|| for ||grad||^2: eta_t = min(eta_max, (L - L*)/||grad||) (a control's mutant)."""
    return optim.chain(to_tree_direction(), scale_by_polyak_unsquared(eta_max))


def ngd_momentum(eta: float, beta: float, eta_max: float | None = None) -> Transform:
    """Heavy ball on the normalized step: m = beta m - eta_t grad, W+ = W + m (eta_t as in ``ngd``).

    The paper's beta is lost; Ji et al. (2021)-style momentum uses beta close to 1 (e.g. 0.9).
    """
    return optim.chain(ngd(eta, eta_max), optim.momentum(beta))


def joint(eta_w: float, eta_u: float | None = None, w_time_power: float = 1 / 3, u_loss_power: float = 1.0,
          u_time_power: float = 0.0) -> Transform:
    """Joint (u, W) training (10); params (W, u).  See ``scale_by_joint`` for the family and the defaults."""
    return scale_by_joint(eta_w, eta_w if eta_u is None else eta_u, w_time_power, u_loss_power, u_time_power)


# ---------------------------------------------------------------------------
# Training with trajectories
# ---------------------------------------------------------------------------


def train(ds: Dataset, algorithm: Transform, n_steps: int, W0: torch.Tensor, u0: torch.Tensor | None = None, *,
          loss="exp", W_mm=None, u_mm=None, record_at=None, n_points: int = 60,
          keep_params: bool = False) -> optim.Trajectory:
    """Run ``algorithm`` from W0 (B, d, d) [and u0 (B, d): joint training] and record metrics.

    Records at log-spaced steps (``n_points``) unless ``record_at`` is given, and at ``n_steps``.
    Returns an ``optim.Trajectory``; ``traj.final`` is (W,) or (W, u).  Metrics (``numerics.paper_b.records``):
    ``records.FIXED_HEAD``; with W_mm ``records.ALIGNMENT``; joint ``records.JOINT`` (and ``u_corr_mm`` with u_mm);
    with ``keep_params`` the iterates W [and u].
    """
    joint_ = u0 is not None
    params = (W0,) if not joint_ else (W0, u0)
    names = list(records.FIXED_HEAD) + (list(records.ALIGNMENT) if W_mm is not None else [])
    names += (list(records.JOINT) + (["u_corr_mm"] if u_mm is not None else [])) if joint_ else []
    names += (["W", "u"] if joint_ else ["W"]) if keep_params else []
    rec = records.recorder(ds, names, W_mm, u_mm, loss=loss)
    at = optim.log_spaced_steps(n_steps, n_points) if record_at is None else record_at
    return optim.run(params, objective(ds, loss, joint_), algorithm, n_steps, record=rec, record_at=at)
