"""Run a hypothesis search for instances that violate a claim's conclusion.

A probe is a strategy over instances plus the claim's conclusion as a predicate.
Hypothesis draws instances (seeded from the run seed, so a probe replays), and
when the conclusion fails it shrinks the instance to a minimal counterexample,
which is returned in the outcome's details.  A control (an outcome that is its
decision alone) stops at its first counterexample instead (:func:`probe_check`).

With ``assumptions`` (a function ``instance -> {name: holds}``) every drawn
instance lands in one of four cells:

* assumptions hold, conclusion holds: expected;
* an assumption fails, the conclusion fails: evidence the assumption matters;
* an assumption fails, the conclusion still holds: the assumption may be stronger than needed;
* assumptions hold, the conclusion fails: a **counterexample** (the probe fails and shrinks it).

An instance the conclusion cannot decide (``holds is None``: an infeasible W-SVM, a Monte Carlo
estimate whose error bar is not trustworthy, ...) lands in its own cell, "not decided", and never
counts as the conclusion holding.  A probe must decide at least ``min_decided`` instances (inside the
assumptions, with four-cell accounting), else it is ``inconclusive``: a probe that decided nothing
proved nothing.

Facts.  A conclusion that computes something the assumptions or the plot need (the run's largest step, its initial
logit bound, nu*) returns it as a fourth value, a dict: ``(holds, label, detail, facts)``.  ``assumptions``,
``parameters`` and ``describe`` then receive them as their parameter ``facts`` (when they have one), so nothing is written
into the drawn instance and nothing depends on the order of the calls.

Without ``assumptions`` every failure of the conclusion is a counterexample.  Each cell
keeps the first example drawn into it; at the full budget, for the two "assumption fails"
cells a second, bounded hypothesis search (``hypothesis.find``) shrinks a minimal example
of the cell.  With ``parameters`` (``instance -> {name: float}``,
e.g. the Ass 1 parameter ``nu`` or the A3 bound) every example is kept as a point and
plotted against each parameter, showing where along it the conclusion starts to fail.

Profiles (chosen by budget):

* ``quick`` (CI): examples as the claim asks at quick budget, fixed seed, **no database**:
  deterministic, nothing read from or written to disk.
* ``standard`` / ``full``: more examples, and an example database private to the probe's run (in memory): its
  rounds replay what earlier rounds found, and nothing outlives the run, so the record is a function of code, seed
  and budget alone.  With ``$VERIFY_HYPOTHESIS_DB`` set (``verify probe`` sets it to ``.hypothesis/verify-probes``,
  git-ignored; the commands that produce verdicts drop it) the database is that directory, shared by every run that
  reads it: a counterexample found once is replayed first on every later run, a developer's tool, never a verdict's
  source (a probe control at a later seed would be rejected by the earlier seed's counterexample, not its own search).

Replay.  Hypothesis (>= 6.1xx) seeds part of its draws with the number and string literals of every *local*
module loaded in the process, so the same probe at the same seed would draw different instances depending on which
other claims were imported, and on literals in files outside the claim's code hash.  :func:`replayable_draws`
switches that pool off while a probe runs: a probe's draws depend on its seed and its own code only.

Rounds.  Hypothesis can spend a whole run of examples mutating one instance the conclusion cannot decide (A.L7 at
seed 641: 11 of 25 examples were repeats of two instances outside the region), so the decided count of one run has a
long lower tail.  A probe that decided fewer than ``min_decided`` instances therefore draws again, as a fresh
hypothesis run at a seed derived from its own (``ctx.derived_seed("probe round", r)``), up to ``ROUNDS`` runs in all.
Whether to draw again depends only on how many instances were decided, never on whether the conclusion held, so the
stopping rule cannot select for a pass.

Because each probed instance may itself be a stochastic decision, the per-example
false-alarm rate is ``ctx.alpha / (max_examples * ROUNDS)`` (Bonferroni over every example the probe may evaluate):
the whole probe raises a false alarm with probability at most ``ctx.alpha``.
"""
from __future__ import annotations

import contextlib
import hashlib
import inspect
import os
from typing import Any, Callable

import hypothesis
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st
from hypothesis.database import DirectoryBasedExampleDatabase, InMemoryExampleDatabase
from hypothesis.errors import NoSuchExample, Unsatisfiable

from theorems.claim import Check, Context, Figure, Outcome

