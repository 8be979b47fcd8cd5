"""The held-out mutation test's slips stay applicable to today's code (benchmarks/mutation_test.py).

The catch loop itself (minutes per slip) is never run here: these tests hold the declared slips to the code as it
changes (a slip whose old text moved or changed fails, naming it), check that a slip edits exactly its file in a
scratch copy and never this checkout, and drive the command line with the check faked."""
import hashlib
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
from benchmarks import mutation_test as mt  # noqa: E402

SCRIPT = ROOT / "benchmarks" / "mutation_test.py"


def test_the_slips_are_small_declared_values_across_every_class():
    assert len(mt.SLIPS) >= 12
    names = [s.name for s in mt.SLIPS]
    assert len(set(names)) == len(names), "slip names must be unique"
    assert {s.cls for s in mt.SLIPS} == set(mt.CLASSES), "every class needs at least one slip"
    for s in mt.SLIPS:
        assert s.old and s.new and s.old != s.new and s.why.strip() and s.tests, s.name
        assert (ROOT / s.file).is_file(), f"slip {s.name!r}: no file {s.file}"
    with pytest.raises(AttributeError):
        mt.SLIPS[0].new = "x"  # frozen: a slip is a value, never edited in place


@pytest.mark.parametrize("slip", mt.SLIPS, ids=[s.name for s in mt.SLIPS])
def test_every_slip_applies_to_todays_code_exactly_once(slip):
    n = (ROOT / slip.file).read_text().count(slip.old)
    assert n == 1, (f"slip {slip.name!r} is stale: its old text is found {n} times in {slip.file}; update it in "
                    f"benchmarks/mutation_test.py to today's code (old text: {slip.old!r})")


def _digest(paths) -> dict:
    return {p: hashlib.sha256((ROOT / p).read_bytes()).hexdigest() for p in paths}


def test_applying_a_slip_in_a_scratch_copy_changes_exactly_that_file():
    files = sorted({s.file for s in mt.SLIPS})
    before = _digest(files)
    repo = mt.make_scratch(mt.head())
    try:
        for s in mt.SLIPS:
            original = (repo / s.file).read_text()
            mt.apply(s, repo)
            changed = subprocess.run(["git", "status", "--porcelain"], cwd=repo, capture_output=True, text=True,
                                     check=True).stdout.splitlines()
            assert changed == [f" M {s.file}"], (s.name, changed)
            assert (repo / s.file).read_text() == original.replace(s.old, s.new, 1), s.name
            subprocess.run(["git", "checkout", "--quiet", "--", s.file], cwd=repo, check=True)
    finally:
        mt.remove_scratch(repo)
    assert not repo.parent.exists()
    assert _digest(files) == before, "a slip touched this checkout"


def test_a_slip_whose_text_is_missing_is_refused_and_the_file_left_alone(tmp_path):
    (tmp_path / "m.py").write_text("x = 1\ny = 1\n")
    for old, found in (("z = 3", 0), ("= 1", 2)):
        slip = mt.Slip("stale-one", "engine", "m.py", old, "w", "why", ("tests/test_stats.py",))
        with pytest.raises(mt.StaleSlip, match=rf"slip 'stale-one': its old text is found {found} times in m.py"):
            mt.apply(slip, tmp_path)
        assert (tmp_path / "m.py").read_text() == "x = 1\ny = 1\n"


def test_the_command_line_refuses_a_stale_slip_with_one_line_before_running_anything(monkeypatch, capsys):
    stale = mt.Slip("stale-one", "engine", "numerics/stats.py", "no such text in stats", "x", "why",
                    ("tests/test_stats.py",))
    monkeypatch.setattr(mt, "SLIPS", (*mt.SLIPS, stale))
    monkeypatch.setattr(mt, "check_slip", lambda *a: pytest.fail("a stale slip must be refused before any check"))
    assert mt.main(["--only", "stale-one"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "'stale-one'" in err[0] and "numerics/stats.py" in err[0], err


def test_list_names_every_slip_with_its_class_and_file():
    out = subprocess.run([sys.executable, str(SCRIPT), "--list"], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    for s in mt.SLIPS:
        assert any(s.name in ln and s.cls in ln and s.file in ln for ln in out.stdout.splitlines()), s.name


@pytest.mark.parametrize("argv, needle", [(["--only", "nosuch"], "no slip named 'nosuch'"),
                                          (["--bogus"], "unrecognized arguments"),
                                          (["--resume"], "--resume needs --json"),
                                          (["--timeout", "0"], "--timeout")])
def test_a_bad_argument_is_one_line_and_exit_2(capsys, argv, needle):
    with pytest.raises(SystemExit) as e:
        mt.main(argv)
    assert e.value.code == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and needle in err[0], err


@pytest.mark.parametrize("rc, output, status, first", [
    (1, "..F\nFAILED tests/test_stats.py::test_x - assert 1 == 2\n1 failed, 2 passed in 1s\n", "caught",
     "tests/test_stats.py::test_x"),
    (2, "ERROR tests/test_fixture.py - ImportError: boom\n1 error in 1s\n", "caught", "tests/test_fixture.py"),
    (0, "...\n3 passed in 1.0s\n", "missed", ""),
    (5, "no tests ran in 0.1s\n", "error", "no tests collected: tests/"),
    (None, "", "error", "timed out"),
])
def test_a_slip_is_caught_by_a_red_exit_and_a_check_that_ran_nothing_is_an_error(monkeypatch, tmp_path, rc, output,
                                                                               status, first):
    slip = mt.SLIPS[0]
    (tmp_path / "repo" / Path(slip.file).parent).mkdir(parents=True)
    (tmp_path / "repo" / slip.file).write_text((ROOT / slip.file).read_text())
    monkeypatch.setattr(mt, "make_scratch", lambda commit: tmp_path / "repo")
    monkeypatch.setattr(mt, "remove_scratch", lambda repo: None)
    calls = []
    monkeypatch.setattr(mt, "run_check", lambda repo, argv, timeout: calls.append(argv) or (rc, output))
    r = mt.check_slip(slip, "c0ffee", full=False, baseline=False, timeout=5)
    assert (r["status"], r["name"], r["class"]) == (status, slip.name, slip.cls)
    assert r["first_failing"].startswith(first) if first else r["first_failing"] == ""
    assert slip.new in (tmp_path / "repo" / slip.file).read_text()
    assert calls[0][:6] == list(mt.PYTEST) and "-n" not in calls[0]
    assert mt.commands(slip, full=True) == [[*mt.PYTEST, *mt.FULL]]


def test_results_are_written_as_each_slip_ends_and_resume_skips_them(monkeypatch, tmp_path, capsys):
    out = tmp_path / "results.json"
    seen = []

    def fake(slip, commit, full, baseline, timeout):
        seen.append(slip.name)
        assert out.exists() == (len(seen) > 1)  # the previous slip's result is on disk before the next starts
        return {"name": slip.name, "class": slip.cls, "file": slip.file, "status": "caught", "mode": "targeted",
                "baseline": False, "seconds": 1.0, "first_failing": "t", "pytest": "", "commit": commit, "seed": 0}

    monkeypatch.setattr(mt, "check_slip", fake)
    first, second = mt.SLIPS[0].name, mt.SLIPS[-1].name
    assert mt.main(["--only", first, "--only", second, "--json", str(out)]) == 0
    assert seen == [first, second]
    seen.clear()
    assert mt.main(["--only", first, "--only", second, "--json", str(out), "--resume"]) == 0
    assert seen == []
    printed = capsys.readouterr().out
    assert "0 slip(s)" in printed and "2 of 2 caught" in printed
