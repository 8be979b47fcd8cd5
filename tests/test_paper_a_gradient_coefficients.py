"""The bias-coefficient and limit decisions (A.T3-A.T5, A.L9-A.L23): each is decided inside half the distance to the
nearest alternative its module names (``decisions.alternative_margin``), the claim's own value skipped, so a
shortfall well inside that band passes, one beyond it fails, and an interval straddling its edge is inconclusive."""
import numpy as np
import pytest
import torch

from theorems.claim import Context
from theorems.evidence import Evidence
from theorems.paper_a.softmax_bias import decisions as bd

NS = [8, 16, 32, 64, 128, 256]
TARGET = torch.tensor([[1.0, 0.5]], dtype=torch.float64)  # one point; blocks V = entry 0, K = entry 1
PARTS = {"V": slice(0, 1), "K": slice(1, 2)}
#: a mutant 20 % below the target in both blocks (margin 10 %), a farther one, and the claim's own value
ALTERNATIVES = {"mutant": 0.8 * TARGET, "farther": 0.5 * TARGET, "claim": TARGET}


def evidence(n: int) -> Evidence:
    return Evidence(Context(seed=0, budget="quick", figures=False), decisions=n)


def decide(shortfall: float, noise: float = 1e-4, alternatives=ALTERNATIVES) -> list[dict]:
    """Per-n draws whose scaled mean sits ``shortfall`` (relative) below the target in both blocks, with spread
    ``noise`` per draw (1e-4: the interval is much narrower than any shortfall tested)."""
    gen = torch.Generator().manual_seed(0)
    scale = [n - 1 for n in NS]
    draws = [(1 - shortfall) * TARGET / s + noise / s * torch.randn(400, 1, 2, generator=gen, dtype=torch.float64)
             for s in scale]
    ev = evidence(2)
    bd.coefficient_decisions(ev, NS, draws, TARGET, scale, PARTS, order=3, alternatives=alternatives)
    return ev.decisions


def test_margin_is_half_the_distance_to_the_nearest_named_alternative():
    rows = decide(0.03)
    assert [r["margin"] for r in rows] == pytest.approx([0.1, 0.05])  # 10 % of 1.0 and of 0.5
    assert all(r["excludes"].startswith("mutant") for r in rows)
    assert [r["band"] for r in rows] == [pytest.approx([0.9, 1.1]), pytest.approx([0.45, 0.55])]


def test_inside_the_band_passes_beyond_it_fails_across_its_edge_is_inconclusive():
    assert [r["status"] for r in decide(0.03)] == ["pass", "pass"]
    assert [r["status"] for r in decide(0.15)] == ["fail", "fail"]
    # centred on the band's edge with a visible interval: neither inside nor outside
    assert [r["status"] for r in decide(0.10, noise=0.02)] == ["inconclusive", "inconclusive"]


def test_a_control_that_swaps_in_the_mutant_is_decided_against_the_claims_value():
    """Swapping the target for the mutant (0.8 x): the claim's own value is the nearest alternative left, so the band
    is 0.8 ± 0.1 and data at the claim's value (1.0) lie outside it."""
    gen = torch.Generator().manual_seed(1)
    scale = [n - 1 for n in NS]
    draws = [TARGET / s + 1e-4 / s * torch.randn(400, 1, 2, generator=gen, dtype=torch.float64) for s in scale]
    ev = evidence(2)
    bd.coefficient_decisions(ev, NS, draws, 0.8 * TARGET, scale, PARTS, order=3, alternatives=ALTERNATIVES)
    assert [r["status"] for r in ev.decisions] == ["fail", "fail"]
    assert all(r["excludes"].startswith("claim") for r in ev.decisions)


def test_no_differing_alternative_leaves_the_block_inconclusive():
    gen = torch.Generator().manual_seed(2)
    scale = [n - 1 for n in NS]
    draws = [TARGET / s + 1e-4 / s * torch.randn(400, 1, 2, generator=gen, dtype=torch.float64) for s in scale]
    ev = evidence(2)
    bd.coefficient_decisions(ev, NS, draws, TARGET, scale, PARTS, order=3, alternatives={"claim": TARGET})
    assert ev.statuses == ["inconclusive", "inconclusive"] and not ev.decisions


def test_limit_decisions_use_the_same_rule():
    m = np.array([n - 1 for n in NS], float)[:, None]
    y = np.column_stack([2.0 + 1 / m[:, 0], 5.0 - 3 / m[:, 0]])
    se = np.full_like(y, 1e-4)
    ev = evidence(2)
    bd.limit_decisions(ev, NS, y, se, [2.0, 5.0], ["a", "b"],
                       alternatives={"untilted": np.array([1.0, 4.0]), "tilted": np.array([2.0, 5.0])})
    assert [r["status"] for r in ev.decisions] == ["pass", "pass"]
    assert [r["margin"] for r in ev.decisions] == pytest.approx([0.5, 0.5])


def test_headline_states_each_interval_against_its_band():
    rows = decide(0.03)
    ev = evidence(2)
    ev.decisions = rows
    h = bd.headline(ev, "coefficient")
    assert h.startswith("coefficient: point 1, V-block 0.97") and "inside 1 ± 0.1" in h and "inside 0.5 ± 0.05" in h


def test_rate_margin_excludes_the_papers_envelope():
    """The exponent's band is -2 ± 0.5: it excludes the paper's envelope -1 (and -3) by construction."""
    lo, hi = bd.RATE_TARGET - bd.RATE_MARGIN.half_width, bd.RATE_TARGET + bd.RATE_MARGIN.half_width
    assert hi < bd.RATE_ENVELOPE and hi - bd.RATE_TARGET == pytest.approx((bd.RATE_ENVELOPE - bd.RATE_TARGET) / 2)
    assert lo == pytest.approx(-2.5)
