"""Registry, runner verdicts, results records, CLI errors and the HTML report."""
import argparse
import json
import time
from pathlib import Path
import re
from dataclasses import replace
import subprocess
import sys

import pytest

from theorems.claim import Check, Claim, Context, Control, Outcome
from verify import cli, registry, report, results, runner


def _fake_claim(check_status="pass", control_status="fail", extra=None):
    def check(ctx, wrong: bool = False):
        import torch

        if wrong:  # the control's variant
            return Outcome(control_status, "ctl")
        v = float(torch.rand((), generator=ctx.generator("fake", "check")))
        return Outcome(check_status, f"value {v}", details={"v": v})

    return Claim(id="Z.T0", title="fake", statement=r"x = x", fidelity="exact", fidelity_note="test",
                 checks=(Check("c", "numeric", "d", check),),
                 controls=(Control("k", "c", "wrong", {"wrong": True}),), module=__name__)


@pytest.mark.parametrize("check, control, expected", [
    ("pass", "fail", "verified"),
    ("fail", "fail", "violated"),
    ("inconclusive", "fail", "inconclusive"),
    ("pass", "pass", "inconclusive"),  # a control that is not rejected voids the pass
])
def test_verdict_rules(check, control, expected):
    rec = runner.run_claim(_fake_claim(check, control), Context())
    assert rec["verdict"] == expected


def test_crashing_check_is_inconclusive_not_passed():
    def boom():
        raise RuntimeError("kaput")

    c = Claim(id="Z.T1", title="t", statement="x", fidelity="exact", fidelity_note="n",
              checks=(Check("c", "symbolic", "d", boom, stochastic=False),), module=__name__)
    rec = runner.run_claim(c, Context())
    assert rec["verdict"] == "inconclusive" and "kaput" in rec["reason"]
    # the record keeps where it raised (an error seen once on a Dask worker is located from the record alone)
    assert "in boom" in rec["checks"][0]["details"]["traceback"]


def test_a_crash_is_recorded_by_its_type_and_first_line_not_by_a_note():
    """hypothesis adds the falsifying example as a note, whose last line is ")": the record names the exception."""
    def boom():
        e = RuntimeError("kaput\nsecond line")
        e.add_note("Falsifying example: prop(\n    inst=...,\n)")
        raise e

    c = Claim(id="Z.T2", title="t", statement="x", fidelity="exact", fidelity_note="n",
              checks=(Check("c", "symbolic", "d", boom, stochastic=False),), module=__name__)
    check = runner.run_claim(c, Context())["checks"][0]
    assert check["summary"] == "check raised RuntimeError: kaput"
    error = check["details"]["error"]
    assert error.startswith("RuntimeError: kaput\nsecond line") and "Falsifying" in error


def test_a_pass_against_a_nan_target_is_not_a_pass():
    # numerics.stats compares the interval with the target; against NaN neither "fail" nor "too wide" fires, so a NaN
    # prediction (A.T2's linearized curve took the log of negative rounding in a control once) would have passed
    from numerics.stats import Margin, decide_equal
    from theorems.evidence import Evidence

    def check(ctx, target: float = 1.0):
        ev = Evidence(ctx)
        ev.decide("estimate = prediction", decide_equal(1.0, 0.01, target, ev.z, margin=Margin(
            0.1, excludes="a planted alternative 20 % off; half the distance", relative=True)))
        return ev.outcome()

    c = Claim(id="Z.T3", title="t", statement="x", fidelity="exact", fidelity_note="n",
              checks=(Check("c", "numeric", "d", check),), controls=(Control("k", "c", "off", {"target": 2.0}),),
              module=__name__)
    assert runner.run_claim(c, Context())["verdict"] == "verified"
    def nan_check(ctx, target: float = float("nan")):
        return check(ctx, target)

    nan_target = replace(c, checks=(Check("c", "numeric", "d", nan_check),))
    rec = runner.run_claim(nan_target, Context())
    assert rec["verdict"] == "inconclusive" and "not a number" in rec["checks"][0]["summary"]


