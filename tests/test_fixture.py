"""Fixtures (theorems.fixture): declared, injected, computed once per (fixture, parameters, run) wherever the units
run, dropped after their last consumer; bad declarations refused at import with one line."""
import os
import subprocess
import sys
from pathlib import Path

import pytest
import torch

import toy_claims
from theorems import fixture as fx
from theorems.claim import Check, Claim, Context, Control, Outcome
from verify import results
from verify.execution import Executor, execute

ROOT = Path(__file__).resolve().parent.parent
ENV = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), str(ROOT / "tests")]), "VERIFY_TORCH_THREADS": "1"}


def _computations(log: Path) -> list[str]:
    return sorted(log.read_text().splitlines()) if log.exists() else []


@pytest.mark.parametrize("workers", [1, 2], ids=["serial", "two workers"])
def test_claims_sharing_a_fixture_get_one_computation_of_it(tmp_path, monkeypatch, workers):
    """T.201 and T.202 use ``draws``, T.203 ``doubled`` (computed from ``draws``), every control ``draws`` at another
    scale: one computation of each (fixture, parameters) in the run, in one process or on a 2-worker cluster."""
    log = tmp_path / "computed.txt"
    monkeypatch.setenv("TOY_FIXTURE_LOG", str(log))  # before the cluster starts: its workers inherit it
    with Executor(workers=workers) as ex:
        recs, counts = execute(toy_claims.SHARING, Context(seed=5), tmp_path / "res", ex)
    assert counts == {"ran": 6, "reused": 0, "failed": 0}
    assert [r["verdict"] for r in recs] == ["verified"] * 3
    assert _computations(log) == ["doubled seed=5", "draws n=3 scale=1.0 seed=5", "draws n=3 scale=10.0 seed=5"]
    assert recs[2]["checks"][0]["uses"] == {"values": "doubled()"}
    assert recs[0]["controls"][0]["uses"] == {"values": "draws(scale=10.0)"}


def test_serial_and_distributed_records_are_the_same_with_fixtures(tmp_path):
    serial, _ = execute(toy_claims.SHARING, Context(seed=6), tmp_path / "a", Executor(workers=1))
    with Executor(workers=2) as ex:
        dist, _ = execute(toy_claims.SHARING, Context(seed=6), tmp_path / "b", ex)
    assert [results.replay_view(r) for r in dist] == [results.replay_view(r) for r in serial]


def test_a_run_drops_each_value_after_its_last_consumer():
    ctx = Context(seed=1)
    memo = fx.Memo(ctx)
    first, second = toy_claims.draws.request, toy_claims.doubled.request
    memo.expect([first, first, second])  # two consumers of draws, one of doubled (which itself uses draws)
    memo.value(second)
    assert len(memo) == 2  # doubled, and draws (still awaited by its two direct consumers)
    memo.release([second])
    memo.value(first)
    memo.release([first])
    assert len(memo) == 1
    memo.release([first])
    assert len(memo) == 0
    assert memo.computed == {toy_claims.draws.name: 1, toy_claims.doubled.name: 1}


def test_values_are_keyed_by_parameters_and_run():
    ctx = Context(seed=3, budget="quick")
    # a per-budget parameter is picked before keying: n=3 at quick is the default's value, so one value
    assert fx.run_key(toy_claims.draws.bind(n=3), ctx) == fx.run_key(toy_claims.draws.request, ctx)
    assert fx.run_key(toy_claims.draws.bind(n=4), ctx) != fx.run_key(toy_claims.draws.request, ctx)
    assert fx.run_key(toy_claims.draws.request, Context(seed=4)) != fx.run_key(toy_claims.draws.request, ctx)
    std = Context(seed=3, budget="standard")
    assert fx.resolve(toy_claims.draws, std).shape == (5,) and fx.resolve(toy_claims.draws, ctx).shape == (3,)
    # a value is of its run's budget even where no parameter depends on it (a fixture may pick sizes inside)
    assert fx.run_key(toy_claims.draws.bind(n=4), std) != fx.run_key(toy_claims.draws.bind(n=4), ctx)
    # a control's alpha or figures do not make another value
    assert fx.run_key(toy_claims.draws.request, ctx.split(10)) == fx.run_key(toy_claims.draws.request, ctx)
    # a dependency replaced through bind is part of the key
    other = toy_claims.doubled.bind(base=toy_claims.draws.bind(scale=2.0))
    assert fx.run_key(other, ctx) != fx.run_key(toy_claims.doubled.request, ctx)
    assert torch.equal(fx.resolve(other, ctx), 2 * fx.resolve(toy_claims.draws.bind(scale=2.0), ctx))


