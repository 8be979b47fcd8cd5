"""theorems.strata: a probe's strata drawn fairly (hypothesis's own choices are biased per run)."""
import hypothesis
import pytest
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

from theorems.strata import fair_sampled_from


def _in_scope(coin, seed: int, n: int = 40) -> int:
    """How many of ``n`` draws of a probe-shaped composite (B.L3's: the coin, then primitives whose ranges depend on
    it) land in scope at hypothesis seed ``seed``."""
    seen = []

    @st.composite
    def instance(draw):
        inside = draw(coin)
        if not inside:
            draw(st.sampled_from(["orthogonal", "orthogonal", "gaussian"]))
        draw(st.integers(1, 5)), draw(st.integers(2, 4)), draw(st.sampled_from(["gd", "ngd", "polyak"]))
        draw(st.floats(-2.0, -0.5) if inside else st.floats(-2.0, 1.0))
        draw(st.sampled_from([0.0, 1e-4] if inside else [0.0, 1e-4, 1e-3, 1e-2, 0.1, 0.5, 1.0]))
        if not inside:
            draw(st.sampled_from([0.0, 0.0, 0.5, 1.5]))
        draw(st.integers(6, 40)), draw(st.floats(-1.0, 1.5)), draw(st.integers(0, 2**31 - 1))
        return inside

    @settings(max_examples=n, database=None, deadline=None, phases=(Phase.generate,),
              suppress_health_check=list(HealthCheck))
    @hypothesis.seed(seed)
    @given(instance())
    def prop(inside):
        seen.append(inside)

    prop()
    return sum(seen)


SEEDS = range(200, 215)


def test_the_fair_coin_keeps_every_seed_near_half_in_scope():
    counts = [_in_scope(fair_sampled_from([True, False]), seed) for seed in SEEDS]
    assert min(counts) >= 12, counts  # measured 17-35 of 40 (hypothesis 6.170); B.L3 and B.L4 need 10 decided


def test_hypothesis_booleans_are_what_it_replaces():
    # the per-run bias this module exists for (measured 4-32 of 40 on this composite); if a hypothesis release makes
    # st.booleans() fair here, this test says so and the strata can go back to it
    counts = [_in_scope(st.booleans(), seed) for seed in SEEDS]
    assert min(counts) < 10, counts


def test_multiplicity_counts_and_shrinking_goes_to_the_first_option():
    assert hypothesis.find(fair_sampled_from(["inside", "inside", "out"]), lambda v: True) == "inside"
    with pytest.raises(ValueError, match="at least one option"):
        fair_sampled_from([])