def test_numeric_check_without_control_is_refused():
    with pytest.raises(ValueError, match="no negative control"):
        Claim(id="Z.T2", title="t", statement="x", fidelity="exact", fidelity_note="n",
              checks=(Check("c", "numeric", "d", lambda ctx: Outcome("pass", "")),))


def test_same_seed_same_record(tmp_path):
    a = runner.run_claim(_fake_claim(), Context(seed=3))
    b = runner.run_claim(_fake_claim(), Context(seed=3))
    c = runner.run_claim(_fake_claim(), Context(seed=4))
    assert results.replay_view(a) == results.replay_view(b)
    assert results.replay_view(a) != results.replay_view(c)


def test_real_claim_check_replays():
    claim = registry.get("A.T1.1")
    check = next(c for c in claim.checks if c.name == "closed-form-vs-monte-carlo")
    o1, o2 = check.run(Context(seed=7)), check.run(Context(seed=7))
    assert [m.as_dict() for m in o1.measurements] == [m.as_dict() for m in o2.measurements]


def test_records_written_atomically_and_readable(tmp_path):
    rec = runner.run_claim(_fake_claim(), Context())
    path = results.write_record(tmp_path, rec)
    assert json.loads(path.read_text())["verdict"] == "verified"
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".")]  # no temp files left behind
    assert results.read_records(tmp_path)[0]["claim"]["id"] == "Z.T0"


def test_other_json_beside_the_records_is_not_read_as_a_record(tmp_path):
    """A sensitivity map or any other JSON copied into a results directory is skipped, not read as a record (a map
    carries the records' schema version, and its "claim" is a string)."""
    results.write_record(tmp_path, runner.run_claim(_fake_claim(), Context()))
    (tmp_path / "Z.T0.map.json").write_text(json.dumps({"schema_version": results.SCHEMA_VERSION, "claim": "Z.T0"}))
    (tmp_path / "list.json").write_text("[1, 2]")
    assert [r["claim"]["id"] for r in results.read_records(tmp_path)] == ["Z.T0"]


def test_registry_finds_claims_and_rejects_unknown_ids():
    assert registry.get("a.t1.1").id == "A.T1.1"
    with pytest.raises(registry.UnknownClaimError):
        registry.get("A.T99")


def test_select_takes_several_patterns_and_rejects_any_unmatched():
    # `-k A.T4 -k B.L11` once silently ran B.L11 alone (argparse kept the last -k)
    assert [c.id for c in registry.select(["B.L11", "A.T4"])] == ["A.T4", "B.L11"]
    assert [c.id for c in registry.select("A.T4")] == ["A.T4"]
    # an exact id selects that claim only; a glob or a substring that is no id selects every match
    assert [c.id for c in registry.select("B.L1")] == ["B.L1"]
    assert [c.id for c in registry.select("B.L1*")] == ["B.L1", "B.L10", "B.L11", "B.L12", "B.L13"]
    assert {"A.L1", "A.L10"} <= {c.id for c in registry.select("A.L")}
    with pytest.raises(registry.UnknownClaimError, match="nope"):
        registry.select(["A.T4", "nope"])


def test_cli_k_repeats(capsys):
    code, out, _ = _cli_in_process(capsys, "list", "-k", "A.L1*", "-k", "B.L13")
    assert code == 0
    ids = {line.split()[0] for line in out.splitlines() if line.strip()}
    assert {"A.L1", "A.L10", "B.L13"} <= ids and "B.L12" not in ids


def _cli(*args, cwd=None):
    return subprocess.run([sys.executable, "-m", "verify.cli", *args], capture_output=True, text=True,
                          cwd=cwd, timeout=600)


def _cli_in_process(capsys, *args):
    code = cli.main(list(args))
    cap = capsys.readouterr()
    return code, cap.out, cap.err


