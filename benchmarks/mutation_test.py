"""A held-out mutation test: would the tests notice a small, plausible bug?

    python benchmarks/mutation_test.py                  # every slip, each against its own targeted tests
    python benchmarks/mutation_test.py --only NAME      # one slip (repeatable)
    python benchmarks/mutation_test.py --list           # the declared slips and why each is plausible
    python benchmarks/mutation_test.py --full           # the default test command instead of the targeted tests
    python benchmarks/mutation_test.py --json OUT [--resume]   # results written as each slip ends; --resume skips
                                                               # the slips OUT already holds
    python benchmarks/mutation_test.py --baseline --only NAME  # the same command on an unmodified copy (must be green)

A *slip* (a table in ``benchmarks/slips.toml``) is one exact text replacement in one file of the engines
(``numerics/``), the statistics, the runner and verdict rules, the fixtures or a claim: the kind of bug a careful
developer still makes (a sign, a comparison, a dropped factor, a quantile, a key that forgets a parameter). Each slip
is applied alone to a fresh copy of HEAD in a scratch directory (a local ``git clone``: tests that read the ledger's
git history need one, and ``git worktree`` would write into this checkout's ``.git``), and a check command runs there
with ``PYTHONPATH`` and the working directory at the copy, with this checkout's interpreter. The slip is *caught* when
the command exits non-zero.

The check command is the slip's own targeted tests (``Slip.tests``: pytest arguments, one invocation each, run in
order until one goes red) at the fixed seed ``SEED``, or with ``--full`` the default test command.  Both stop at the
first failure (``-x``): one red test is enough to catch a slip, and the rest of a full run would cost minutes.
"Held out": the slips are not what the tests were written against, so the share caught measures how well the tests
guard the code, not how well they fit their own examples.  A slip whose old text is no longer found exactly once is
refused before anything runs (``tests/test_mutation_test.py`` fails on it too, naming the slip): the list must be
kept applicable as the code changes.

Exit status: 0 when the run completed (a missed slip is a finding, printed, not an error), 2 on a bad argument or a
stale slip, 130 on Ctrl-C (the scratch copies and the running tests are removed first).
"""
from __future__ import annotations

import argparse
import json
import os
import re
import shlex
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import tomllib
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PYTHON = str(ROOT / ".venv" / "bin" / "python")

#: the seed of the claims table and the report (``docs/testing.md``): every claim's expectation there is reviewed, so
#: an unmodified copy is green at it and a red test is the slip's doing, not a fresh seed's power miss
SEED = 0

CLASSES = ("engine", "statistics", "runner/verdict rules", "fixtures", "claim")

#: pytest's options for every check: quiet, test order fixed (a red test must replay), stop at the first failure
PYTEST = ("-m", "pytest", "-q", "-x", "-p", "no:randomly")
#: the default test command (``./suite test``): two workers, a claim's tests on one worker
FULL = ("-n", "2", "--dist", "loadgroup")

#: seconds a check may take before it counts as an error (a hang is not a catch)
TIMEOUT = {"targeted": 1200, "full": 3600}


@dataclass(frozen=True)
class Slip:
    """One plausible bug: ``old`` (found exactly once in ``file``) replaced by ``new``.

    ``tests``: the targeted check, each entry one pytest invocation's arguments (split like a shell line): the tests
    a developer would run after touching ``file``."""

    name: str
    cls: str
    file: str
    old: str
    new: str
    why: str
    tests: tuple[str, ...]


#: the declared slips (a table per slip, a data file so that the list reads as data)
SLIPS_FILE = ROOT / "benchmarks" / "slips.toml"


def load_slips(path: Path = SLIPS_FILE) -> tuple[Slip, ...]:
    """The slips declared in ``path`` (``benchmarks/slips.toml``), in its order."""
    with open(path, "rb") as f:
        table = tomllib.load(f)["slip"]
    return tuple(Slip(s["name"], s["class"], s["file"], s["old"], s["new"], s["why"], tuple(s["tests"]))
                 for s in table)


SLIPS: tuple[Slip, ...] = load_slips()


class StaleSlip(ValueError):
    """A slip whose old text is not found exactly once in its file."""


