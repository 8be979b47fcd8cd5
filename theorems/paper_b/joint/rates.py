r"""The exponent estimator of the joint-training claims (B.L10, B.L13, B.T2-B.T4): a power-law exponent over the window
``[WINDOW N, N]`` with an interval that adds to the across-run error the drift between the window's two halves (the
finite-t bias we cannot rule out).
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from numerics.paper_b import joint as J
from numerics.stats import mean_se, per_run_slopes

#: exponents are fitted on [WINDOW N, N]: the first fifth of a run holds the attention-saturation transient
#: (s_opt still rising), and the last four fifths still span a factor 5 in t
WINDOW = 0.2


@dataclass
class Exponent:
    """A power-law exponent over a window, with per-run estimates and an interval.

    ``lo, hi = est -/+ (z stat + sys)``: stat = across-run standard error; sys = |first-half estimate -
    second-half estimate| (how much the local exponent still drifts: the finite-t bias we cannot rule out).
    """

    est: float
    stat: float
    sys: float
    z: float
    per_run: np.ndarray
    halves: tuple[float, float]

    @property
    def lo(self) -> float:
        return self.est - self.z * self.stat - self.sys

    @property
    def hi(self) -> float:
        return self.est + self.z * self.stat + self.sys

    def text(self) -> str:
        return f"{self.est:.4f} [{self.lo:.4f}, {self.hi:.4f}]"


def tail_exponent(steps, values, n_steps: float, z: float, increments: bool, start: float = WINDOW) -> Exponent:
    """Exponent of ``values`` (K, B) in t over [start N, N].

    ``increments``: the exponent of the growth itself, from the slope s of the finite-difference rate
    (``exponent = 1 + s``): offsets (``values = c t^e + c0``) drop out.  Otherwise the log-log slope of
    the values.
    """
    steps = np.asarray(steps, float)
    if increments:
        x, Y = J.increment_rates(steps, values)
        shift = 1.0
    else:
        x, Y = steps, np.asarray(values, float)
        shift = 0.0
    t1, t2 = start * n_steps, float(n_steps)
    mid = math.sqrt(t1 * t2)

    def est(a, b):
        m = (x >= a) & (x <= b)
        if m.sum() < 3:
            raise ValueError(f"fewer than 3 records in [{a:.0f}, {b:.0f}]")
        return per_run_slopes(np.log(x[m]), np.log(Y[m])) + shift

    per_run = est(t1, t2)
    m, se = mean_se(per_run) if per_run.size > 1 else (float(per_run[0]), 0.0)
    h1, h2 = float(est(t1, mid).mean()), float(est(mid, t2).mean())
    return Exponent(m, se, abs(h1 - h2), z, per_run, (h1, h2))
