"""Toy claims for the executor's tests: units that take a moment, are deterministic in the seed, and can be told to
crash their worker.  Importable by Dask worker processes (they inherit this directory on their path)."""
import os
import time

import torch

from theorems.claim import Check, Claim, Context, Control, FreeChoice, Outcome


def slow_check(ctx: Context, seconds: float = 0.3, wrong: bool = False, die: bool = False,
               flaky: float = 0.0, broken_once: bool = False) -> Outcome:
    if die:  # the worker process dies mid-unit, every time it runs this unit
        os._exit(13)
    marker = os.environ.get("TOY_BROKEN_ONCE_MARKER", "")  # a file: the first time, across processes
    if broken_once and marker and not os.path.exists(marker):  # torch.func's "broken process" error, once
        open(marker, "w").close()
        raise NotImplementedError("Cannot access storage of BatchedTensorImpl")
    time.sleep(seconds)
    v = float(torch.rand((), generator=ctx.generator("toy", seconds)))
    # flaky: inconclusive at the seeds whose draw falls below it (a check whose verdict depends on the seed)
    status = "fail" if wrong else "inconclusive" if v < flaky else "pass"
    return Outcome(status, f"v = {v:.6f}", details={"v": v})


def toy(i: int, seconds: float = 0.4, die: bool = False) -> Claim:
    return Claim(id=f"T.{i}", title=f"toy {i}", statement="x = x", fidelity="exact", fidelity_note="toy",
                 checks=(Check("a", "numeric", "toy", slow_check, params={"seconds": seconds, "die": die}),
                         Check("b", "numeric", "toy", slow_check, params={"seconds": seconds / 2})),
                 controls=(Control("wrong a", "a", "toy", {"wrong": True}),
                           Control("wrong b", "b", "toy", {"wrong": True})))


def toy_broken_once() -> Claim:
    """T.98: its check "a" raises torch.func's broken-process error the first time it runs while the environment
    names a marker file (``TOY_BROKEN_ONCE_MARKER``, inherited by the workers)."""
    c = toy(98, seconds=0.1)
    a = Check("a", "numeric", "toy", slow_check, params={"seconds": 0.1, "broken_once": True})
    object.__setattr__(c, "checks", (a,) + c.checks[1:])
    return c


CLAIMS = [toy(i, seconds=0.2) for i in range(1, 9)] + [toy(99, die=True), toy_broken_once()]
for _c in CLAIMS:
    object.__setattr__(_c, "module", __name__)
GOOD = CLAIMS[:8]           # eight claims, 32 units of 0.1-0.2 s
CRASHING = CLAIMS[8]        # its check "a" kills whatever worker runs it
BROKEN_ONCE = CLAIMS[9]     # its check "a" raises torch.func's broken-process error once (see toy_broken_once)


# ---------------------------------------------------------------------------
# Toy fixtures: a shared set-up that records each computation (a line in a file named by TOY_FIXTURE_LOG, across
# processes), a fixture computed from it, and two claims whose checks use them
# ---------------------------------------------------------------------------

from theorems.fixture import fixture, per_budget  # noqa: E402


def _log(what: str) -> None:
    path = os.environ.get("TOY_FIXTURE_LOG")
    if path:
        with open(path, "a") as f:
            f.write(what + "\n")


@fixture
def draws(ctx: Context, n=per_budget(3, 5), scale: float = 1.0):
    _log(f"draws n={n} scale={scale} seed={ctx.seed}")
    return scale * torch.rand(n, generator=ctx.generator("toy draws"), dtype=torch.float64)


@fixture(uses={"base": draws})
def doubled(ctx: Context, base):
    _log(f"doubled seed={ctx.seed}")
    return 2 * base


def mean_check(ctx: Context, values, wrong: bool = False) -> Outcome:
    m = float(values.mean())
    return Outcome("fail" if wrong or m > 2.0 else "pass", f"mean {m:.6f}", details={"mean": m})


def uses_toy(i: int, uses) -> Claim:
    return Claim(id=f"T.{i}", title=f"toy {i}", statement="x = x", fidelity="exact", fidelity_note="toy",
                 checks=(Check("mean", "numeric", "toy", mean_check, uses={"values": uses}),),
                 controls=(Control("scaled", "mean", "toy: the draws scaled by 10", {"values": draws.bind(scale=10.0)}),))


SHARING = [uses_toy(201, draws), uses_toy(202, draws), uses_toy(203, doubled)]


@fixture(uses={"each": [draws, draws.bind(scale=2.0)]})
def gathered(ctx: Context, each):
    """A gatherer: the values of a list of requests, concatenated in the list's order."""
    _log(f"gathered {len(each)} seed={ctx.seed}")
    return torch.cat(list(each))


#: a check reading a gatherer of three requests (one of them ``doubled``, itself computed from ``draws``); its control
#: replaces the list by one whose second entry is ``draws`` at scale 100 (the first is shared with the check's list)
GATHERING = Claim(id="T.204", title="toy 204", statement="x = x", fidelity="exact", fidelity_note="toy",
                  checks=(Check("mean", "numeric", "toy", mean_check,
                                uses={"values": gathered.bind(each=[draws, draws.bind(scale=2.0), doubled])}),),
                  controls=(Control("scaled", "mean", "toy: one gathered run scaled by 100",
                                    {"values": gathered.bind(each=[draws, draws.bind(scale=100.0)])}),))
for _c in SHARING + [GATHERING]:
    object.__setattr__(_c, "module", __name__)
CLAIMS += SHARING + [GATHERING]  # noqa: E305 -- a worker finds a claim in its module's CLAIMS


def _doubled_of(n: int):
    return {"values": doubled.bind(base=draws.bind(n=n))}


#: a claim with a free choice (the size of the draws under ``doubled``) for the maps: at quick its design is n = 2, 3
#: (its own) and 8, both ends extreme, so its control is re-run at n = 2 and n = 8 on the same fixture values
MAPPED = Claim(id="T.205", title="toy 205", statement="x = x", fidelity="exact", fidelity_note="toy",
               checks=(Check("mean", "numeric", "toy", mean_check, uses=_doubled_of(3)),),
               controls=(Control("wrong", "mean", "toy: a check that always fails", {"wrong": True}),),
               free_choices=(FreeChoice("n", 3, "toy: any size", {"mean": _doubled_of}, low=2, high=8,
                                        integer=True),),
               module=__name__)
CLAIMS.append(MAPPED)