HOLD_HOLD = "assumptions hold, conclusion holds"
FAIL_FAIL = "assumption fails, conclusion fails"
FAIL_HOLD = "assumption fails, conclusion holds"
COUNTEREXAMPLE = "assumptions hold, conclusion fails"
UNDECIDED = "not decided"
DEFAULT_DB = ".hypothesis/verify-probes"
# Runs of max_examples a probe may draw before it is inconclusive.  Pre-registered from the decided
# counts of the probes over seeds 1000-1059 and the sweeps 640-692: one run fell below its minimum at 1 to 2 seeds in
# 100 per probe; three independent runs all falling below is then of order 1e-5 per probe.
ROUNDS = 3


@contextlib.contextmanager
def replayable_draws():
    """Hypothesis without its pool of literals harvested from loaded local modules (see the module docstring).

    The pool lives in hypothesis's internals (``providers._get_local_constants`` and the ``CONSTANTS_CACHE`` built
    from it); where a hypothesis version has neither, there is nothing to switch off.
    """
    try:
        from hypothesis.internal.conjecture import providers
        from hypothesis.internal.constants_ast import Constants
    except ImportError:  # pragma: no cover - another hypothesis layout: no local-constant pool to disable
        yield
        return
    original = getattr(providers, "_get_local_constants", None)
    if original is None:  # pragma: no cover
        yield
        return
    empty = Constants()
    providers.CONSTANTS_CACHE.cache.clear()
    providers._get_local_constants = lambda: empty
    try:
        yield
    finally:
        providers._get_local_constants = original
        providers.CONSTANTS_CACHE.cache.clear()


def _stable(v) -> str:
    """A repr that is the same in every process (functions by name, not address)."""
    if callable(v) and hasattr(v, "__qualname__"):
        return f"{getattr(v, '__module__', '')}.{v.__qualname__}"
    if isinstance(v, (list, tuple)):
        return "(" + ", ".join(_stable(x) for x in v) + ")"
    if isinstance(v, dict):
        return "{" + ", ".join(f"{k!r}: {_stable(x)}" for k, x in sorted(v.items())) + "}"
    return repr(v)


def database_key(conclusion: Callable, strategy) -> bytes:
    """One key per probe *and parameterization* in the shared directory ``verify probe`` reads: a control's conclusion
    (the same function with other bound values) gets its own key, so a check never replays its control's
    counterexamples."""
    cells = getattr(conclusion, "__closure__", None) or ()
    bound = [_stable(c.cell_contents) for c in cells]
    where = f"{_stable(conclusion)}[{', '.join(bound)}]:{strategy!r}"
    return hashlib.sha256(where.encode()).digest()[:16]


def example_database(ctx: Context):
    """The database of one probe run (see the module docstring): None for the quick (CI) profile; beyond it the
    directory ``$VERIFY_HYPOTHESIS_DB`` when set (shared across runs: ``verify probe``), else a fresh in-memory one."""
    if ctx.budget == "quick":
        return None
    path = os.environ.get("VERIFY_HYPOTHESIS_DB")
    return DirectoryBasedExampleDatabase(path) if path else InMemoryExampleDatabase()


def _profile(database) -> str:
    """The record's note of where a probe's replayed examples could come from."""
    if database is None:
        return "ci (no database)"
    if isinstance(database, DirectoryBasedExampleDatabase):
        return f"shared example database {database.path} (replays earlier runs' counterexamples)"
    return "example database private to this run"


def _settings(max_examples: int, database=None, shrink: bool = True) -> settings:
    """Hypothesis stops drawing at the first counterexample, and with ``shrink`` then shrinks that one.

    ``report_multiple_bugs=False``: by default hypothesis goes on drawing after a first failure, looking for distinct
    ones before it shrinks, until 10 s of wall time have passed since it; which instance is shrunk, and how many
    instances the record counts, would then depend on the machine's speed.  Without it a record is a function of
    code and seed.  (Hypothesis also stops shrinking after 300 s; no probe's search comes near it.)"""
    phases = (Phase.explicit, Phase.reuse, Phase.generate) + ((Phase.shrink,) if shrink else ())
    return settings(max_examples=max_examples, database=database, deadline=None, phases=phases,
                    report_multiple_bugs=False, suppress_health_check=list(HealthCheck), derandomize=False,
                    print_blob=False)


def _cell(holds: bool | None, assumptions_ok: bool) -> str:
    if holds is None:
        return UNDECIDED
    if assumptions_ok:
        return HOLD_HOLD if holds else COUNTEREXAMPLE
    return FAIL_HOLD if holds else FAIL_FAIL