def _by_name() -> dict[str, Slip]:
    return {s.name: s for s in SLIPS}


def occurrences(slip: Slip, text: str) -> int:
    return text.count(slip.old)


def refuse_stale(slip: Slip, text: str | None) -> None:
    """Raise :class:`StaleSlip` (one line, naming the slip) unless ``slip.old`` occurs exactly once in ``text``."""
    if text is None:
        raise StaleSlip(f"slip {slip.name!r}: {slip.file} does not exist")
    n = occurrences(slip, text)
    if n != 1:
        raise StaleSlip(f"slip {slip.name!r}: its old text is found {n} times in {slip.file}, not once: update the "
                        "slip to today's code")


def apply(slip: Slip, root: Path) -> None:
    """Apply ``slip`` to the copy at ``root`` (refused, unchanged, unless its old text is there exactly once)."""
    path = root / slip.file
    text = path.read_text() if path.is_file() else None
    refuse_stale(slip, text)
    path.write_text(text.replace(slip.old, slip.new, 1))


def _git(*args: str, cwd: Path = ROOT) -> str:
    return subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True, text=True).stdout


def head() -> str:
    return _git("rev-parse", "HEAD").strip()


def head_text(path: str, commit: str) -> str | None:
    """``path`` at ``commit`` (None where it does not exist)."""
    r = subprocess.run(["git", "show", f"{commit}:{path}"], cwd=ROOT, capture_output=True, text=True)
    return r.stdout if r.returncode == 0 else None


#: the scratch copies alive now, removed on exit and on Ctrl-C
_SCRATCH: list[Path] = []


def make_scratch(commit: str) -> Path:
    """A fresh copy of ``commit`` in a new temporary directory: a local clone (only reads this checkout)."""
    tmp = Path(tempfile.mkdtemp(prefix="mutation-"))
    _SCRATCH.append(tmp)
    repo = tmp / "repo"
    _git("clone", "--quiet", "--no-hardlinks", "--no-checkout", str(ROOT), str(repo), cwd=tmp)
    _git("checkout", "--quiet", "--detach", commit, cwd=repo)
    return repo


def remove_scratch(repo: Path) -> None:
    tmp = repo.parent
    shutil.rmtree(tmp, ignore_errors=True)
    if tmp in _SCRATCH:
        _SCRATCH.remove(tmp)


def commands(slip: Slip, full: bool) -> list[list[str]]:
    """The check's pytest invocations (arguments after the interpreter)."""
    if full:
        return [[*PYTEST, *FULL]]
    return [[*PYTEST, *shlex.split(t)] for t in slip.tests]


_FIRST_RED = re.compile(r"^(?:FAILED|ERROR) (\S+)", re.M)
_SUMMARY = re.compile(r"^=*\s*(\d+ (?:passed|failed|error|errors|skipped|xfailed|xpassed|deselected)\b.*?)\s*=*$", re.M)

#: pytest's exit codes that mean the tests did not run: an internal error, a usage error (a bad -k or node id), no
#: test collected.  Such a check decided nothing, so the slip is an error of this script, not caught.
NOT_RUN = {3: "pytest internal error", 4: "pytest usage error", 5: "no tests collected"}

#: the process group of the running check (killed on Ctrl-C: its xdist workers with it)
_RUNNING: list[subprocess.Popen] = []


def run_check(repo: Path, argv: list[str], timeout: float) -> tuple[int | None, str]:
    """Run one pytest invocation in the copy; (exit code, or None on a timeout; its output)."""
    env = {k: v for k, v in os.environ.items() if k not in ("PYTEST_ADDOPTS", "VERIFY_STORE_RESULTS")}
    env |= {"PYTHONPATH": str(repo), "VERIFY_TEST_SEED": str(SEED), "PYTHONDONTWRITEBYTECODE": "1"}
    p = subprocess.Popen([PYTHON, *argv], cwd=repo, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                         text=True, start_new_session=True)
    _RUNNING.append(p)
    try:
        out, _ = p.communicate(timeout=timeout)
        return p.returncode, out
    except subprocess.TimeoutExpired:
        _kill(p)
        out, _ = p.communicate()
        return None, out
    except BaseException:  # Ctrl-C: the tests (and their xdist workers) must not outlive the copy they run in
        _kill(p)
        p.wait()
        raise
    finally:
        _RUNNING.remove(p)