@pytest.mark.parametrize("args, needle", [
    (["run", "-k", "no-such-claim"], "no claim matches"),
    (["run", "-k", "A.T4", "-k", "no-such-claim"], "no claim matches"),
    (["probe", "A.T99"], "unknown claim id"),
    (["run", "--budget", "huge"], "invalid choice"),
    (["report", "--out", "/proc/nope/report.html"], "cannot write the report"),
    (["run", "--results", "/proc/nope"], "cannot write results"),
    (["run", "--seed", "-1"], "non-negative"),
    (["sensitivity", "-k", "B.Fig2", "--seed", "0", "--publish"], "--publish takes maps at each claim's first"),
    (["probe", "A.T1.1", "--max-examples", "0"], "at least 1"),
    (["carry", "--from", "HEAD", "--rows", "standard", "--budget", "standard"], "not both"),
    (["frobnicate"], "invalid choice"),
    ([], "required: COMMAND"),
    (["run", "-k", "A.L8", "--scheduler", "notaurl"], "not an address like tcp://host:8786"),
    (["run", "-k", "A.L8", "--scheduler", "tcp://127.0.0.1:1"], "cannot reach the Dask scheduler"),
])
def test_bad_input_is_one_line_and_nonzero(capsys, args, needle):
    code, out, err = _cli_in_process(capsys, *args)
    assert code == 2
    assert err.count("\n") == 1 and needle in err and err.startswith("verify: error: ")


def test_an_unreachable_scheduler_is_refused_at_once_even_when_every_unit_is_stored(capsys, tmp_path):
    """Checked before anything else: a stored run would otherwise end with exit 0 and never touch the scheduler."""
    assert _cli_in_process(capsys, "run", "-k", "A.L8", "--workers", "1", "--results", str(tmp_path))[0] == 0
    t0 = time.perf_counter()
    code, out, err = _cli_in_process(capsys, "run", "-k", "A.L8", "--scheduler", "tcp://127.0.0.1:1",
                                     "--results", str(tmp_path))
    assert code == 2 and out == "" and err.startswith("verify: error: cannot reach the Dask scheduler")
    assert time.perf_counter() - t0 < 5


def test_every_option_has_help_with_its_default():
    parser = cli.build_parser()
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    for name, sp in sub.choices.items():
        for action in sp._actions:
            if isinstance(action, argparse._HelpAction):
                continue
            assert action.help, f"verify {name} {action.dest}: no help text"
        text = " ".join(sp.format_help().split())
        if any(a.dest == "budget" for a in sp._actions):
            assert "(default: quick)" in text, name


def test_the_run_table_has_a_header_totals_and_names_the_reviewed_findings(capsys):
    from tests.test_report import synthetic_records

    recs = synthetic_records(Context())
    finding = dict(recs[0], verdict="violated", reason="ps-fastest-early: ...", budget="quick", seed=0,
                   claim=dict(recs[0]["claim"], id="B.Fig2"))
    cli._print_table(recs + [finding])
    out = capsys.readouterr().out.splitlines()
    assert out[0].split()[:5] == ["claim", "this", "run", "class", "(verdict"]
    assert any(line.startswith(f"{len(recs) + 1} claims: ") for line in out)
    assert any(line.startswith("violated B.Fig2: the reviewed finding") for line in out)


def test_the_run_table_names_a_violation_that_is_a_measured_seed_dependence(capsys):
    """B.Fig6's finding is undecided (an estimate on its band's edge) and measured violated at some quick and standard
    seeds: a violation there is that measured dependence, said so, not an unreviewed violation; at the full budget,
    where nothing was measured, it is unreviewed."""
    from tests.test_report import synthetic_records

    rec = synthetic_records(Context())[0]
    edge = dict(rec, verdict="violated", reason="adam-no-faster: ...", budget="standard", seed=0,
                claim=dict(rec["claim"], id="B.Fig6"))
    unreviewed = dict(edge, budget="full")  # no [unstable] entry at full
    cli._print_table([edge, unreviewed])
    out = capsys.readouterr().out.splitlines()
    assert any(line.startswith("violated B.Fig6: a measured seed dependence") for line in out)
    assert any(line.startswith("!!! VIOLATED B.Fig6 (not a reviewed finding)") for line in out)