def run_probe(
    ctx: Context,
    strategy: st.SearchStrategy,
    conclusion: Callable[[Any, float], tuple[bool, str, str]],
    max_examples: int,
    describe: Callable[[Any], dict] = lambda inst: {"instance": repr(inst)},
    assumptions: Callable[[Any], dict[str, bool]] | None = None,
    parameters: Callable[[Any], dict[str, float]] | None = None,
    shrink_cells: bool = True,
    iff: bool = False,
    min_decided: int = 1,
    shrink: bool = True,
) -> Outcome:
    """Search for a counterexample.

    ``conclusion(instance, alpha_each) -> (holds, label, detail)``: ``label`` names a
    sub-case for the counts (e.g. ``"in scope"``), ``detail`` says why it failed;
    ``holds is None``: the instance could not be decided (cell "not decided").
    ``min_decided``: while fewer instances than this are decided (inside the assumptions, with four-cell
    accounting) the probe draws another run at a derived seed; still fewer after ``ROUNDS`` runs: ``inconclusive``.
    ``assumptions(instance) -> {name: bool}`` turns on the four-cell accounting;
    ``parameters(instance) -> {name: float}`` records each example for the plot.
    ``iff``: the claim is an equivalence (its assumptions are also necessary: outside them the conclusion is the
    other branch of the iff, built into ``conclusion``), so an instance in the "assumption fails, conclusion
    fails" cell fails the probe too.
    ``shrink``: shrink a counterexample to a minimal one, for a reader; without it the search stops at the first
    counterexample, which decides the outcome as well (a control's outcome is its decision: a shrunk counterexample
    to a mutant shows nothing the first one does not).
    """
    max_examples = ctx.max_examples or max_examples
    alpha_each = ctx.alpha / (max_examples * ROUNDS)
    cells: dict[str, int] = {}
    examples: dict[str, dict] = {}  # first example seen in each non-expected cell
    points: list[dict] = []
    failures: list[tuple[Any, str]] = []
    undecided: dict[str, int] = {}  # why the undecided instances were not decided: their conclusion's label
    undecided_why = [""]            # the label of the last instance classify found undecided

    def classify(inst):
        holds, label, detail, facts = _concluded(conclusion(inst, alpha_each))
        if holds is None:
            undecided_why[0] = label or "no reason given"
            label = UNDECIDED
        if assumptions is None:
            return holds, label, holds is False, detail, {}, facts
        a = with_facts(assumptions, inst, facts)
        ok = all(a.values())
        return holds, _cell(holds, ok), ok and holds is False, detail, a, facts

    def decided() -> int:
        if assumptions is not None:
            return cells.get(HOLD_HOLD, 0) + cells.get(COUNTEREXAMPLE, 0)
        return sum(cells.values()) - cells.get(UNDECIDED, 0)

    database = example_database(ctx)  # one per probe run: its rounds share it

    def record(inst) -> tuple[bool, str]:
        """Classify one drawn instance into its cell and keep its example, point and failure; (counterexample?, why)."""
        holds, cell, counter, detail, a, facts = classify(inst)
        cells[cell] = cells.get(cell, 0) + 1
        if holds is None:
            undecided[undecided_why[0]] = undecided.get(undecided_why[0], 0) + 1
        if assumptions is not None and cell not in (HOLD_HOLD, UNDECIDED) and cell not in examples:
            examples[cell] = with_facts(describe, inst, facts) | {
                "failed_assumptions": [k for k, v in a.items() if not v], "detail": detail, "shrunk": False}
        if parameters is not None:
            points.append(with_facts(parameters, inst, facts) | {"holds": None if holds is None else bool(holds),
                                                                 "assumptions_hold": all(a.values()) if a else True})
        if counter:
            failures.append((inst, detail, facts))
        return counter, detail

    def one_round(seed: int):
        @_settings(max_examples, database, shrink)
        @hypothesis.seed(seed)
        @given(strategy)
        def prop(inst):
            # without shrinking, a call after a failure is hypothesis's replay of that one example to report it: its
            # outcome is known, and counting it again would make one instance two
            counter, detail = (True, failures[-1][1]) if failures and not shrink else record(inst)
            if counter:
                raise AssertionError(detail)

        if isinstance(database, DirectoryBasedExampleDatabase):
            # a shared directory needs one key per probe (every probe shares this wrapper's source, hypothesis's
            # default key); a private database holds this probe's rounds alone, so the default serves, and the
            # strategy's repr (which can iterate sys.modules while a worker imports) is never formatted
            prop._hypothesis_internal_database_key = database_key(conclusion, strategy)
        try:
            prop()
        except AssertionError:
            pass  # hypothesis re-raises the shrunk example last; it is failures[-1]

    round_seeds: list[int] = []
    decided_per_round: list[int] = []
    with replayable_draws():
        for r in range(ROUNDS):
            round_seeds.append(ctx.seed if r == 0 else ctx.derived_seed("probe round", r))
            before = decided()
            one_round(round_seeds[-1])
            decided_per_round.append(decided() - before)
            if failures or (iff and cells.get(FAIL_FAIL)) or decided() >= min_decided:
                break

        if assumptions is not None and shrink_cells:
            for cell in (FAIL_FAIL, FAIL_HOLD):
                if cell in examples:
                    minimal = _shrink_cell(ctx, strategy, classify, cell, max_examples)
                    if minimal is not None:
                        inst, detail, a, facts = minimal
                        examples[cell] = with_facts(describe, inst, facts) | {
                            "failed_assumptions": [k for k, v in a.items() if not v], "detail": detail, "shrunk": True}
    n = sum(cells.values())
    n_decided = decided()

    details = {"cells": cells, "examples_evaluated": n, "decided": n_decided, "min_decided": min_decided,
               "max_examples": max_examples, "rounds": len(round_seeds), "rounds_max": ROUNDS,
               "decided_per_round": decided_per_round, "alpha_per_example": alpha_each,
               "hypothesis_seed": ctx.seed, "round_seeds": round_seeds, "cell_examples": examples,
               "profile": _profile(database)}
    if undecided:
        details["undecided"] = undecided
    if points:
        details["points"] = points
    plotted = [p for p in points if p["holds"] is not None]  # an undecided instance has no place on a holds/fails axis
    figures = [_parameter_plot(plotted)] if plotted and ctx.figures else []
    if failures:
        inst, detail, facts = failures[-1]
        details["counterexample"] = with_facts(describe, inst, facts) | {"why": detail, "shrunk": shrink}
        return Outcome("fail", f"COUNTEREXAMPLE found{' (shrunk)' if shrink else ''}: {detail}", figures=figures,
                       details=details)
    why = "; ".join(f"{v} {k}" for k, v in sorted(undecided.items()))
    cell_txt = ", ".join(f"{v} {k}" + (f" ({why})" if k == UNDECIDED and why else "") for k, v in sorted(cells.items()))
    if iff and cells.get(FAIL_FAIL):
        other = (examples.get(FAIL_FAIL) or {}).get("detail", "")
        return Outcome("fail", f"the other branch of the iff fails outside the assumptions: {other} | "
                       f"{n} examples ({cell_txt})", figures=figures, details=details)
    rounds = f" in {len(round_seeds)} rounds" if len(round_seeds) > 1 else ""
    if n_decided < min_decided:
        where = " inside the assumptions" if assumptions is not None else ""
        return Outcome("inconclusive", f"only {n_decided} instances decided{where} (at least {min_decided} declared): "
                       f"{n} examples{rounds} ({cell_txt})", figures=figures, details=details)
    return Outcome("pass", f"no counterexample in {n_decided} decided of {n} examples{rounds} ({cell_txt})",
                   figures=figures, details=details)


