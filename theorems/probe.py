"""Run a hypothesis search for instances that violate a claim's conclusion.

A probe is a strategy over instances plus the claim's conclusion as a predicate.
Hypothesis draws instances (seeded from the run seed, so a probe replays), and
when the conclusion fails it shrinks the instance to a minimal counterexample,
which is returned in the outcome's details.

With ``assumptions`` (a function ``instance -> {name: holds}``) every drawn
instance lands in one of four cells:

* assumptions hold, conclusion holds: expected;
* an assumption fails, the conclusion fails: evidence the assumption matters;
* an assumption fails, the conclusion still holds: the assumption may be stronger than needed;
* assumptions hold, the conclusion fails: a **counterexample** (the probe fails and shrinks it).

Without ``assumptions`` every failure of the conclusion is a counterexample.

Because each probed instance may itself be a stochastic decision, the per-example
false-alarm rate is ``ctx.alpha / max_examples`` (Bonferroni within the probe):
the whole probe raises a false alarm with probability at most ``ctx.alpha``.
"""
from __future__ import annotations

from typing import Any, Callable

import hypothesis
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

from theorems.claim import Context, Outcome

HOLD_HOLD = "assumptions hold, conclusion holds"
FAIL_FAIL = "assumption fails, conclusion fails"
FAIL_HOLD = "assumption fails, conclusion holds"
COUNTEREXAMPLE = "assumptions hold, conclusion fails"


def run_probe(
    ctx: Context,
    strategy: st.SearchStrategy,
    conclusion: Callable[[Any, float], tuple[bool, str, str]],
    max_examples: int,
    describe: Callable[[Any], dict] = lambda inst: {"instance": repr(inst)},
    assumptions: Callable[[Any], dict[str, bool]] | None = None,
) -> Outcome:
    """Search for a counterexample.

    ``conclusion(instance, alpha_each) -> (holds, label, detail)``: ``label`` names a
    sub-case for the counts (e.g. ``"in scope"``), ``detail`` says why it failed.
    ``assumptions(instance) -> {name: bool}`` turns on the four-cell accounting.
    """
    max_examples = ctx.max_examples or max_examples
    alpha_each = ctx.alpha / max_examples
    cells: dict[str, int] = {}
    examples: dict[str, dict] = {}  # first example seen in each non-expected cell
    failures: list[tuple[Any, str]] = []
    phases = (Phase.explicit, Phase.generate, Phase.shrink)

    @settings(max_examples=max_examples, database=None, deadline=None, phases=phases,
              suppress_health_check=list(HealthCheck), derandomize=False, print_blob=False)
    @hypothesis.seed(ctx.seed)
    @given(strategy)
    def prop(inst):
        holds, label, detail = conclusion(inst, alpha_each)
        if assumptions is None:
            cell, counter = label, not holds
        else:
            a = assumptions(inst)
            ok = all(a.values())
            cell = (HOLD_HOLD if holds else COUNTEREXAMPLE) if ok else (FAIL_HOLD if holds else FAIL_FAIL)
            counter = ok and not holds
            if cell != HOLD_HOLD and cell not in examples:
                examples[cell] = describe(inst) | {"failed_assumptions": [k for k, v in a.items() if not v],
                                                   "detail": detail}
        cells[cell] = cells.get(cell, 0) + 1
        if counter:
            failures.append((inst, detail))
            raise AssertionError(detail)

    try:
        prop()
    except AssertionError:
        pass  # hypothesis re-raises the shrunk example last; it is failures[-1]
    n = sum(cells.values())
    details = {"cells": cells, "examples_evaluated": n, "max_examples": max_examples,
               "alpha_per_example": alpha_each, "hypothesis_seed": ctx.seed, "cell_examples": examples}
    if failures:
        inst, detail = failures[-1]
        details["counterexample"] = describe(inst) | {"why": detail}
        return Outcome("fail", f"counterexample found (shrunk): {detail}", details=details)
    cell_txt = ", ".join(f"{v} {k}" for k, v in sorted(cells.items()))
    return Outcome("pass", f"no counterexample in {n} examples ({cell_txt})", details=details)
