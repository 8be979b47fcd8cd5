"""verify calibrate: per check and control, rates over seeds with exact intervals; stored per seed and reused."""
import json

import pytest
from scipy.stats import binomtest

import toy_claims
from theorems.claim import Check, Claim
from verify import calibrate
from verify.cli import main
from verify.execution import Executor

FLAKY = Claim(id="T.F", title="flaky toy", statement="x = x", fidelity="exact", fidelity_note="toy",
              checks=(Check("a", "numeric", "toy", toy_claims.slow_check, params={"seconds": 0.0, "flaky": 0.5}),),
              controls=(toy_claims.toy(0).controls[0],))
object.__setattr__(FLAKY, "module", "test_calibrate")
SEEDS = list(range(100, 108))


def test_rates_intervals_and_stability(tmp_path):
    claims = [toy_claims.toy(1, seconds=0.0), FLAKY]
    for c in claims[:1]:
        object.__setattr__(c, "module", "toy_claims")
    s = calibrate.calibrate(claims, "quick", SEEDS, tmp_path, Executor(workers=1))
    steady, flaky = s["claims"]
    assert steady["stable"] and set(steady["verdicts"].values()) == {"verified"}
    assert steady["checks"]["a"]["pass_rate"]["k"] == len(SEEDS)
    assert steady["controls"]["wrong a"]["rejection_rate"]["k"] == len(SEEDS)
    # the flaky check is decided from the records at each seed, and its interval is the exact binomial one
    passed = [sd for sd in SEEDS if json.loads((calibrate.seed_dir(tmp_path, "quick", sd) / "T.F.json").read_text())
              ["checks"][0]["status"] == "pass"]
    rate = flaky["checks"]["a"]["pass_rate"]
    assert rate["k"] == len(passed) and 0 < len(passed) < len(SEEDS), "the toy should pass at some seeds only"
    ci = binomtest(rate["k"], rate["n"]).proportion_ci(0.95, method="exact")
    assert (rate["lo"], rate["hi"]) == pytest.approx((ci.low, ci.high))
    assert not flaky["stable"]
    assert s["papers"]["T"]["stable"] == 1 and s["papers"]["T"]["claims"] == 2
    assert json.loads(calibrate.summary_path(tmp_path, "quick").read_text())["seeds"] == SEEDS


def test_a_repeated_calibration_reuses_every_record(tmp_path):
    claim = toy_claims.toy(2, seconds=0.0)
    object.__setattr__(claim, "module", "toy_claims")
    calibrate.calibrate([claim], "quick", SEEDS[:3], tmp_path, Executor(workers=1))
    seen = []
    calibrate.calibrate([claim], "quick", SEEDS[:3], tmp_path, Executor(workers=1),
                        on_seed=lambda seed, counts: seen.append(counts["ran"]))
    assert seen == [0, 0, 0]


@pytest.mark.parametrize("argv, message", [
    (["calibrate", "--seeds", "0"], "--seeds must be at least 1"),
    (["calibrate", "--seeds", "2", "--first-seed", "-1"], "--first-seed must be a non-negative integer"),
    (["calibrate", "--seeds", "2", "-k", "A.L12"], "no checked claim matches"),
])
def test_bad_input_is_one_line_and_exit_2(argv, message, capsys):
    assert main(argv) == 2
    err = capsys.readouterr().err.strip()
    assert message in err and len(err.splitlines()) == 1


def test_every_claimed_text_numerics_writes_has_an_allowed_region():
    """Detection limits read the allowed region off a decision's ``claimed`` text: every form the decide_* rules
    write must parse, or a format change would silently drop limits."""
    from numerics import stats

    tol = stats.Margin(0.1, excludes="a planted tolerance")
    cases = [(stats.decide_interval(0, 1, -0.5, margin=stats.Margin(1e-3, excludes="x")), (-0.501, -0.499)),
             (stats.decide_close(0, 1, 1 / 3, margin=stats.Margin(0.02, excludes="x")), (1 / 3 - 0.02, 1 / 3 + 0.02)),
             (stats.decide_upper(0, 1, -0.7143, max_width=1, tolerance=tol), (float("-inf"), -0.7143)),
             (stats.decide_lower(0, 1, 1e-5, max_width=1, tolerance=tol), (1e-5, float("inf"))),
             (stats.decide_binomial(9, 10, 0.95, at_least=0.9, max_width=1), (0.9, float("inf"))),
             (stats.decide_binomial(1, 10, 0.95, at_most=0.1, max_width=1), (float("-inf"), 0.1))]
    for d, region in cases:
        assert calibrate.allowed_region(d.claimed) == pytest.approx(region, rel=1e-3), d.claimed