def test_a_fixture_is_injected_never_called():
    with pytest.raises(TypeError, match="injected, not called"):
        toy_claims.draws(Context())


def test_a_fixture_that_raises_fails_each_consumer_once_computed(tmp_path, monkeypatch):
    calls = []

    @fx.fixture
    def broken(ctx):
        calls.append(1)
        raise RuntimeError("no data")

    def check(ctx, values):
        return Outcome("pass", "never")

    claim = Claim(id="T.301", title="t", statement="x", fidelity="exact", fidelity_note="t",
                  checks=(Check("a", "numeric", "t", check, uses={"values": broken}),
                          Check("b", "numeric", "t", check, uses={"values": broken})),
                  controls=(Control("c", "a", "t", {"values": toy_claims.draws}),
                            Control("d", "b", "t", {"values": toy_claims.draws})))
    object.__setattr__(claim, "module", __name__)
    recs, _ = execute([claim], Context(seed=1), tmp_path, Executor(workers=1))
    assert len(calls) == 1
    assert [c["status"] for c in recs[0]["checks"]] == ["inconclusive"] * 2
    assert all("RuntimeError: no data" in c["summary"] for c in recs[0]["checks"])


# -- a list of requests: a gatherer receives the list of their values -------------------------------------------------

@pytest.mark.parametrize("workers", [1, 2], ids=["serial", "two workers"])
def test_a_gatherer_receives_the_values_of_its_list_of_requests(tmp_path, monkeypatch, workers):
    """T.204's check gathers [draws, draws(scale=2), doubled], its control [draws, draws(scale=100)]: each request is
    one dependency, computed once in the run (draws once, though three consumers read it), and the gatherer gets the
    values in the list's order."""
    log = tmp_path / "computed.txt"
    monkeypatch.setenv("TOY_FIXTURE_LOG", str(log))
    with Executor(workers=workers) as ex:
        recs, counts = execute([toy_claims.GATHERING], Context(seed=5), tmp_path / "res", ex)
    assert counts == {"ran": 2, "reused": 0, "failed": 0}
    assert recs[0]["verdict"] == "verified"
    assert _computations(log) == ["doubled seed=5", "draws n=3 scale=1.0 seed=5", "draws n=3 scale=100.0 seed=5",
                                  "draws n=3 scale=2.0 seed=5", "gathered 2 seed=5", "gathered 3 seed=5"]
    assert recs[0]["checks"][0]["uses"] == {"values": "gathered(each=[draws(), draws(scale=2.0), doubled()])"}
    base = fx.resolve(toy_claims.draws, Context(seed=5))
    assert recs[0]["checks"][0]["details"]["mean"] == pytest.approx(float(torch.cat([base, 2 * base, 2 * base]).mean()))


def test_a_list_of_requests_is_keyed_by_each_request_and_keeps_its_container():
    ctx = Context(seed=2)
    base = fx.resolve(toy_claims.draws, ctx)
    declared = toy_claims.gathered.request  # uses [draws, draws(scale=2)]
    assert set(declared.dependencies()) == {"each[0]", "each[1]"}
    assert torch.equal(fx.resolve(declared, ctx), torch.cat([base, 2 * base]))
    same = toy_claims.gathered.bind(each=(toy_claims.draws.bind(scale=1.0), toy_claims.draws.bind(scale=2.0)))
    other = toy_claims.gathered.bind(each=[toy_claims.draws.bind(scale=2.0), toy_claims.draws])
    assert fx.run_key(other, ctx) != fx.run_key(declared, ctx)  # the order is part of the value

    @fx.fixture
    def kind(ctx, each):
        return type(each).__name__, len(each)

    assert fx.resolve(kind.bind(each=same.params["each"]), ctx) == ("tuple", 2)
    assert fx.resolve(kind.bind(each=[toy_claims.draws]), ctx) == ("list", 1)
    with pytest.raises(ValueError, match="each mixes fixture requests and values"):
        kind.bind(each=[toy_claims.draws, 1.0])
    with pytest.raises(ValueError, match="each is a fixture it uses; bind a fixture request"):
        toy_claims.gathered.bind(each=1.0)


