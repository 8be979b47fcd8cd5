"""Hypothesis strategies for probes, built from small pieces that shrink to readable instances.

"Hypothesis shrinks from the bottom up": every piece here is drawn from hypothesis primitives
(integers, floats, ``hypothesis.extra.numpy`` arrays), never from a torch seed, so when a probe
finds a counterexample hypothesis can simplify each piece on its own: dimensions shrink to 1,
spectra to round numbers, rotations to the identity, entries to 0 or small integers.  A shrunk
instance is a dict of plain numbers and nested lists that a reader can paste into a Python prompt.

Pieces (compose them with ``st.composite`` / ``flatmap`` in a claim module):

* :func:`dims` -- ``(d, r)`` with ``d <= r <= d + extra``;
* :func:`spectrum` -- ``k`` values in ``[lo, hi]`` (eigenvalues, singular values);
* :func:`rotation` -- an orthogonal ``k x k`` matrix: the Cayley transform ``(I - S)(I + S)^{-1}`` of a
  skew-symmetric ``S`` with bounded entries, times an optional reflection; ``S = 0`` gives ``I``;
* :func:`quarter_turn` -- an orthogonal ``k x k`` matrix far from ``I``: a quarter turn in a drawn coordinate plane,
  times a small Cayley rotation (``-1`` for ``k = 1``);
* :func:`matrix` -- an ``m x n`` matrix with bounded entries;
* :func:`spd` -- ``O diag(spectrum) O^T``;
* :func:`with_singular_values` -- ``U diag(s) V^T`` (``m x k``, ``m >= k``);
* :func:`log_uniform` -- a positive scale whose logarithm is drawn uniformly (shrinks to 1 when in range);
* :func:`instance_seed` -- a seed derived from a drawn instance, for a probe's Monte Carlo too large to draw with
  hypothesis (a seed drawn as one more integer would be one more choice for the shrinker to search, each try a new
  Monte Carlo).

Each matrix piece returns a ``numpy`` array; :func:`tensor` turns it into the suite's float64 torch
tensor, and :func:`readable` turns arrays in an instance into nested lists for the report.
"""
from __future__ import annotations

import hashlib
import math

import numpy as np
import torch
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from numerics import DTYPE


def dims(max_d: int = 4, extra: int = 2, min_d: int = 1) -> st.SearchStrategy[tuple[int, int]]:
    """``(d, r)`` with ``min_d <= d <= max_d`` and ``d <= r <= d + extra``."""
    return st.integers(min_d, max_d).flatmap(lambda d: st.tuples(st.just(d), st.integers(d, d + extra)))


def spectrum(k: int, lo: float, hi: float) -> st.SearchStrategy[list[float]]:
    """``k`` values in ``[lo, hi]`` (unsorted)."""
    return st.lists(st.floats(lo, hi, allow_nan=False, allow_infinity=False), min_size=k, max_size=k)


def _entries(bound: float) -> st.SearchStrategy[float]:
    return st.floats(-bound, bound, allow_nan=False, allow_infinity=False, allow_subnormal=False)


def matrix(m: int, n: int, bound: float = 3.0) -> st.SearchStrategy[np.ndarray]:
    """An ``m x n`` float64 array with entries in ``[-bound, bound]`` (shrinks towards 0).

    Every entry is drawn on its own (``fill=nothing``): hypothesis's default fill would make most draws sparse or
    constant matrices.
    """
    return hnp.arrays(np.float64, (m, n), elements=_entries(bound), fill=st.nothing())


def rotation(k: int, bound: float = 2.0, reflections: bool = True) -> st.SearchStrategy[np.ndarray]:
    """An orthogonal ``k x k`` matrix: ``(I - S)(I + S)^{-1}`` (``S`` skew, entries in ``[-bound, bound]``), times
    ``diag(-1, 1, ..., 1)`` when a drawn flag says so.  ``I + S`` is always invertible (``S`` skew).

    The Cayley map reaches every rotation without eigenvalue -1; the flag adds the other component of O(k).
    """
    def build(args):
        upper, flip = args
        S = np.zeros((k, k))
        S[np.triu_indices(k, 1)] = upper
        S = S - S.T
        I = np.eye(k)
        Q = (I - S) @ np.linalg.inv(I + S)
        if flip:
            Q[:, 0] = -Q[:, 0]
        return Q

    n_upper = k * (k - 1) // 2  # only the entries above the diagonal are drawn: nothing to shrink that is unused
    upper = st.lists(_entries(bound), min_size=n_upper, max_size=n_upper)
    return st.tuples(upper, st.booleans() if reflections else st.just(False)).map(build)


