"""Composable, batched update rules (optax-style) and the one engine that runs them.

Every algorithm in the suite (GD, normalized GD, Polyak step, heavy-ball momentum,
the preconditioned structure-aware GD of paper A, joint (u, W) training of paper B)
is a chain of small *transformations* applied to a gradient, run by :func:`run`.

Conventions
-----------
* ``params`` and ``grads`` are tuples of tensors whose **leading dimension indexes
  independent runs** (batch ``B``); every transformation acts run-by-run along it,
  so a batch of B runs costs one Python step, never B.
* A transformation is a pair of pure functions::

      init(params) -> state
      update(grads, state, params, info) -> (updates, new_state)

  ``info`` is a dict the objective fills in (loss values, the log of the gradient
  norm, the optimal loss L*, ...) so that rules like the Polyak step can read
  them without recomputing.  ``updates`` is added to ``params`` by :func:`apply`.
* ``grads`` may be *directions* (unit Frobenius norm per run) when the objective
  knows the gradient only up to scale, as in paper B's log-domain gradients;
  ``info["log_grad_norm"]`` then carries the scale.  Rules that need the true
  gradient (plain GD) multiply it back in with :func:`rescale_by_grad_norm`.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, NamedTuple, Sequence

import torch

Params = tuple[torch.Tensor, ...]
Info = dict[str, Any]


class Transform(NamedTuple):
    init: Callable[[Params], Any]
    update: Callable[[Params, Any, Params, Info], tuple[Params, Any]]


@dataclass(frozen=True)
class Variant:
    """An optimizer the minibatch-training engines (vision, language) train beside others in one batch: its name (its
    runs' key in a fixture's value and in the records) and how to build its transform from a setting's step sizes and
    cap (``make(hyper)``)."""

    name: str
    make: Callable[[dict], Transform]

    def __repr__(self) -> str:
        return f"Variant({self.name!r})"


def _bshape(t: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
    """Reshape a per-run vector ``v`` (B,) so it broadcasts against ``t`` (B, ...)."""
    return v.reshape(v.shape + (1,) * (t.dim() - v.dim()))


def batch_norm(tree: Params) -> torch.Tensor:
    """Per-run Frobenius norm of a tuple of (B, ...) tensors: sqrt(sum_k ||t_k[b]||^2)."""
    sq = sum(t.reshape(t.shape[0], -1).pow(2).sum(-1) for t in tree)
    return sq.sqrt()


def tree_scale(tree: Params, v: torch.Tensor) -> Params:
    """Multiply every leaf by the per-run scalar ``v`` (B,) (or a Python float)."""
    if not torch.is_tensor(v):
        return tuple(t * v for t in tree)
    return tuple(t * _bshape(t, v) for t in tree)


def apply(params: Params, updates: Params) -> Params:
    return tuple(p + u for p, u in zip(params, updates))


# ---------------------------------------------------------------------------
# Elementary transformations
# ---------------------------------------------------------------------------

def identity() -> Transform:
    return Transform(lambda p: (), lambda g, s, p, i: (g, s))


def scale(step: float) -> Transform:
    r"""``u = -step * g``  (the sign makes it a descent step)."""
    return Transform(lambda p: (), lambda g, s, p, i: (tree_scale(g, -step), s))


def scale_by_schedule(schedule: Callable[[int], float]) -> Transform:
    r"""``u_t = schedule(t) * g_t`` with ``t`` the step counter kept in the state."""

    def update(g, t, p, info):
        return tree_scale(g, float(schedule(t))), t + 1

    return Transform(lambda p: 0, update)


def normalize(eps: float = 0.0) -> Transform:
    r"""``g <- g / ||g||`` run by run (normalized GD).

    When the objective already supplies unit directions this is a no-op up to
    rounding.  ``eps`` guards exact zeros only; it is *not* a substitute for the
    log-domain directions paper B needs.
    """

    def update(g, s, p, info):
        n = batch_norm(g)
        return tree_scale(g, 1.0 / (n + eps)), s

    return Transform(lambda p: (), update)


def normalize_spectral() -> Transform:
    r"""``g <- g / ||g||_2`` run by run and leaf by leaf, ``||.||_2`` the spectral (operator) norm of a matrix leaf.

    A negative control's mutant of :func:`normalize`: normalized GD divided by the wrong norm.  Since
    ``||g||_F / ||g||_2`` lies in ``[1, sqrt(rank g)]``, the step's Frobenius length is ``eta ||g||_F / ||g||_2``,
    longer than ``eta`` whenever the gradient has rank above 1.
    """

    def update(g, s, p, info):
        return tuple(gi / torch.linalg.matrix_norm(gi, ord=2)[(...,) + (None,) * 2] for gi in g), s

    return Transform(lambda p: (), update)


def scale_by_capped_normalized(eta: float, cap: float) -> Transform:
    """SNGD: ``u = -min(eta/||g||, cap) g``, ``||g||`` the whole model's gradient norm, run by run."""

    def update(g, s, p, info):
        return tree_scale(g, -torch.clamp(eta / batch_norm(g), max=cap)), s

    return Transform(lambda p: (), update)


