"""What paper A's bias checks display: a proved matrix identity renders as the equation it proves (not as sympy's
evaluated ``False`` of ``Eq(Symbol, Matrix)``), and A.T4's two derived norms are two values, not an interval."""
import pytest

from theorems.claim import Context
from theorems.paper_a.softmax_bias import gradient_setups as gs
from theorems.paper_a.softmax_bias import t4_gradient_loss as t4
from theorems.paper_a.softmax_bias import technical_lemmas as tl


def _proved_steps(outcome):
    return [s for s in outcome.steps if s.text.startswith("✔")]


@pytest.mark.parametrize("derive", [t4.symbolic_derivation] + [
    (lambda lemma=lemma: tl.symbolic_constant(lemma)) for lemma in ("A.L13", "A.L18", "A.L22")],
    ids=["A.T4", "A.L13", "A.L18", "A.L22"])
def test_proved_steps_render_their_equation(derive):
    out = derive()
    assert out.status == "pass"
    steps = _proved_steps(out)
    assert steps
    for s in steps:
        assert "False" not in s.latex and "False" not in s.mathml, s.text
        assert "=" in s.latex and "<mo>=</mo>" in s.mathml, s.text


def test_matrix_steps_show_the_matrix():
    (step,) = [s for s in _proved_steps(t4.symbolic_derivation()) if "∂c/∂V" in s.text]
    assert step.latex.startswith(r"\frac{d}{d V} c =") and r"\begin{matrix}" in step.latex


def test_two_routes_reports_each_norm_as_its_own_value():
    ctx = Context(seed=0, budget="quick", figures=False)
    out = t4.check_two_routes(ctx, gs.gradient_instance.fn(ctx))
    norms = [m for m in out.measurements if m.name.startswith("point")]
    assert [m.name for m in norms] == ["point 1: ‖∇_V c‖ (derived)", "point 1: ‖∇_K c‖ (derived)",
                                       "point 2: ‖∇_V c‖ (derived)", "point 2: ‖∇_K c‖ (derived)"]
    assert all(m.lo is None and m.hi is None for m in norms)