# -- keyed by value, never by identity ------------------------------------------------------------------------------

def test_frozen_dataclasses_and_optim_transforms_are_keyed_by_value():
    from dataclasses import dataclass

    from numerics import optim
    from numerics.paper_b.algorithms import Algorithm

    @dataclass(frozen=True)
    class Setting:
        n: int
        steps: tuple

    @fx.fixture
    def runs(ctx, setting=None, algorithm=None):
        return 0

    def key(**params):
        return fx.run_key(runs.bind(**params), Context())

    assert key(setting=Setting(3, (1, 2))) == key(setting=Setting(3, (1, 2)))
    assert key(setting=Setting(3, (1, 2))) != key(setting=Setting(3, (1, 3)))
    gd = lambda eta: optim.chain(optim.normalize(), optim.scale(eta))  # noqa: E731 -- built twice, alike
    assert key(algorithm=gd(0.1)) == key(algorithm=gd(0.1))
    assert key(algorithm=gd(0.1)) != key(algorithm=gd(0.2))
    assert key(algorithm=gd(0.1)) != key(algorithm=optim.chain(optim.identity(), optim.scale(0.1)))
    # a frozen dataclass holding a transform (eq=False: not even equal to itself by ==), by its fields
    assert key(algorithm=Algorithm("GD", gd(0.1))) == key(algorithm=Algorithm("GD", gd(0.1)))
    assert key(algorithm=Algorithm("GD", gd(0.1))) != key(algorithm=Algorithm("GD", gd(0.1), cap=1.0))


def test_a_value_with_nothing_to_key_it_by_is_refused_naming_the_parameter():
    @fx.fixture
    def runs(ctx, init=None):
        return 0

    class Mutable:
        pass

    for bad in (torch.zeros(3), Mutable(), {"a": 1}):
        with pytest.raises(ValueError, match=r"^fixture \S*runs: parameter init = .* cannot be keyed by value") as e:
            runs.bind(init=bad)
        assert "\n" not in str(e.value)


# -- bad declarations: refused at import, one line ------------------------------------------------------------------

def test_a_check_naming_a_fixture_it_does_not_take_is_refused():
    with pytest.raises(ValueError, match=r"takes no parameter\(s\) bank \(named in uses=\)"):
        Check("a", "numeric", "t", toy_claims.mean_check, uses={"values": toy_claims.draws, "bank": toy_claims.draws})


def test_a_fixture_parameter_it_does_not_take_is_refused():
    with pytest.raises(ValueError, match=r"draws takes no parameter\(s\) steps"):
        toy_claims.draws.bind(steps=3)


def test_a_fixture_cycle_is_refused():
    @fx.fixture
    def a(ctx, b=None):
        return 1

    @fx.fixture(uses={"a": a})
    def b(ctx, a):
        return 2

    @fx.fixture(uses={"b": b})
    def c(ctx, b):
        return 3

    with pytest.raises(ValueError, match="fixture cycle: a -> c -> b -> a"):
        a.bind(b=c)  # a needs c, which needs b, which needs a


BAD_CLAIM = '''
from theorems.claim import Check, Claim, Outcome
from theorems.fixture import fixture


@fixture
def data(ctx):
    return 1


def check(ctx, values):
    return Outcome("pass", "")


CLAIM = Claim(id="A.X99", title="bad", statement="x", fidelity="exact", fidelity_note="",
              checks=(Check("a", "probe", "", check, uses={"values": data, "extra": data}),))
'''


def test_the_cli_refuses_a_bad_declaration_with_one_line(tmp_path):
    import shutil

    for pkg in ("theorems", "numerics", "verify"):
        shutil.copytree(ROOT / pkg, tmp_path / pkg, ignore=shutil.ignore_patterns("__pycache__"))
    (tmp_path / "theorems" / "paper_a" / "x99_bad.py").write_text(BAD_CLAIM)
    out = subprocess.run([sys.executable, "-m", "verify.cli", "list"], cwd=tmp_path,
                         env={**ENV, "PYTHONPATH": str(tmp_path)}, capture_output=True, text=True, timeout=300)
    err = out.stderr.strip()
    assert out.returncode == 2 and len(err.splitlines()) == 1, err
    assert "takes no parameter(s) extra (named in uses=)" in err
