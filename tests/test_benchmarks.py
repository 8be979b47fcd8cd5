"""The benchmark's accounting of a parallel run's wall time (benchmarks/parallel_runner.py)."""
import argparse
import json
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from benchmarks.parallel_runner import (against_target, cpu_time, critical_path, list_schedule,  # noqa: E402
                                        parse_what_if, what_if, where_the_time_went, where_the_work_is)


def test_where_the_time_went_splits_start_up_busy_idle_and_tail(tmp_path):
    # two workers: a busy 1..9 (8 s), b busy 1..4 and 5..6 (4 s, idle 1 s inside and 3 s after its last unit)
    rows = [{"key": "x", "worker": "a", "start": 101.0, "stop": 109.0},
            {"key": "y", "worker": "b", "start": 101.0, "stop": 104.0},
            {"key": "z", "worker": "b", "start": 105.0, "stop": 106.0}]
    stream = tmp_path / "s.json"
    stream.write_text(json.dumps(rows))
    lines = where_the_time_went(stream, start=100.0, wall=10.0, serial_total=10.0)
    assert "1.0 s before the first task" in lines[0] and "8.0 s running tasks" in lines[0]
    assert "1.0 s after the last" in lines[0]
    assert "12 s against 10 s serial (+20 % side by side)" in lines[1]
    assert "worker a: busy 8.0 s, idle 0.0 s (of which 0.0 s" in lines[2]
    assert "worker b: busy 4.0 s, idle 4.0 s (of which 3.0 s" in lines[3]


def test_list_schedule_and_critical_path_follow_the_fixture_dependencies():
    # a fixture f (4 s) used by units a (3 s) and b (1 s); an independent unit c (5 s)
    seconds = {"f": 4.0, "a": 3.0, "b": 1.0, "c": 5.0}
    waits = {"a": {"f"}, "b": {"f"}}
    assert critical_path(seconds, waits) == (7.0, ["f", "a"])
    assert list_schedule(seconds, waits, 1) == 13.0
    assert list_schedule(seconds, waits, 2) == 7.0   # f then a on one worker, c then b on the other (5 + 1 <= 7)
    assert list_schedule(seconds, waits, 64) == 7.0  # the critical path bounds it
    # independent tasks: longest first
    assert list_schedule({"x": 3.0, "y": 3.0, "z": 2.0, "u": 2.0, "v": 2.0}, {}, 2) == 7.0


def test_where_the_work_is_splits_task_time_by_kind_and_owner():
    seconds = {"fixture|vision_runs|abc": 6.0, "B.Fig5|check|sps-beats-sgd": 2.0, "B.Fig5|control|SGD for SPS": 1.0,
               "A.T1|check|probe": 0.5, "A.T1|control|probe: swapped": 0.5}
    kinds, owners, longest = where_the_work_is(seconds)
    assert "fixture 6 s (60 %)" in kinds and "check 2 s (20 %)" in kinds and "control 1 s (10 %)" in kinds
    assert "probe 0 s (5 %)" in kinds and "probe control 0 s (5 %)" in kinds
    assert owners.index("fixture vision_runs 6.0 s") < owners.index("B.Fig5 3.0 s") < owners.index("A.T1 1.0 s")
    assert longest.split(": ", 1)[1].startswith("fixture|vision_runs|abc 6.0 s")


def test_operating_characteristics_accepts_only_reviewed_verdicts_rejected_controls_and_no_inconclusive():
    from types import SimpleNamespace

    from benchmarks.operating_characteristics import misses

    def row(passed, failed=(), inconclusive=()):
        return {"pass": list(passed), "fail": list(failed), "inconclusive": list(inconclusive)}

    def claim(cid, verdicts, checks, controls):
        return {"id": cid, "verdicts": verdicts, "checks": checks, "controls": controls}

    ok_ctl = {"mutant": {"rejected": [1, 2], "not rejected": []}}
    summary = {"budget": "quick", "claims": [
        claim("X.1", {"1": "verified", "2": "verified"}, {"a": row([1, 2])}, ok_ctl),               # fine
        claim("X.2", {"1": "violated", "2": "violated"}, {"a": row([], [1, 2])}, ok_ctl),           # a finding: fine
        claim("X.3", {"1": "verified", "2": "inconclusive"}, {"a": row([1], (), [2])}, ok_ctl),     # seed 2 missed
        claim("X.4", {"1": "verified", "2": "verified"}, {"a": row([1, 2])},
              {"mutant": {"rejected": [1], "not rejected": [2]}}),                                   # control lost
        claim("X.5", {}, {}, {}),                                                                    # not checked
    ]}
    reviewed = {"X.1": "verified", "X.2": "violated", "X.3": "verified", "X.4": "verified"}
    found = misses(summary, lambda cid, budget, seed: SimpleNamespace(verdict=reviewed[cid]))
    assert sorted(found) == ["X.3", "X.4"]
    assert "verdict inconclusive at 2" in found["X.3"][0] and "inconclusive at [2]" in found["X.3"][1]
    assert found["X.4"] == ["control 'mutant' not rejected at [2]"]


def test_cpu_time_reads_the_difference_of_two_usages():
    from types import SimpleNamespace

    before = SimpleNamespace(ru_utime=1.0, ru_stime=0.5)
    after = SimpleNamespace(ru_utime=11.0, ru_stime=2.5)
    line = cpu_time(before, after, wall=6.0)
    assert line.startswith("CPU user 10.0 s + kernel 2.0 s = 12.0 s")
    import os

    assert f"{100 * 12 / (6 * (os.cpu_count() or 1)):.0f} % of" in line


def test_the_projection_is_read_against_the_target_with_what_bounds_it():
    # 1632 s of task time, longest task 72 s: on 16 workers the work bounds it (102 s = 1.42x; 1.3x allows 1498 s);
    # on 64 the longest task does (met)
    lines = against_target(1632.0, 72.0, {16: 102.0, 64: 72.3})
    assert "longest task 72.0 s (over 60 s)" in lines[0]
    assert "W =  16: 1.42x (not met; bounded by the work: task time 1632 s, at most 1498 s for 1.3x)" in lines[1]
    assert "W =  64: 1.00x (met; bounded by the longest task" in lines[2]
    assert "(within 60 s)" in against_target(100.0, 10.0, {2: 50.0})[0]


def test_a_what_if_scales_the_matching_tasks_and_refuses_a_malformed_factor():
    seconds = {"fixture|joint_run|ab12": 60.0, "B.T2|check|loss-law": 10.0, "fixture|joint_run_x|cd34": 8.0}
    assert what_if(seconds, [("|joint_run|", 0.5)]) == {"fixture|joint_run|ab12": 30.0, "B.T2|check|loss-law": 10.0,
                                                        "fixture|joint_run_x|cd34": 8.0}
    assert what_if(seconds, [("B.T2", 0.0), ("|check|", 3.0)])["B.T2|check|loss-law"] == 0.0  # the first match
    assert parse_what_if("|joint_run|=0.667") == ("|joint_run|", 0.667)
    assert parse_what_if("a=b=2") == ("a=b", 2.0)
    for bad in ("joint_run", "=0.5", "x=-1", "x=nan", "x=fast"):
        with pytest.raises(argparse.ArgumentTypeError):
            parse_what_if(bad)