def probe_check(
    ctx: Context,
    strategy: st.SearchStrategy,
    conclusion: Callable[..., tuple[bool, str, str]],
    examples: tuple[int, int, int],
    describe: Callable[[Any], dict] = lambda inst: {"instance": repr(inst)},
    assumptions: Callable[[Any], dict[str, bool]] | None = None,
    parameters: Callable[[Any], dict[str, float]] | None = None,
    shrink_cells: bool | None = None,
    mutant: dict | None = None,
    iff: bool = False,
    min_decided: int = 1,
) -> Outcome:
    """A probe declared as a check: its settings are the check's parameters, its mutants a control's overrides.

    ::

        probe("...", strategy=probe_instances(), conclusion=probe_conclusion, examples=(25, 100, 300), ...),
        Control("probe: 10 α", "probe", "...", {"mutant": {"alpha_factor": 10.0}}),

    The conclusion is called ``conclusion(instance, alpha_each, **mutant)`` (``Claim`` refuses a mutant the conclusion
    does not take).  ``examples`` is the example count at the quick / standard / full budget.

    What is shrunk.  A check's counterexample is shrunk, for its reader.  An outcome that is its decision alone (a
    control, a map's setting: ``ctx.figures`` off) stops at its first counterexample: shrinking changes no status.
    ``shrink_cells=None`` shrinks the "assumption fails" cells' minimal examples at the full budget only: each cell's
    search is another ``max_examples`` draws and their shrinking, several times the probe's own search (A.L3's
    standard probe: 73 s with them, 6 s without), for an illustration the cell's first example also gives.
    """
    mutant = dict(mutant or {})

    def bound(inst, alpha_each):
        return conclusion(inst, alpha_each, **mutant)

    bound.__qualname__ = getattr(conclusion, "__qualname__", "conclusion")  # the database key names the conclusion
    bound.__module__ = getattr(conclusion, "__module__", "")
    if shrink_cells is None:
        shrink_cells = ctx.budget == "full" and ctx.figures
    return run_probe(ctx, strategy, bound, ctx.pick(*examples), describe, assumptions=assumptions,
                     parameters=parameters, shrink_cells=shrink_cells, iff=iff, min_decided=min_decided,
                     shrink=ctx.figures)