def test_suite_without_a_command_prints_usage_and_help_works():
    suite = Path(__file__).parent.parent / "suite"
    bare = subprocess.run([str(suite)], capture_output=True, text=True, timeout=60)
    assert bare.returncode == 2 and bare.stderr.startswith("usage: ./suite COMMAND") and bare.stdout == ""
    helped = subprocess.run([str(suite), "--help"], capture_output=True, text=True, timeout=60)
    assert helped.returncode == 0 and helped.stdout.startswith("usage: ./suite COMMAND")


def test_bad_input_from_the_shell_has_no_traceback():
    p = _cli("probe", "A.T99")
    assert p.returncode == 2 and p.stderr.count("\n") == 1 and "Traceback" not in p.stderr


def test_cuda_asked_for_but_absent(capsys):
    import torch

    if torch.cuda.is_available():
        pytest.skip("a CUDA device is present")
    code, out, err = _cli_in_process(capsys, "run", "--device", "cuda")
    assert code == 2 and "no CUDA device" in err and err.count("\n") == 1


def test_list_published_says_which_rows_measure_the_current_code(capsys, monkeypatch):
    from verify import published

    hashes = registry.code_hashes()
    store = {"calibration": {"quick": {"claims": [{"id": "A.L1", "code_hash": hashes["A.L1"]},
                                                  {"id": "B.T4", "code_hash": "0" * 16}]}},
             "maps": {"standard": {"B.T4": {"code_hash": hashes["B.T4"]}}}, "carried": {}, "log": []}
    monkeypatch.setattr(published, "load", lambda: store)
    code, out, _ = _cli_in_process(capsys, "list", "--published", "-k", "A.L1", "-k", "B.T4", "-k", "A.L12")
    rows = {line.split()[0]: line.split()[1:] for line in out.splitlines() if line[:1] in "AB"}
    assert code == 0
    assert rows["A.L1"] == ["current", "missing", "-"]  # A.L1 declares no free choice: no map to publish
    assert rows["B.T4"] == ["older", "missing", "current"]
    assert rows["A.L12"] == ["not", "checked"]
    assert "quick calibration: 1 of 2 to publish: verify calibrate --budget quick --publish -k B.T4" in out
    assert "standard map: every row measures the current code" in out
    # the same code, but a fixture mate's change moved the seed basis: its seeds are of older code unless carried
    store["calibration"]["quick"]["claims"][0]["seed_basis"] = "0" * 16
    code, out, _ = _cli_in_process(capsys, "list", "--published", "-k", "A.L1")
    assert out.split("\n")[1].split()[:2] == ["A.L1", "older"]
    store["carried"]["A.L1"] = {"from": [hashes["A.L1"]], "to": hashes["A.L1"]}
    code, out, _ = _cli_in_process(capsys, "list", "--published", "-k", "A.L1")
    assert out.split("\n")[1].split()[:2] == ["A.L1", "carried"]


def test_list_names_the_claim(capsys):
    code, out, err = _cli_in_process(capsys, "list")
    assert code == 0 and "A.T1.1" in out and "exact" in out


def test_report_html_is_self_contained(tmp_path):
    recs = [runner.run_claim(registry.get("A.T1.1"), Context(), kinds={"symbolic"}),
            runner.run_claim(_fake_claim(), Context())]
    out = tmp_path / "r.html"
    report.write_report(out, recs, Context(), command="verify report")
    index, single, page = out.read_text(), (tmp_path / "r-all.html").read_text(), \
        (tmp_path / "r-claims" / "A.T1.1.html").read_text()
    assert "<math" in page and "<mfrac" in page  # statement and derivation as MathML
    assert "<math" in single and "<mfrac" in single
    for html in (index, single, page):
        assert "<script" not in html and "http://" not in html.replace("http://www.w3.org", "")
    assert 'href="r-claims/A.T1.1.html"' in index
    assert 'href="#A.T1.1"' in single and 'id="A.T1.1"' in single
    assert (tmp_path / "r.json").exists()
    assert oct(out.stat().st_mode & 0o777) == "0o644"


