"""A fair choice among a probe's strata.

Hypothesis chooses among ``sampled_from`` options and ``booleans`` with a bias that it varies from run to run (its
generator explores), so a probe whose strata are drawn that way decides a number of in-assumption instances that
swings with the seed: with hypothesis 6.170, a 50/50 stratum inside a probe's composite strategy landed in scope 7-29
(``sampled_from``) and 4-32 (``booleans``) times of 40 over seeds 200-214, which left B.L3's probe below its declared
minimum at fresh seed 208.  The residue of a wide integer is close to fair (17-35 of 40 at the same seeds) and still
shrinks to the first option.
"""
from __future__ import annotations

from hypothesis import strategies as st


def fair_sampled_from(options) -> st.SearchStrategy:
    """``options[v % len(options)]`` for ``v`` drawn from ``[0, 2^31)``: each option with probability ``1/len``,
    counted by multiplicity (list an option twice to double it); shrinks to ``options[0]``."""
    options = tuple(options)
    if not options:
        raise ValueError("fair_sampled_from needs at least one option")
    return st.integers(0, 2**31 - 1).map(lambda v: options[v % len(options)])