def probe(text: str, settings: dict | None = None, /, *, fn: Callable[..., Outcome] = probe_check,
          stochastic: bool | None = None, **params) -> Check:
    """A claim's probe: the check named ``probe`` (kind ``probe``) described by ``text`` that runs ``fn``
    (:func:`probe_check`, or a claim's wrapper of it) with the settings ``settings | params``.

    ``settings`` is a family's shared settings (declared once in its package), ``params`` the claim's own; a control
    targets the check by its name, ``"probe"``."""
    return Check("probe", "probe", text, fn, stochastic=stochastic, params=dict(settings or {}) | params)


def instance_and_facts(inst, facts: dict) -> dict:
    """The default description of a probe example: the instance's numbers and the facts its conclusion computed."""
    return dict(inst) | facts


def _concluded(result: tuple) -> tuple:
    """A conclusion's ``(holds, label, detail)`` or ``(holds, label, detail, facts)`` as the four."""
    if len(result) == 4:
        return tuple(result)
    holds, label, detail = result
    return holds, label, detail, {}


def with_facts(fn: Callable, inst, facts: dict):
    """``fn(inst, facts=facts)`` when ``fn`` has a parameter named ``facts``, else ``fn(inst)``."""
    try:
        takes = "facts" in inspect.signature(fn).parameters
    except (TypeError, ValueError):
        takes = False
    return fn(inst, facts=facts) if takes else fn(inst)


def _shrink_cell(ctx, strategy, classify, cell, max_examples):
    """A minimal instance of ``cell`` via ``hypothesis.find`` (bounded; None if none found)."""
    found = {}

    def in_cell(inst):
        holds, c, _, detail, a, facts = classify(inst)
        if c == cell:
            found["last"] = (inst, detail, a, facts)
            return True
        return False

    try:
        hypothesis.find(strategy, in_cell, settings=settings(
            max_examples=max_examples, database=None, deadline=None, derandomize=True,
            suppress_health_check=list(HealthCheck)))
    except (NoSuchExample, Unsatisfiable):
        return None
    return found.get("last")


def _parameter_plot(points: list[dict]) -> Figure:
    """Conclusion holds (1) / fails (0) against each recorded assumption parameter."""
    import numpy as np

    from theorems.plots import new_figure, to_svg

    names = [k for k in points[0] if k not in ("holds", "assumptions_hold")]
    fig, axes = new_figure()
    fig.set_size_inches(2.6 * max(len(names), 1) + 0.6, 2.6)
    fig.clear()
    axes = fig.subplots(1, max(len(names), 1), squeeze=False)[0]
    rng = np.random.default_rng(0)  # jitter only, for legibility
    for ax, name in zip(axes, names):
        x = np.array([p[name] for p in points], float)
        y = np.array([p["holds"] for p in points], float) + rng.uniform(-0.06, 0.06, len(points))
        inside = np.array([p["assumptions_hold"] for p in points])
        ax.scatter(x[inside], y[inside], s=14, c="tab:blue", label="assumptions hold")
        ax.scatter(x[~inside], y[~inside], s=14, c="tab:orange", marker="x", label="an assumption fails")
        ax.set_yticks([0, 1], ["fails", "holds"])
        ax.set_xlabel(name)
    axes[0].set_ylabel("conclusion")
    axes[0].legend(loc="center left", fontsize=7)
    return Figure("Where the conclusion starts to fail", to_svg(fig),
                  "Each probed instance: whether the claim's conclusion held, against each assumption parameter.")