def _kill(p: subprocess.Popen) -> None:
    try:
        os.killpg(p.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass


def first_red(output: str) -> str:
    m = _FIRST_RED.search(output)
    if m:
        return m.group(1)
    lines = [ln for ln in output.strip().splitlines() if ln.strip()]
    return lines[-1][:160] if lines else ""


def summary(output: str) -> str:
    found = _SUMMARY.findall(output)
    return found[-1] if found else ""


def check_slip(slip: Slip, commit: str, full: bool, baseline: bool, timeout: float) -> dict:
    """Apply ``slip`` (unless ``baseline``) to a fresh copy and run its check there; the result as a dict."""
    t0 = time.perf_counter()
    repo = make_scratch(commit)
    try:
        if not baseline:
            apply(slip, repo)
        status, red, last = "missed", "", ""
        for argv in commands(slip, full):
            rc, out = run_check(repo, argv, timeout)
            last = summary(out)
            if rc is None:
                status, red = "error", f"timed out after {timeout:g} s: {' '.join(argv[len(PYTEST):])}"
                break
            if rc in NOT_RUN:
                status, red = "error", f"{NOT_RUN[rc]}: {' '.join(argv[len(PYTEST):])}"
                break
            if rc != 0:
                status, red = "caught", first_red(out)
                break
    finally:
        remove_scratch(repo)
    return {"name": slip.name, "class": slip.cls, "file": slip.file, "status": status,
            "mode": "full" if full else "targeted", "baseline": baseline, "seconds": round(time.perf_counter() - t0, 1),
            "first_failing": red, "pytest": last, "commit": commit, "seed": SEED}


def write_results(path: Path, results: list[dict]) -> None:
    """All results so far, written atomically (a Ctrl-C or a crash leaves the previous complete file)."""
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(json.dumps({"results": results}, indent=1) + "\n")
    os.replace(tmp, path)


def read_results(path: Path) -> list[dict]:
    if not path.exists():
        return []
    try:
        data = json.loads(path.read_text())
        return list(data["results"])
    except (ValueError, KeyError, TypeError):
        raise SystemExit(_one_line(f"{path} is not a results file of this script; move it or drop --resume"))


def _one_line(msg: str) -> int:
    """Print ``msg`` as one line on stderr; the exit status of a refused command (2)."""
    print(f"mutation_test: error: {msg}", file=sys.stderr)
    return 2


def line(r: dict) -> str:
    word = {"caught": "caught", "missed": "MISSED", "error": "ERROR"}[r["status"]]
    if r["baseline"]:
        word = {"caught": "RED", "missed": "green", "error": "ERROR"}[r["status"]]
    tail = r["first_failing"] if r["status"] != "missed" else r["pytest"]
    return f"{word:7} {r['seconds']:7.1f} s  {r['class']:21} {r['name']:30} {tail}"


def class_summary(results: list[dict], baseline: bool = False) -> list[str]:
    """Per class: how many slips were caught, and which were missed (at a baseline: how many copies were green)."""
    caught_word, missed_word = ("red", "green") if baseline else ("caught", "missed")
    out = []
    for cls in CLASSES:
        rows = [r for r in results if r["class"] == cls]
        if not rows:
            continue
        caught = sum(r["status"] == "caught" for r in rows)
        missed = [r["name"] for r in rows if r["status"] == "missed"]
        errors = [r["name"] for r in rows if r["status"] == "error"]
        text = f"{cls:21} {caught} of {len(rows)} {caught_word}"
        text += f"; {missed_word}: {', '.join(missed)}" if missed else ""
        text += f"; errors: {', '.join(errors)}" if errors else ""
        out.append(text)
    caught = sum(r["status"] == "caught" for r in results)
    secs = sum(r["seconds"] for r in results)
    out.append(f"{'all':21} {caught} of {len(results)} {caught_word} in {secs:.0f} s")
    return out


class _Parser(argparse.ArgumentParser):
    def error(self, message):  # one line, exit 2 (argparse's usage block would bury it)
        raise SystemExit(_one_line(message))


def parse(argv: list[str] | None) -> argparse.Namespace:
    p = _Parser(prog="mutation_test.py", description="Apply held-out slips one at a time to a scratch copy of HEAD "
                "and count those the tests catch (docs/testing.md, 'Mutation test').")
    p.add_argument("--list", action="store_true", help="list the declared slips and exit")
    p.add_argument("--only", action="append", metavar="NAME", default=[],
                   help="run only this slip (repeatable; default: every slip)")
    p.add_argument("--full", action="store_true",
                   help="run the default test command (pytest -q -n 2 --dist loadgroup -p no:randomly, and -x) "
                        "instead of each slip's targeted tests")
    p.add_argument("--json", type=Path, metavar="OUT", help="write the results to OUT as each slip finishes")
    p.add_argument("--resume", action="store_true", help="skip the slips OUT already holds (same mode and commit)")
    p.add_argument("--baseline", action="store_true",
                   help="run the selected slips' checks on an unmodified copy (each must be green)")
    p.add_argument("--timeout", type=float, metavar="S",
                   help=f"seconds per check before it is an error (default {TIMEOUT['targeted']} targeted, "
                        f"{TIMEOUT['full']} with --full)")
    a = p.parse_args(argv)
    if a.resume and a.json is None:
        p.error("--resume needs --json OUT")
    unknown = [n for n in a.only if n not in _by_name()]
    if unknown:
        p.error(f"no slip named {', '.join(map(repr, unknown))} (--list shows them)")
    if a.timeout is not None and not a.timeout > 0:
        p.error("--timeout must be a positive number of seconds")
    return a


def main(argv: list[str] | None = None) -> int:
    a = parse(argv)
    if a.list:
        for s in SLIPS:
            print(f"{s.name:30} {s.cls:21} {s.file}\n{'':30} {s.why}")
        return 0
    commit = head()
    selected = [_by_name()[n] for n in dict.fromkeys(a.only)] if a.only else list(SLIPS)
    stale = []
    for s in selected:
        try:
            refuse_stale(s, head_text(s.file, commit))
        except StaleSlip as e:
            stale.append(str(e))
    if stale:
        for msg in stale:
            _one_line(msg)
        return 2
    mode = "full" if a.full else "targeted"
    results = read_results(a.json) if a.json and a.resume else []
    other = {r["commit"] for r in results} - {commit}
    if other:
        return _one_line(f"{a.json} holds results of commit {sorted(other)[0][:12]}, not HEAD {commit[:12]}: "
                         "rerun without --resume")
    done = {(r["name"], r["mode"], r["baseline"]) for r in results}
    todo = [s for s in selected if (s.name, mode, a.baseline) not in done]
    timeout = a.timeout or TIMEOUT[mode]
    print(f"{len(todo)} slip(s) at {commit[:12]}, {mode} checks, seed {SEED}"
          + (f" ({len(selected) - len(todo)} already in {a.json})" if len(todo) < len(selected) else "")
          + (" [baseline: no slip applied]" if a.baseline else ""), flush=True)
    ran = []
    for s in todo:
        r = check_slip(s, commit, a.full, a.baseline, timeout)
        ran.append(r)
        results.append(r)
        if a.json:
            write_results(a.json, results)
        print(line(r), flush=True)
    print()
    shown = [r for r in results if r["mode"] == mode and r["baseline"] == a.baseline
             and r["name"] in {s.name for s in selected}]
    for text in class_summary(shown, a.baseline):
        print(text)
    return 0


def _interrupted(signum, frame):
    raise KeyboardInterrupt


def cli() -> int:
    signal.signal(signal.SIGTERM, _interrupted)
    try:
        return main()
    except KeyboardInterrupt:
        for p in list(_RUNNING):
            _kill(p)
        print("\nmutation_test: interrupted; scratch copies removed", file=sys.stderr)
        return 130
    finally:
        for tmp in list(_SCRATCH):
            shutil.rmtree(tmp, ignore_errors=True)
            _SCRATCH.remove(tmp)


if __name__ == "__main__":
    sys.exit(cli())