def scale_by_stochastic_polyak(cap: float, c: float = 1.0) -> Transform:
    """SPS_max (Loizou et al. 2021) with L* = 0: ``u = -min(L/(c ||g||^2), cap) g``, L = ``info['loss']``; a zero
    gradient (a minibatch whose float32 loss is exactly 0) takes no step (0/0 would make the run NaN)."""

    def update(g, s, p, info):
        n2 = batch_norm(g).pow(2)
        return tree_scale(g, -torch.clamp(torch.where(n2 > 0, info["loss"] / (c * n2), 0.0), max=cap)), s

    return Transform(lambda p: (), update)


def scale_by_capped_normalized_per_leaf(eta: float, cap: float) -> Transform:
    r"""``u_k = -min(eta / ||g_k||, cap) g_k`` for each leaf k, run by run (Frobenius norm of each parameter tensor).

    A negative control's mutant of capped normalized GD ``u = -min(eta / ||g||, cap) g`` (``||g||`` over the whole
    model): each parameter tensor normalized by its own norm, so every leaf moves up to ``eta`` and the whole step up
    to ``eta sqrt(#leaves)``.
    """

    def update(g, s, p, info):
        return tuple(tree_scale((gi,), -torch.clamp(eta / batch_norm((gi,)), max=cap))[0] for gi in g), s

    return Transform(lambda p: (), update)


def scale_by_polyak_unsquared(cap: float) -> Transform:
    r"""``u = -min(L / ||g||, cap) g``, ``L = info['loss']`` (L* = 0), ``||g||`` over the whole tree, run by run.

    A negative control's mutant of the (stochastic) Polyak step ``-min(L / ||g||^2, cap) g``, the minimizer over the
    step of the bound ``||theta - theta*||^2 - 2 step (L - L*) + step^2 ||g||^2``: the square of the gradient norm
    dropped, so the step is ``||g||`` times Polyak's (shorter once ``||g|| < 1``).  A zero gradient takes no step.
    """

    def update(g, s, p, info):
        n = batch_norm(g)
        return tree_scale(g, -torch.clamp(torch.where(n > 0, info["loss"] / n, 0.0), max=cap)), s

    return Transform(lambda p: (), update)


def scale_by_adam_without_bias_correction(b1: float = 0.9, b2: float = 0.999, eps: float = 1e-8) -> Transform:
    r"""Adam's direction with the bias corrections dropped (a negative control's mutant of Adam):

        m_t = b1 m_{t-1} + (1 - b1) g_t,   v_t = b2 v_{t-1} + (1 - b2) g_t^2,   u_t = m_t / (sqrt(v_t) + eps)

    where Adam divides m_t by ``1 - b1^t`` and v_t by ``1 - b2^t``.  Without them the step is
    ``(1 - b1^t) / sqrt(1 - b2^t)`` times Adam's at equal moments: 3.2 at t = 1, 6.5 at t = 10, 3.2 at t = 100 and
    2.0 at t = 300 for the defaults (v's correction, over ``1/(1 - b2)`` = 1000 steps, outlasts m's).  Follow with
    :func:`scale` for the learning rate.
    """

    def init(p):
        return tuple(torch.zeros_like(t) for t in p), tuple(torch.zeros_like(t) for t in p)

    def update(g, state, p, info):
        m = tuple(b1 * mi + (1 - b1) * gi for mi, gi in zip(state[0], g))
        v = tuple(b2 * vi + (1 - b2) * gi * gi for vi, gi in zip(state[1], g))
        return tuple(mi / (vi.sqrt() + eps) for mi, vi in zip(m, v)), (m, v)

    return Transform(init, update)


