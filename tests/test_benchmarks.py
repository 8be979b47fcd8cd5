"""The benchmark's accounting of a parallel run's wall time (benchmarks/parallel_runner.py)."""
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from benchmarks.parallel_runner import lpt_makespan, where_the_time_went  # noqa: E402


def test_where_the_time_went_splits_start_up_busy_idle_and_tail(tmp_path):
    # two workers: a busy 1..9 (8 s), b busy 1..4 and 5..6 (4 s, idle 1 s inside and 3 s after its last unit)
    rows = [{"key": "x", "worker": "a", "start": 101.0, "stop": 109.0},
            {"key": "y", "worker": "b", "start": 101.0, "stop": 104.0},
            {"key": "z", "worker": "b", "start": 105.0, "stop": 106.0}]
    stream = tmp_path / "s.json"
    stream.write_text(json.dumps(rows))
    lines = where_the_time_went(stream, start=100.0, wall=10.0, serial_total=10.0)
    assert "1.0 s before the first unit" in lines[0] and "8.0 s running units" in lines[0]
    assert "1.0 s after the last" in lines[0]
    assert "12 s against 10 s serial (+20 % side by side)" in lines[1]
    assert "worker a: busy 8.0 s, idle 0.0 s (of which 0.0 s" in lines[2]
    assert "worker b: busy 4.0 s, idle 4.0 s (of which 3.0 s" in lines[3]


def test_lpt_makespan():
    assert lpt_makespan([3, 3, 2, 2, 2], 2) == 7
    assert lpt_makespan([5, 1], 4) == 5