def test_report_embeds_a_plot(tmp_path):
    claim = registry.get("A.L7")  # two plots from its numeric checks in seconds (A.T1.1's n-law took 60-90 s)
    rec = runner.run_claim(claim, Context(), kinds={"numeric"})
    report.write_report(tmp_path / "r.html", [rec], Context(), command="verify report")
    for page in (tmp_path / "r-all.html", tmp_path / "r-claims" / "A.L7.html"):
        assert len(re.findall(r"<svg", page.read_text())) >= 2


def test_closed_pipe_ends_quietly():
    # `verify list | head -1` once ended in a BrokenPipeError traceback
    r = subprocess.run(f"'{sys.executable}' -m verify.cli list | head -1", shell=True, capture_output=True,
                       text=True, timeout=300)
    assert r.stdout.count("\n") == 1 and "Traceback" not in r.stderr


def _list_with_extra_claim_module(capsys, tmp_path, monkeypatch, name: str, source: str) -> tuple[int, str]:
    """``verify list`` with one more module ``theorems.<name>`` (``source``) among the claim modules: (exit code,
    stderr); the registry's cache and the module are dropped afterwards."""
    import theorems

    (tmp_path / f"{name}.py").write_text(source)
    monkeypatch.setattr(theorems, "__path__", [*theorems.__path__, str(tmp_path)])
    registry.all_claims.cache_clear()
    try:
        code, _, err = _cli_in_process(capsys, "list")
    finally:
        registry.all_claims.cache_clear()
        sys.modules.pop(f"theorems.{name}", None)
    return code, err


def test_an_equality_decision_without_a_margin_is_refused_at_import(capsys, tmp_path, monkeypatch):
    """A claim module that calls an equality rule with no margin (or with the retired width/resolution) stops the
    registry when the claims are imported, with one line naming the file and line: before any data is drawn."""
    src = ("from numerics.stats import decide_close\n\n\ndef check(ctx):\n"
           "    return decide_close(0.9, 1.1, 1.0, max_width=0.5)\n")
    assert registry.equality_calls_without_margin(src, "x.py") and "x.py:5" in \
        registry.equality_calls_without_margin(src, "x.py")[0]
    ok = src.replace("max_width=0.5", "margin=MARGIN")
    assert registry.equality_calls_without_margin(ok, "x.py") == []
    assert registry.equality_calls_without_margin("ev.exponent('s', x, y, se, target=-1)", "y.py")
    code, err = _list_with_extra_claim_module(capsys, tmp_path, monkeypatch, "zz_no_margin", src)
    assert code == 2 and err.count("\n") == 1 and "zz_no_margin.py:5" in err and "without a margin" in err


def test_a_margin_without_its_reason_is_refused_at_import(capsys, tmp_path, monkeypatch):
    src = "from numerics.stats import Margin\n\nM = Margin(0.1, excludes='')\n"
    code, err = _list_with_extra_claim_module(capsys, tmp_path, monkeypatch, "zz_no_reason", src)
    assert code == 2 and err.count("\n") == 1 and "alternative it excludes" in err


