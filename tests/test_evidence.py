"""theorems.evidence and the Check/Control declarations: alpha split, figures off for controls, overrides."""
import numpy as np
import pytest

from numerics.stats import Margin, decide_interval

#: the toy decisions' margin: a planted alternative at distance 0.2
M = Margin(0.1, excludes="a planted alternative at 1.2; half the distance")
from theorems.claim import Check, Claim, Context, Control, Outcome
from theorems.evidence import Evidence
from verify import runner


def test_split_divides_alpha_and_widens_the_interval():
    ctx = Context()
    sub = ctx.split(10)
    assert sub.alpha == pytest.approx(ctx.alpha / 10) and sub.z > ctx.z and sub.level == 1 - sub.alpha
    with pytest.raises(ValueError):
        ctx.split(0)


def test_an_interval_at_the_contexts_z_misses_at_its_stated_two_sided_rate():
    """``estimate ± ctx.z · se`` excludes the truth at rate ``alpha``, ``alpha / 2`` on each side (simulated: a
    one-sided quantile would miss at twice the rate and spend the false-alarm budget twice)."""
    ctx = Context(alpha=0.01)
    x = np.random.default_rng(0).standard_normal(400_000)  # (estimate - truth) / se
    se = (ctx.alpha / 2 * (1 - ctx.alpha / 2) / x.size) ** 0.5  # each side's rate's standard error
    for side in (x > ctx.z, x < -ctx.z):
        assert abs(side.mean() - ctx.alpha / 2) < 5 * se, side.mean()
    assert ctx.level == 1 - ctx.alpha


def test_each_key_path_draws_its_own_stream_and_replays():
    """Streams are derived from the run seed and every key (claim, check, index): two checks of one claim, or two
    runs of one check, never share draws; the same keys replay the same draws."""
    import torch

    ctx = Context(seed=7)
    keys = [("A.T1.1", "n-law"), ("A.T1.1", "closed form"), ("A.T1.1", "n-law", 1), ("B.T1", "n-law")]
    seeds = {ctx.derived_seed(*k) for k in keys} | {Context(seed=8).derived_seed(*keys[0])}
    assert len(seeds) == len(keys) + 1
    draw = lambda *k: torch.rand(3, generator=ctx.generator(*k), dtype=torch.float64)  # noqa: E731
    assert torch.equal(draw(*keys[0]), draw(*keys[0])) and not torch.equal(draw(*keys[0]), draw(*keys[1]))


def test_evidence_collects_decisions_and_takes_the_worst():
    ev = Evidence(Context(), decisions=2)
    ev.decide("a", decide_interval(0.95, 1.05, 1.0, margin=M))
    assert ev.outcome().status == "pass"
    ev.decide("b", decide_interval(0.0, 2.0, 1.0, margin=M))
    out = ev.outcome(extra=np.float64(1.5))
    assert out.status == "inconclusive" and "a:" in out.summary and "b:" in out.summary
    assert [m.name for m in out.measurements] == ["a", "b"] and out.measurements[0].level == ev.level
    assert out.details["extra"] == 1.5 and type(out.details["extra"]) is float
    assert ev.z == Context().split(2).z


def test_more_decisions_than_declared_is_an_error():
    ev = Evidence(Context(), decisions=1)
    ev.decide("a", decide_interval(0.95, 1.05, 1.0, margin=M))
    with pytest.raises(RuntimeError, match="declared"):
        ev.decide("b", decide_interval(0.95, 1.05, 1.0, margin=M))


def test_evidence_that_decides_nothing_is_inconclusive():
    assert Evidence(Context()).outcome().status == "inconclusive"


def test_exact_decisions_spend_no_alpha():
    ev = Evidence(Context(), decisions=1)
    ev.exact("x", False, "x failed")
    ev.decide("a", decide_interval(0.95, 1.05, 1.0, margin=M))
    assert ev.outcome().status == "fail"


def test_exponent_fits_and_decides():
    n = np.array([1e2, 1e3, 1e4])
    ev = Evidence(Context(), decisions=1)
    fit = ev.exponent("slope", n, n**-0.5, 1e-3 * n**-0.5, target=-0.5, margin=M)
    assert abs(fit.coef[1] + 0.5) < 1e-9 and ev.outcome().status == "pass"


def test_an_equality_record_carries_its_margin_reason_and_power():
    ev = Evidence(Context(), decisions=1)
    ev.decide("a", decide_interval(0.95, 1.05, 1.0, margin=M))
    row = ev.outcome().details["decisions"][0]
    assert row["margin"] == 0.1 and row["excludes"] == M.excludes and row["band"] == [0.9, 1.1]
    assert 0.0 < row["power"] <= 1.0 and row["max_width"] < 0.2  # the width for 95 % power at the target
    assert "inside 1 ± 0.1" in ev.outcome().summary


# -- a toy claim: the control must re-run the target's own decision with its overrides, figures off ----------

SEEN = []


def check_sum(ctx: Context, offset: float = 0.0) -> Outcome:
    SEEN.append(ctx.figures)
    ev = Evidence(ctx, decisions=1)
    ev.decide("1 + offset", decide_interval(1.0 + offset - 0.01, 1.0 + offset + 0.01, 1.0, margin=M))
    return ev.outcome()


def test_a_control_is_its_target_check_with_overrides_and_no_figures():
    claim = Claim(id="X.1", title="toy", statement="1=1", fidelity="exact", fidelity_note="toy",
                  checks=(Check("sum", "numeric", "toy", check_sum),),
                  controls=(Control("offset 1", "sum", "must fail", {"offset": 1.0}),))
    SEEN.clear()
    rec = runner.run_claim(claim, Context())
    assert rec["verdict"] == "verified" and SEEN == [True, False]
    assert rec["controls"][0]["overrides"] == {"offset": 1.0} and rec["controls"][0]["rejected"]


def test_controls_and_checks_refuse_parameters_their_function_does_not_take():
    with pytest.raises(ValueError, match="takes no parameter"):
        Claim(id="X.2", title="toy", statement="1=1", fidelity="exact", fidelity_note="toy",
              checks=(Check("sum", "numeric", "toy", check_sum),),
              controls=(Control("typo", "sum", "must fail", {"ofset": 1.0}),))
    with pytest.raises(ValueError, match="takes no parameter"):
        Check("sum", "numeric", "toy", check_sum, params={"offest": 0.0})


def test_a_numeric_check_without_a_control_is_refused():
    with pytest.raises(ValueError, match="no negative control"):
        Claim(id="X.3", title="toy", statement="1=1", fidelity="exact", fidelity_note="toy",
              checks=(Check("sum", "numeric", "toy", check_sum),))


def test_symbolic_checks_take_no_context_and_spend_no_alpha():
    c = Check("derivation", "symbolic", "toy", lambda flag=True: Outcome("pass" if flag else "fail", ""))
    assert c.stochastic is False and c.run(Context()).status == "pass"
    assert c.run(Context(), flag=False).status == "fail"


def test_a_control_must_be_a_dict_of_overrides():
    with pytest.raises(ValueError, match="override"):
        Control("lambda", "sum", "re-implements the call", lambda ctx: check_sum(ctx, 1.0))
    with pytest.raises(ValueError, match="override"):
        Control("nothing", "sum", "overrides nothing", {})


def test_the_paper_is_read_off_the_claim_id():
    c = Claim(id="X.9", title="toy", statement="1=1", fidelity="exact", fidelity_note="toy")
    assert c.paper == "X"
    with pytest.raises(ValueError, match="disagrees"):
        Claim(id="X.9", title="toy", statement="1=1", fidelity="exact", fidelity_note="toy", paper="Y")
