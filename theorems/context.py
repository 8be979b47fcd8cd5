"""The run a check belongs to (:class:`Context`: seed, budget, device and the false-alarm rate it may spend), and the
family-wise false-alarm budget that sets that rate.

Its own module, below both ``theorems.claim`` (which re-exports it) and ``theorems.fixture`` (whose values are keyed
by the run and whose functions receive it), so neither of those imports the other through it.
"""
from __future__ import annotations

import hashlib
from dataclasses import dataclass, replace
from typing import Any

# torch and scipy are imported where they are used: a command that only parses its arguments (``verify --help``, a
# bad option) imports this module and need not load either

#: Family-wise false-alarm budget for one full run, split by Bonferroni over at
#: most ``MAX_DECISIONS`` stochastic decisions: each decision runs at
#: the budgets a run can have: how much work each check does
BUDGETS = ("quick", "standard", "full")

#: ``alpha = FAMILY_ALPHA / MAX_DECISIONS``.  A run with fewer decisions has a
#: family-wise rate below ``FAMILY_ALPHA``.
FAMILY_ALPHA = 0.01
MAX_DECISIONS = 200


@dataclass(frozen=True)
class Context:
    """What a check may depend on: seed, budget, device.  Nothing else (so records replay).

    ``alpha`` is the false-alarm rate the check may spend; a check that makes ``k`` stochastic
    decisions spends ``alpha / k`` on each (``ctx.split(k)``).  ``figures`` is off when a negative
    control re-runs its target check: the control's outcome is its decision, not its plots.
    """

    seed: int = 0
    budget: str = "quick"
    device: str = "cpu"
    alpha: float = FAMILY_ALPHA / MAX_DECISIONS
    max_examples: int | None = None  # overrides every probe's example count (``verify probe --max-examples``)
    figures: bool = True

    @property
    def z(self) -> float:
        """Two-sided normal quantile for the per-decision false-alarm rate ``alpha``."""
        from scipy import stats

        return float(stats.norm.isf(self.alpha / 2))

    @property
    def level(self) -> float:
        """Confidence level ``1 - alpha`` of the intervals the decisions read."""
        return 1.0 - self.alpha

    def split(self, k: int) -> "Context":
        """The same context with ``alpha / k``: for each of ``k`` decisions (Bonferroni)."""
        if k < 1:
            raise ValueError(f"split: need at least one decision, got {k}")
        return replace(self, alpha=self.alpha / k)

    def pick(self, quick: Any, standard: Any, full: Any | None = None) -> Any:
        """Choose a size by budget (``full`` defaults to ``standard``)."""
        return {"quick": quick, "standard": standard, "full": standard if full is None else full}[self.budget]

    def generator(self, *keys: object) -> "torch.Generator":  # noqa: F821 -- imported below, when needed
        """A torch generator seeded from the run seed and ``keys`` (claim id, check name, ...).

        Seeds are derived by hashing, so a check's random stream does not depend on
        which other checks ran before it.
        """
        import torch

        return torch.Generator(device="cpu").manual_seed(self.derived_seed(*keys))

    def derived_seed(self, *keys: object) -> int:
        """A 63-bit seed from the run seed and ``keys`` (for generators other than torch's)."""
        h = hashlib.sha256(repr((self.seed,) + keys).encode()).digest()
        return int.from_bytes(h[:8], "little") & (2**63 - 1)
