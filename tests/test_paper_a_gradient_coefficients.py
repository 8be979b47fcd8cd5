"""The bias-coefficient decision (A.T3, A.T4, A.T5, A.L13/18/22) allows the fit model's truncation, 5 % of the derived
block norm, and no more: a 3 % shortfall with a tight interval passes (strict equality called it violated), a
wrong coefficient 10 % off fails."""
import torch

from theorems.claim import Context
from theorems.evidence import Evidence
from theorems.paper_a import bias_decisions as bd

NS = [8, 16, 32, 64, 128, 256]
TARGET = torch.tensor([[1.0, 0.5]], dtype=torch.float64)  # one point; blocks V = entry 0, K = entry 1
PARTS = {"V": slice(0, 1), "K": slice(1, 2)}


def decide(shortfall: float, resolution: float | None = None, monkeypatch=None) -> list[str]:
    """Per-n draws whose scaled mean sits ``shortfall`` (relative) below the target in both blocks, with a spread
    small enough that the interval is much narrower than the shortfall."""
    gen = torch.Generator().manual_seed(0)
    scale = [n - 1 for n in NS]
    draws = [(1 - shortfall) * TARGET / s + 1e-4 / s * torch.randn(400, 1, 2, generator=gen, dtype=torch.float64)
             for s in scale]
    if resolution is not None:
        monkeypatch.setattr(bd, "COEFFICIENT_RESOLUTION", resolution)
    ev = Evidence(Context(seed=0, budget="quick", figures=False), decisions=2)
    bd.coefficient_decisions(ev, NS, draws, TARGET, scale, PARTS, order=3)
    return [d["status"] for d in ev.decisions]


def test_a_truncation_sized_shortfall_passes_and_a_wrong_coefficient_fails(monkeypatch):
    assert decide(0.03) == ["pass", "pass"]
    assert decide(0.10) == ["fail", "fail"]
    assert decide(0.03, resolution=0.0, monkeypatch=monkeypatch) == ["fail", "fail"]  # the strict rule it replaces