def test_detection_limit_is_the_shift_the_decision_rejects_at_95_percent_of_seeds():
    """Planting a deviation by shifting each seed's intervals and re-deciding with the real rule rejects at >= 95 %
    of the seeds just above the reported limit, and at fewer just below it."""
    import numpy as np
    from numerics import stats

    rng = np.random.default_rng(0)
    mids = -0.5 + 0.01 * rng.standard_normal((20, 3))  # 20 seeds x 3 instances, half-width 0.02

    def records(shift):
        return {s: {"details": {"decisions": [
            {"name": f"instance {i + 1}: exponent", "lo": m - 0.02 + shift, "hi": m + 0.02 + shift,
             **{k: getattr(stats.decide_interval(m - 0.02 + shift, m + 0.02 + shift, -0.5,
                                                          margin=stats.Margin(0.1, excludes="x")), k)
                for k in ("rule", "claimed", "margin", "excludes", "status")}} for i, m in enumerate(mids[s])]}}
                for s in range(20)}

    (row,) = calibrate.detection_limits(records(0.0))
    assert row["decision"] == "instance ·: exponent" and row["members"] == 3 and row["seeds"] == 20
    assert row["excludes"] == "x" and row["margin"] == 0.1 and row["verified"]["n"] == 20

    margin = stats.Margin(0.1, excludes="x")

    def rejected(shift):  # seeds at which some instance's shifted interval excludes -1/2
        return sum(any(stats.decide_interval(d["lo"], d["hi"], -0.5, margin=margin).status == "fail"
                       for d in rec["details"]["decisions"]) for rec in records(shift).values())

    for side, sign in (("up", 1), ("down", -1)):
        assert rejected(sign * (row[side] + 1e-9)) >= 19 and rejected(sign * (row[side] - 1e-3)) < 19


def test_a_rate_off_by_delta_moves_the_exponent_interval_by_exactly_delta():
    """Why planting by shift is exact for exponent decisions: a factor x^delta in the data shifts the fitted
    exponent's interval by delta, width unchanged (both fits the suite uses)."""
    import numpy as np
    from numerics import stats

    rng = np.random.default_rng(1)
    x = np.logspace(3, 6, 7)
    y = x**-0.5 * np.exp(0.03 * rng.standard_normal(7))
    se = 0.03 * y
    for delta in (0.013, -0.2):
        a, b = stats.loglog_slope(x, y, se).interval(1, 2.5), stats.loglog_slope(x, y * x**delta, se * x**delta).interval(1, 2.5)
        assert np.allclose(np.subtract(b, a), delta, atol=1e-12)
        Y = np.log(y[:, None] * np.exp(0.01 * rng.standard_normal((7, 5))))
        assert np.allclose(stats.per_run_slopes(np.log(x), Y + delta * np.log(x)[:, None])
                           - stats.per_run_slopes(np.log(x), Y), delta)


def test_the_published_calibration_is_read_when_the_results_have_none(tmp_path, monkeypatch):
    claim = toy_claims.toy(3, seconds=0.0)
    object.__setattr__(claim, "module", "toy_claims")
    calibrate.calibrate([claim], "quick", SEEDS[:2], tmp_path / "ran", Executor(workers=1))
    published = tmp_path / "published"
    published.mkdir()
    (published / "quick.json").write_text(calibrate.summary_path(tmp_path / "ran", "quick").read_text())
    monkeypatch.setattr(calibrate, "PUBLISHED", published)
    assert calibrate.load_summary(tmp_path / "ran", "quick")["published"] is False
    s = calibrate.load_summary(tmp_path / "empty", "quick")
    assert s["published"] is True and s["seeds"] == SEEDS[:2]
    assert calibrate.load_summary(tmp_path / "empty", "standard") is None or calibrate.load_summary(
        tmp_path / "empty", "standard")["published"]


def test_a_partial_calibration_is_merged_into_the_published_one_at_the_same_seeds(tmp_path, monkeypatch):
    """Re-calibrating one claim (``-k``) replaces its row and keeps the others; the paper totals follow."""
    claims = [toy_claims.toy(i, seconds=0.0) for i in (5, 6)]
    for c in claims:
        object.__setattr__(c, "module", "toy_claims")
    monkeypatch.setattr(calibrate, "PUBLISHED", tmp_path / "published")
    both = calibrate.calibrate(claims, "quick", SEEDS[:2], tmp_path / "a", Executor(workers=1))
    calibrate.publish(both, ["T.5", "T.6"])
    one = calibrate.calibrate(claims[1:], "quick", SEEDS[:2], tmp_path / "b", Executor(workers=1))
    one["claims"][0]["marker"] = True  # tell the new row from the old
    merged = json.loads(calibrate.publish(one, ["T.5", "T.6"]).read_text())
    assert [c["id"] for c in merged["claims"]] == ["T.5", "T.6"] and merged["claims"][1].get("marker")
    assert merged["papers"] == both["papers"]
    # at other seeds the rows would describe different runs: refused, and the published file is unchanged
    other = calibrate.calibrate(claims[1:], "quick", SEEDS[2:4], tmp_path / "c", Executor(workers=1))
    with pytest.raises(ValueError, match="cannot be merged"):
        calibrate.publish(other, ["T.5", "T.6"])
    assert json.loads((tmp_path / "published" / "quick.json").read_text()) == merged


def test_each_seed_computes_its_fixtures_once_and_keeps_none(tmp_path, monkeypatch):
    """A calibration is one run per seed: each seed's fixture values are computed once and dropped with its run, so
    memory does not grow with the seeds (no worker restarts between them)."""
    log = tmp_path / "computed.txt"
    monkeypatch.setenv("TOY_FIXTURE_LOG", str(log))
    calibrate.calibrate(toy_claims.SHARING, "quick", SEEDS[:3], tmp_path, Executor(workers=1))
    lines = log.read_text().splitlines()
    assert sorted(lines) == sorted(f"{what} seed={s}" for s in SEEDS[:3]
                                   for what in ("draws n=3 scale=1.0", "draws n=3 scale=10.0", "doubled"))
