"""Paper A's assumptions (Section 3.2), defined once: every claim module names these, never its own wording.

A1 and A2 are the source text's (exact / reconstructed).  A3's constant is lost: our reconstruction gives it as a norm
bound that keeps the exponential moments of Lemma 7 finite near the manifold; each claim instantiates it with the
value its instances use (``a3(...)``), so the report shows which bound a verdict rests on.
"""
from __future__ import annotations

from theorems.claim import Assumption

A1 = Assumption("A1", "Σ positive definite (x ~ N(0, Σ))")
A2 = Assumption("A2", "r ≥ d and W* of full column rank, so σ_d(M*) = σ_d(W*Σ^{1/2}) > 0")


def a3(instance: str) -> Assumption:
    """A3 as this claim's instances satisfy it (the constant is lost; ``instance`` says which bound holds here)."""
    return Assumption("A3 (reconstructed)", "a norm bound on W*, Σ keeping E exp(c xᵀKx′) finite near Mfold "
                      f"(‖B‖op < 1/2, Lemma 7); here {instance}")