def test_show_prints_a_claims_evidence_and_diff_the_differences_between_runs(tmp_path):
    """``verify show``'s view of a record names the decisions with their margins, the controls and where the record is;
    ``verify diff`` finds a changed verdict, a moved interval and a changed measurement, and nothing within tolerance."""
    from tests.test_report import synthetic_records
    from verify import show

    recs = synthetic_records(Context())
    v = show.view(recs[0], {"class": "verified over the range", "why": "", "record": {"text": "verified at 1 of 1"}},
                  None, tmp_path / "x.json")
    lines = show.text(v)
    assert lines[0].startswith(recs[0]["claim"]["id"]) and any(line.startswith("record: ") for line in lines)
    assert "class: verified over the range" in lines
    other = json.loads(json.dumps(recs))
    assert show.diff(recs, other) == []
    other[0]["verdict"] = "verified" if recs[0]["verdict"] != "verified" else "violated"
    m = next(c for c in other[1]["checks"] if c.get("measurements"))["measurements"][0]
    m["value"] = (m["value"] or 0.0) * (1 + 1e-3) + 1e-3
    rows = show.diff(recs, other, tol=1e-9)
    whats = {r["what"] for r in rows}
    assert "verdict" in whats and any(w.startswith("measured ") for w in whats)
    assert show.diff(recs, other[:1] + other[1:], tol=1.0) == [r for r in rows if r["what"] == "verdict"]
    assert show.diff_text([], tmp_path, tmp_path, 1e-9)[0].startswith("no differences")


def test_the_index_lists_the_claims_as_importing_them_would():
    """``verify list``, ``-k`` and the confirmation seeds read the registry's index instead of importing every claim:
    it must say what the modules say (ids, titles, kinds, modules) and give the same code hashes and sharing groups."""
    claims = registry.all_claims()
    entries = {e["id"]: e for e in registry.index()}
    assert list(entries) == [c.id for c in claims]
    for c in claims:
        e = entries[c.id]
        assert (e["module"], e["title"], e["fidelity"]) == (c.module, c.title, c.fidelity)
        assert e["kinds"] == sorted({ch.kind for ch in c.checks})
        assert registry.code_hash_by_id(c.id) == registry.code_hash(c) == registry.code_hashes()[c.id]
    assert registry.index_groups() == registry.sharing_groups(claims)
    assert registry.select_ids("B.L1") == ["B.L1"] and len(registry.select_ids("B.L1*")) == 5


def test_help_and_bad_input_answer_without_importing_torch():
    """The CLI parses its arguments and checks claim ids before it imports torch or any claim: fast answers."""
    code = ("import sys; from verify import cli; rc = cli.main(sys.argv[1:]); "
            "print('torch' in sys.modules, rc)")
    for argv in (["run", "-k", "no-such-claim"], ["run", "--budget", "huge"], ["list", "-k", "A.T3"]):
        out = subprocess.run([sys.executable, "-c", code, *argv], capture_output=True, text=True, timeout=120)
        assert out.stdout.strip().splitlines()[-1].startswith("False"), (argv, out.stdout, out.stderr)


def test_a_service_that_is_not_a_dask_scheduler_is_refused_in_seconds():
    """A silent socket on the --scheduler port passes a TCP connect; the handshake refuses it instead of hanging."""
    import socket
    import threading

    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(4)
    held = []
    threading.Thread(target=lambda: held.extend(server.accept() for _ in range(4)), daemon=True).start()
    t0 = time.monotonic()
    with pytest.raises(cli.UsageError, match="did not answer as a Dask scheduler"):
        cli.handshake(f"tcp://127.0.0.1:{server.getsockname()[1]}", timeout=3.0)
    assert time.monotonic() - t0 < 30
    server.close()


def test_a_cached_run_and_show_import_neither_torch_nor_the_claim(tmp_path):
    """Once a claim's record is stored and current, ``verify run`` and ``verify show`` read it by id off the index:
    neither torch nor the claim's module is imported (a cached one-claim command in about a second)."""
    res = str(tmp_path / "res")
    assert cli.main(["run", "-k", "A.L12", "--seed", "0", "--workers", "1", "--results", res]) == 0  # not checked: cheap
    code = ("import sys; from verify import cli; "
            f"a = cli.main(['run', '-k', 'A.L12', '--seed', '0', '--results', {res!r}]); "
            f"b = cli.main(['show', 'a.l12', '--seed', '0', '--results', {res!r}]); "
            "print(a, b, 'torch' in sys.modules, any(m.startswith('theorems.paper_a.') for m in sys.modules))")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300,
                       cwd=Path(__file__).resolve().parent.parent)
    assert r.stdout.strip().splitlines()[-1] == "0 0 False False", r.stdout + r.stderr
