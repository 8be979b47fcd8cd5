"""A small builder for symbolic derivations that end in something sympy proves.

Each step is kept as prose plus a formula rendered to MathML by sympy's
presentation printer, so the report shows the derivation without scripts.
A derivation passes only if every ``prove_*`` step simplifies to an identity.
"""
from __future__ import annotations

import sympy as sp

from theorems.claim import Outcome, Step


def to_mathml(expr) -> str:
    body = sp.mathml(expr, printer="presentation")
    return f'<math xmlns="http://www.w3.org/1998/Math/MathML" display="block">{body}</math>'


class Derivation:
    """Collects steps; ``prove_zero`` / ``prove_equal`` record what sympy establishes."""

    def __init__(self) -> None:
        self.steps: list[Step] = []
        self.proved: list[str] = []
        self.failed: list[str] = []

    def say(self, text: str, expr=None) -> None:
        if expr is None:
            self.steps.append(Step(text))
        else:
            self.steps.append(Step(text, sp.latex(expr), to_mathml(expr)))

    def prove_zero(self, text: str, expr, shown=None) -> bool:
        """Record ``text``; pass iff ``simplify(expr) == 0``.  ``shown`` is what to display."""
        residual = sp.simplify(sp.expand(expr))
        if isinstance(residual, sp.MatrixBase):
            ok = residual.is_zero_matrix is True
        else:
            ok = residual == 0
        self.say(("✔ " if ok else "✘ ") + text, shown if shown is not None else sp.Eq(expr, 0, evaluate=False))
        (self.proved if ok else self.failed).append(text)
        return ok

    def prove_equal(self, text: str, lhs, rhs, shown=None) -> bool:
        """Prove ``lhs == rhs``; ``shown`` is a compact display form (e.g. with MatrixSymbols)."""
        return self.prove_zero(text, lhs - rhs, shown=shown if shown is not None else sp.Eq(lhs, rhs, evaluate=False))

    def outcome(self, summary: str) -> Outcome:
        if self.failed:
            return Outcome("fail", "sympy could not establish: " + "; ".join(self.failed), steps=self.steps)
        if not self.proved:
            return Outcome("inconclusive", "derivation proved nothing", steps=self.steps)
        return Outcome("pass", summary + f" ({len(self.proved)} identities proved by sympy)", steps=self.steps)