def quarter_turn(k: int, jitter: float) -> st.SearchStrategy[np.ndarray]:
    """An orthogonal ``k x k`` matrix far from ``I``: the rotation by a quarter turn in the plane of coordinates
    ``(i, j)`` (``i < j`` drawn), times a :func:`rotation` with skew entries in ``[-jitter, jitter]`` and no reflection
    (shrinks to the exact quarter turn in the plane ``(0, 1)``).  For ``k = 1`` O(1) has no quarter turn; its element
    farthest from ``I``, ``-1``, stands in.

    :func:`rotation` reaches these too, but hypothesis draws its entries towards 0 (``I``) and the edges; this piece
    is a stratum of rotations at Frobenius distance about 2 from ``I``, for a composed ``one_of``.
    """
    if k == 1:
        return st.just(-np.eye(1))

    def build(args):
        (i, j), R = args
        T = np.eye(k)
        T[[i, j], [i, j]] = 0.0
        T[i, j], T[j, i] = -1.0, 1.0
        return T @ R

    plane = st.integers(0, k - 2).flatmap(lambda i: st.tuples(st.just(i), st.integers(i + 1, k - 1)))
    return st.tuples(plane, rotation(k, jitter, reflections=False)).map(build)


def spd(k: int, lo: float, hi: float) -> st.SearchStrategy[np.ndarray]:
    """A symmetric positive definite ``k x k`` matrix ``O diag(spectrum) O^T`` with eigenvalues in ``[lo, hi]``."""
    def build(args):
        O, ev = args
        S = (O * np.asarray(ev)) @ O.T
        return (S + S.T) / 2

    return st.tuples(rotation(k), spectrum(k, lo, hi)).map(build)


def with_singular_values(m: int, k: int, lo: float, hi: float) -> st.SearchStrategy[np.ndarray]:
    """An ``m x k`` matrix (``m >= k``) ``U diag(s) V^T`` with singular values ``s`` in ``[lo, hi]``."""
    if m < k:
        raise ValueError(f"with_singular_values: need m >= k, got {m} < {k}")

    def build(args):
        U, V, s = args
        return (U[:, :k] * np.sort(np.asarray(s))[::-1]) @ V.T

    return st.tuples(rotation(m), rotation(k), spectrum(k, lo, hi)).map(build)


def log_uniform(lo: float, hi: float) -> st.SearchStrategy[float]:
    """A positive number in ``[lo, hi]`` whose log is drawn (scales over decades shrink to ``exp(0) = 1`` if in range)."""
    return st.floats(math.log(lo), math.log(hi), allow_nan=False).map(math.exp)


def instance_seed(instance: dict) -> int:
    """A 63-bit seed derived from the instance's values (:func:`readable` at full float64 precision), so that a
    probe's Monte Carlo is a deterministic function of the shrinkable instance and replays from it."""
    key = hashlib.sha256(repr(sorted(readable(instance, 17).items())).encode()).digest()
    return int.from_bytes(key[:8], "little") & (2**63 - 1)


def tensor(a, batch: bool = True) -> torch.Tensor:
    """``a`` as a float64 torch tensor, with a leading batch dimension of 1 when ``batch``."""
    t = torch.as_tensor(np.asarray(a, dtype=np.float64), dtype=DTYPE)
    return t.unsqueeze(0) if batch else t


def readable(instance: dict, digits: int = 6) -> dict:
    """The instance with arrays as nested lists of rounded floats (what the report and CLI print)."""
    def plain(v):
        if isinstance(v, (np.ndarray, torch.Tensor)):
            return np.round(np.asarray(v, dtype=float), digits).tolist()
        if isinstance(v, float):
            return round(v, digits)
        if isinstance(v, (list, tuple)):
            return [plain(x) for x in v]
        return v

    return {k: plain(v) for k, v in instance.items()}