def rescale_by_grad_norm() -> Transform:
    r"""``g <- exp(info['log_grad_norm']) * g``: turn a unit direction back into the gradient."""

    def update(g, s, p, info):
        return tree_scale(g, info["log_grad_norm"].exp()), s

    return Transform(lambda p: (), update)


def momentum(beta: float) -> Transform:
    r"""Heavy ball on whatever arrives: ``m_t = beta m_{t-1} + g_t``, output ``m_t``."""

    def init(p):
        return tuple(torch.zeros_like(t) for t in p)

    def update(g, m, p, info):
        m = tuple(beta * mi + gi for mi, gi in zip(m, g))
        return m, m

    return Transform(init, update)


def chain(*transforms: Transform) -> Transform:
    """Compose transformations left to right (the first sees the raw gradient)."""

    def init(p):
        return tuple(t.init(p) for t in transforms)

    def update(g, states, p, info):
        new = []
        for t, s in zip(transforms, states):
            g, s = t.update(g, s, p, info)
            new.append(s)
        return g, tuple(new)

    return Transform(init, update)


# ---------------------------------------------------------------------------
# The engine
# ---------------------------------------------------------------------------

Objective = Callable[[Params], tuple[Params, Info]]
"""``objective(params) -> (grads, info)``; grads with the same structure as params."""


@dataclass
class Trajectory:
    """Recorded metrics: ``steps`` (K,) and for each metric a (K, B, ...) tensor."""

    steps: torch.Tensor
    metrics: dict[str, torch.Tensor]
    final: Params

    def __getitem__(self, key: str) -> torch.Tensor:
        return self.metrics[key]


def log_spaced_steps(n_steps: int, n_points: int = 60) -> list[int]:
    """0, 1, ... then roughly log-spaced integers up to ``n_steps`` inclusive."""
    import numpy as np

    if n_steps <= 0:
        return [0]
    pts = np.unique(np.round(np.logspace(0, np.log10(n_steps), n_points)).astype(int))
    return [0] + [int(x) for x in pts if 0 < x <= n_steps]


def run(
    params: Params,
    objective: Objective,
    transform: Transform,
    n_steps: int,
    record: Callable[[Params, Info], dict[str, torch.Tensor]] | None = None,
    record_at: Sequence[int] | None = None,
) -> Trajectory:
    """Run ``n_steps`` of ``params <- params + transform(grad)`` for a batch of runs.

    ``record(params, info)`` is called at the steps in ``record_at`` (default:
    log-spaced) *before* the update of that step, and once more at ``n_steps``
    on the final iterate; it returns per-run metrics.
    """
    record_at = set(log_spaced_steps(n_steps) if record_at is None else record_at)
    state = transform.init(params)
    rows: dict[str, list[torch.Tensor]] = {}
    steps: list[int] = []
    for t in range(n_steps + 1):
        grads, info = objective(params)
        if record is not None and (t in record_at or t == n_steps):
            for k, v in record(params, info).items():
                rows.setdefault(k, []).append(v.detach().clone())
            steps.append(t)
        if t == n_steps:
            break
        info["step"] = t
        updates, state = transform.update(grads, state, params, info)
        params = apply(params, updates)
    metrics = {k: torch.stack(v) for k, v in rows.items()}
    return Trajectory(torch.tensor(steps), metrics, params)
