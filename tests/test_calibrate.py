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
