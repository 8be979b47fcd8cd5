"""What a claim is: statement, fidelity, assumptions, evidence and negative controls.

A claim module in ``theorems/paper_*/`` defines a module-level ``CLAIM`` (or a
list ``CLAIMS``) built from these types; the registry in ``verify`` finds it.
What several checks share is a fixture (``theorems.fixture``), named in each
check's ``uses`` and injected by the runner.

Evidence comes in three kinds:

* ``symbolic``: a sympy derivation that ends in something sympy proves;
* ``numeric``: a Monte Carlo / torch computation with a decision rule whose
  false-alarm rate is stated (``Context.alpha`` per decision);
* ``probe``: a hypothesis search over instances for a violation of the conclusion.

Each numeric check names one or more **negative controls**: deliberately wrong
variants that the same decision rule must reject (come back ``fail``).  A control is
declared as its target check plus the parameters it overrides (``Control("10 α",
"strong-convexity", "...", {"factor": 10.0})``): the runner calls the target's own
function with them (figures off), so the decision that rejects is the check's own.  A
control that mutates a shared set-up passes the mutated fixture request as the value
(``{"bank": trajectory_bank.bind(spread=0.5)}``).
"""
from __future__ import annotations

import fnmatch

import math
import inspect
from dataclasses import dataclass, field
from typing import Any, Callable, Literal, Mapping

from theorems import fixture as _fx
from theorems.context import BUDGETS, FAMILY_ALPHA, MAX_DECISIONS, Context  # noqa: F401 -- re-exported

Fidelity = Literal["exact", "reconstructed", "qualitative"]
Status = Literal["pass", "fail", "inconclusive", "out of scope"]
Kind = Literal["symbolic", "numeric", "probe"]
#: what a check is evidence for: the paper's claim, or only our code (it holds by algebra once the code is right)
EvidenceFor = Literal["paper", "implementation"]
#: the three kinds of evidence every lemma and theorem should have (``Claim.without`` names any it lacks, and why)
EVIDENCE_KINDS = ("symbolic", "numeric", "probe")

_SEVERITY = ("pass", "out of scope", "inconclusive", "fail")


def worst_status(statuses) -> str:
    """The weakest of several decisions inside one check: any ``fail`` fails it, then ``inconclusive``."""
    return max(statuses, key=_SEVERITY.index)


@dataclass
class Measurement:
    """A measured quantity, optionally with a confidence interval and the claimed value/envelope."""

    name: str
    value: float
    lo: float | None = None
    hi: float | None = None
    claimed: str | None = None
    level: float | None = None  # confidence level of [lo, hi]

    def as_dict(self) -> dict:
        f = lambda v: None if v is None or (isinstance(v, float) and math.isnan(v)) else float(v)  # noqa: E731
        return {"name": self.name, "value": f(self.value), "lo": f(self.lo), "hi": f(self.hi),
                "claimed": self.claimed, "level": self.level}


@dataclass
class Figure:
    """A plot, already rendered to an SVG string (inline in the report)."""

    title: str
    svg: str
    caption: str = ""


@dataclass
class Step:
    """One step of a symbolic derivation: prose plus a formula (LaTeX and MathML)."""

    text: str
    latex: str = ""
    mathml: str = ""


@dataclass
class Outcome:
    """The result of one check or control run."""

    status: Status
    summary: str
    measurements: list[Measurement] = field(default_factory=list)
    figures: list[Figure] = field(default_factory=list)
    steps: list[Step] = field(default_factory=list)
    details: dict = field(default_factory=dict)
    #: one quotable line for the report's overview, e.g. "fitted exponent -1.02 [-1.05, -0.99], claimed <= -1";
    #: when no check sets it the report uses the first measurement with an interval
    headline: str = ""


@dataclass(frozen=True)
class Assumption:
    """A named assumption of the claim; ``holds(instance)`` is its predicate, where one is defined."""

    name: str
    description: str
    holds: Callable[[Any], bool] | None = None


@dataclass(frozen=True)
class ScopeFilter(Assumption):
    """An assumption of ours, not the paper's: a rule by which a check drops draws, runs or instances (a rejection
    sampler's condition, a dropped replica, a fixed scale of the instance family).

    ``description`` is the rule, ``why`` the reason we impose it (the paper's hypothesis is something else).  ``unit``
    is what it drops (``"draws"``, ``"runs"``, ``"replicas"``); ``""`` marks a restriction by construction (the family
    is drawn inside it, so nothing is dropped to count).  A check that applies the filter records what it removed in
    the run (``theorems.evidence.Evidence.scope``); the record and the report show it under the claim's assumptions.
    """

    why: str = ""
    unit: str = "draws"

    def __post_init__(self):
        if not self.description.strip() or not self.why.strip():
            raise ValueError(f"scope filter {self.name!r}: give its rule (description=) and its reason (why=)")


@dataclass(frozen=True, eq=False)
class Check:
    """One piece of evidence: ``fn`` called with its declared ``params`` and the fixtures it ``uses``.

    Numeric and probe checks are called ``fn(ctx, **params, **fixtures)``; symbolic checks (exact, seedless)
    ``fn(**params, **fixtures)``.  ``uses`` maps parameter names to fixtures (``theorems.fixture``), whose values
    the runner computes once per run and injects.  A negative control re-runs a check with some of its parameters
    overridden (:class:`Control`), so the decision that must reject the wrong variant is the check's own.

    ``evidence``: ``"paper"`` (default) for evidence about the paper's claim; ``"implementation"`` for a check that
    holds by algebra once our code is right (a triangle inequality, a bound implied by another lemma we also check):
    it can fail only through a bug, so it still fails the claim, but it is not counted as evidence for the paper.  An
    implementation check names, in one line, why it holds by algebra (``by_algebra``); it is refused otherwise.
    """

    name: str
    kind: Kind
    description: str
    fn: Callable[..., Outcome]
    params: Mapping[str, Any] = field(default_factory=dict)
    stochastic: bool | None = None  # counts against the false-alarm budget; default: every kind but symbolic
    uses: Mapping[str, Any] = field(default_factory=dict)
    evidence: EvidenceFor = "paper"
    by_algebra: str = ""  # for an implementation check: one line, why it holds by algebra once the code is right

    def __post_init__(self):
        if self.evidence not in ("paper", "implementation"):
            raise ValueError(f"check {self.name!r}: evidence must be 'paper' or 'implementation', got "
                             f"{self.evidence!r}")
        reason = self.by_algebra.strip() if isinstance(self.by_algebra, str) else None
        if self.evidence == "implementation" and (not reason or "\n" in reason):
            raise ValueError(f"check {self.name!r}: an implementation check needs a one-line reason why it holds by "
                             "algebra once the code is right (by_algebra='...')")
        if self.evidence == "paper" and self.by_algebra:
            raise ValueError(f"check {self.name!r}: by_algebra is given but the check is labelled evidence for the "
                             "paper (evidence='implementation' if it holds by algebra)")
        if self.stochastic is None:
            object.__setattr__(self, "stochastic", self.kind != "symbolic")
        _check_parameters(self.fn, self.params, f"check {self.name!r}")
        object.__setattr__(self, "uses", _fx.check_uses(self.fn, self.uses, f"check {self.name!r}"))
        both = sorted(set(self.uses) & set(self.params))
        if both:
            raise ValueError(f"check {self.name!r}: {', '.join(both)} both in params= and uses=")

    def requests(self, overrides: Mapping[str, Any] | None = None) -> dict[str, "_fx.Request"]:
        """The fixtures this check receives, with those a control's ``overrides`` replace (by another fixture request,
        or by a plain value, which is then passed as it is)."""
        overrides = overrides or {}
        return {**{k: r for k, r in self.uses.items() if k not in overrides}, **_fx.requests_in(overrides)}

    def run(self, ctx: Context, fixtures: Mapping[str, Any] | None = None, **overrides: Any) -> Outcome:
        """Call the check; ``fixtures``: the values of :meth:`requests` (computed here, unshared, when None)."""
        if fixtures is None:
            fixtures = _fx.Memo(ctx).values(self.requests(overrides))
        kw = {**self.params, **fixtures, **{k: v for k, v in overrides.items() if not _fx.is_fixture(v)}}
        return self.fn(**kw) if self.kind == "symbolic" else self.fn(ctx, **kw)


@dataclass(frozen=True, eq=False)
class Control:
    """A negative control: check ``target`` re-run with ``overrides`` (a mutant of the mathematics), which the
    check's own decision must reject (come back ``fail``).

    ``fails`` aims the control: the names of the decisions of the target (``fnmatch`` patterns, e.g. ``"point 1,
    A-block*"``) that the mutant moves and that must fail; the control is rejected only when one of those fails, not
    when some other decision the mutant barely touches happens to.  Empty: any failing decision rejects it."""

    name: str
    target: str
    description: str
    overrides: Mapping[str, Any] = field(default_factory=dict)
    fails: tuple[str, ...] = ()

    def __post_init__(self):
        if not isinstance(self.overrides, Mapping) or not self.overrides:
            raise ValueError(f"control {self.name!r}: a control must override at least one parameter of its target "
                             "(a dict of parameter -> value)")
        if isinstance(self.fails, str) or not all(isinstance(p, str) and p.strip() for p in self.fails):
            raise ValueError(f"control {self.name!r}: fails names decisions, a tuple of non-empty patterns")

    def rejects(self, status: str, decisions: list[dict]) -> bool:
        """Whether the target's outcome (its status and recorded decisions) rejects the mutant."""
        if not self.fails:
            return status == "fail"
        return any(d.get("status") == "fail" and any(fnmatch.fnmatchcase(d.get("name", ""), p) for p in self.fails)
                   for d in decisions)


Scale = Literal["linear", "log"]


@dataclass(frozen=True, eq=False)
class FreeChoice:
    r"""A value our checks need that the papers do not fix: a step size, a horizon, a cap, an instance size, the effect
    a figure claim must show.  Declared with the value the checks use, a plausible range and the reason for that
    range (one line, e.g. "the paper trains for 40 epochs; 5-60 covers short and long schedules"), and how the checks
    receive another value of it.

    ``sets`` maps a check's name to a function of the value that gives that check's overrides, the same overrides a
    negative control passes: a parameter (``lambda v: {"factor": v}``) or a fixture request bound at the value
    (``lambda v: {"bank": bank.bind(steps=v)}``).  The function at ``value`` must give what the check receives without
    it, so the claim's own run is one point of the design.  ``verify sensitivity`` re-runs those checks at other values
    inside the range (``verify.sensitivity``) and reports where the verdict changes.

    The range is ``low .. high`` on a ``scale`` (``"log"`` where plausible values span decades: step sizes, horizons,
    caps; ``integer`` rounds design points: sizes, counts), or a tuple of discrete ``levels`` (readings of a phrase,
    alternative definitions), which then holds ``value``.  A range that excludes its own value is refused.

    ``analysis``: the choice is how stored estimates are *read* (an effect size, a metric, a window, a significance
    factor), not what is computed: it sets only plain parameters of its checks (never a fixture request), so its
    checks at another value re-decide the same fixture values (the same runs) and cost no new training.  A map
    crosses analysis choices with the full design of the other choices (``verify.sensitivity``).
    """

    name: str
    value: Any
    reason: str
    sets: Mapping[str, Callable[[Any], Mapping[str, Any]]]
    low: float | None = None
    high: float | None = None
    scale: Scale = "linear"
    integer: bool = False
    levels: tuple = ()
    analysis: bool = False

    def __post_init__(self):
        what = f"free choice {self.name!r}"
        if not self.name or any(ch in self.name for ch in "=,@\n"):
            raise ValueError(f"{what}: a name without '=', ',', '@' or line breaks")
        if not isinstance(self.reason, str) or not self.reason.strip() or "\n" in self.reason.strip():
            raise ValueError(f"{what}: give the reason for its range in one line (reason='...')")
        if not isinstance(self.sets, Mapping) or not self.sets:
            raise ValueError(f"{what}: name the checks it sets (sets={{check: lambda v: overrides}})")
        if self.scale not in ("linear", "log"):
            raise ValueError(f"{what}: scale must be 'linear' or 'log', got {self.scale!r}")
        if self.levels:
            object.__setattr__(self, "levels", tuple(self.levels))
            if self.low is not None or self.high is not None:
                raise ValueError(f"{what}: give either levels= or low=/high=, not both")
            if self.value not in self.levels:
                raise ValueError(f"{what}: its levels {list(self.levels)} exclude its own value {self.value!r}")
            return
        if self.low is None or self.high is None:
            raise ValueError(f"{what}: give its plausible range (low=, high=) or its levels=")
        if not self.low < self.high:
            raise ValueError(f"{what}: its range [{self.low:g}, {self.high:g}] is empty")
        if self.scale == "log" and self.low <= 0:
            raise ValueError(f"{what}: a log-scale range must be positive, got low={self.low:g}")
        if not self.low <= self.value <= self.high:
            raise ValueError(f"{what}: its range [{self.low:g}, {self.high:g}] excludes its own value {self.value:g}")

    def points(self, n: int) -> tuple:
        """``n`` values spread over the range, both ends included (on its scale; rounded for an integer choice), or
        the levels when it has levels (all of them: a reading is not interpolated)."""
        if self.levels:
            return self.levels
        if n < 2:
            raise ValueError(f"free choice {self.name!r}: a design needs at least 2 points per choice, got {n}")
        import numpy as np

        grid = (np.geomspace if self.scale == "log" else np.linspace)(self.low, self.high, n)
        vals = [int(round(v)) for v in grid] if self.integer else [float(v) for v in grid]
        return tuple(dict.fromkeys(vals))

    def label(self, v: Any) -> str:
        return f"{self.name}={v:g}" if isinstance(v, (int, float)) and not isinstance(v, bool) else f"{self.name}={v}"

    def range_text(self) -> str:
        if self.levels:
            return " | ".join(str(x) for x in self.levels)
        return f"{self.low:g} .. {self.high:g}" + (" (log)" if self.scale == "log" else "")


def merge_overrides(parts: list[Mapping[str, Any]], what: str) -> dict[str, Any]:
    """Several free choices' overrides of one check, merged: two requests for the same fixture become one request
    with both parameters (``bank.bind(steps=..)`` and ``bank.bind(lr=..)``; a parameter both bind to the same value,
    as a request bound once and then by each choice, is kept); any other clash is refused."""
    out: dict[str, Any] = {}
    for part in parts:
        for k, v in part.items():
            if k not in out:
                out[k] = v
                continue
            a, b = _fx.as_request(out[k]) if _fx.is_fixture(out[k]) else None, \
                _fx.as_request(v) if _fx.is_fixture(v) else None
            if a is None or b is None or a.fixture is not b.fixture or any(
                    _fx._token(a.params[p]) != _fx._token(b.params[p]) for p in set(a.params) & set(b.params)):
                raise ValueError(f"{what}: two free choices override {k!r} in ways that cannot be combined")
            out[k] = _fx.Request(a.fixture, {**a.params, **b.params})
    return out


def _same_as_declared(check: Check, name: str, value: Any) -> bool:
    """Whether ``value`` for the check's parameter ``name`` is what the check receives when nothing overrides it."""
    if _fx.is_fixture(value):
        declared = check.uses.get(name)
        return declared is not None and _fx.as_request(value).key() == declared.key()
    if name in check.params:
        declared = check.params[name]
    else:
        p = inspect.signature(check.fn).parameters.get(name)
        if p is None or p.default is inspect.Parameter.empty:
            return False
        declared = p.default
    try:
        return bool(declared == value) if not callable(declared) else declared is value
    except Exception:  # noqa: BLE001 -- arrays and tensors: equal only if the same object
        return declared is value


def _check_parameters(fn: Callable, names, what: str) -> None:
    """Refuse parameters ``fn`` does not take (a typo would silently run the unmutated check)."""
    try:
        sig = inspect.signature(fn)
    except (TypeError, ValueError):
        return
    if any(p.kind is p.VAR_KEYWORD for p in sig.parameters.values()):
        return
    unknown = sorted(set(names) - set(sig.parameters))
    if unknown:
        raise ValueError(f"{what}: {getattr(fn, '__qualname__', fn)} takes no parameter(s) {', '.join(unknown)}")


@dataclass(frozen=True)
class Claim:
    id: str  # "A.T1.3": the paper's letter, then the claim's number in it
    title: str
    statement: str  # LaTeX
    fidelity: Fidelity
    fidelity_note: str
    assumptions: tuple[Assumption, ...] = ()
    checks: tuple[Check, ...] = ()
    controls: tuple[Control, ...] = ()
    not_checked: str | None = None  # the reason, for claims the suite cannot check
    #: what the suite found about the claim beyond its verdict (a loose constant, a better rate, a scope limit), one
    #: sentence each; ``verify readme`` lists them under the claims table
    findings: tuple[str, ...] = ()
    #: the values its checks need that the papers do not fix, each with its plausible range (:class:`FreeChoice`)
    free_choices: tuple[FreeChoice, ...] = ()
    #: for a claim (any fidelity) with numeric or probe checks that declares no free choice: why its
    #: checks make none the papers leave open (one line); such a claim has no sensitivity map
    no_free_choice: str = ""
    #: the kinds of evidence ("symbolic", "numeric" for the paper, "probe") this claim has none of, each with its
    #: one-line reason: every lemma and theorem is checked three ways or says why not (never silently)
    without: Mapping[str, str] | tuple = ()
    module: str = ""  # filled in by the registry
    paper: str = ""  # derived from the id ("A.T1.3" -> "A")

    def check(self, name: str) -> Check:
        return next(c for c in self.checks if c.name == name)

    def evidence_kinds(self) -> set[str]:
        """The kinds of evidence the claim's checks give: "symbolic", "numeric" (a numeric check that is evidence for
        the paper, not an implementation check) and "probe"."""
        return {"numeric" if c.kind == "numeric" else c.kind for c in self.checks
                if c.kind != "numeric" or c.evidence == "paper"}

    def control(self, name: str) -> Control:
        return next(k for k in self.controls if k.name == name)

    def free_choice(self, name: str) -> FreeChoice:
        return next(f for f in self.free_choices if f.name == name)

    def overrides_at(self, check: str, values: Mapping[str, Any]) -> dict[str, Any]:
        """What check ``check`` is passed when the free choices take ``values`` (choice name -> value); choices that
        do not set this check are ignored."""
        parts = [f.sets[check](values[f.name]) for f in self.free_choices if f.name in values and check in f.sets]
        return merge_overrides(parts, f"{self.id}: check {check!r}")

    def __post_init__(self):
        paper = self.id.split(".")[0]
        if self.paper and self.paper != paper:
            raise ValueError(f"{self.id}: paper {self.paper!r} disagrees with the id's {paper!r}")
        object.__setattr__(self, "paper", paper)
        if self.fidelity not in ("exact", "reconstructed", "qualitative"):
            raise ValueError(f"{self.id}: unknown fidelity {self.fidelity!r}")
        checks = {c.name: c for c in self.checks}
        if len(checks) != len(self.checks):
            raise ValueError(f"{self.id}: two checks share a name")
        for c in self.controls:
            if c.target not in checks:
                raise ValueError(f"{self.id}: control {c.name!r} targets unknown check {c.target!r}")
            _check_parameters(checks[c.target].fn, c.overrides, f"{self.id}: control {c.name!r}")
            if "mutant" in c.overrides and "conclusion" in checks[c.target].params:  # a probe's mutated conclusion
                _check_parameters(checks[c.target].params["conclusion"], c.overrides["mutant"],
                                  f"{self.id}: control {c.name!r} (mutant of the probe's conclusion)")
        object.__setattr__(self, "without", tuple(sorted(dict(self.without).items())))  # hashable, like the rest
        for kind, why in self.without:
            if kind not in EVIDENCE_KINDS:
                raise ValueError(f"{self.id}: without={{{kind!r}: ...}}: a kind of evidence is one of {EVIDENCE_KINDS}")
            if not isinstance(why, str) or not why.strip() or "\n" in why.strip():
                raise ValueError(f"{self.id}: without[{kind!r}] needs its reason in one line")
            if kind in self.evidence_kinds():
                raise ValueError(f"{self.id}: without[{kind!r}] is given but the claim has {kind} evidence")
        if self.free_choices and self.no_free_choice:
            raise ValueError(f"{self.id}: free choices declared and no_free_choice given; keep one")
        names = [f.name for f in self.free_choices]
        if len(set(names)) != len(names):
            raise ValueError(f"{self.id}: two free choices share a name")
        for f in self.free_choices:
            for target, at in f.sets.items():
                if target not in checks:
                    raise ValueError(f"{self.id}: free choice {f.name!r} sets unknown check {target!r}")
                ov = at(f.value)
                if not isinstance(ov, Mapping) or not ov:
                    raise ValueError(f"{self.id}: free choice {f.name!r} gives check {target!r} no overrides")
                _check_parameters(checks[target].fn, ov, f"{self.id}: free choice {f.name!r}")
                if f.analysis and any(_fx.is_fixture(v) for v in ov.values()):
                    raise ValueError(f"{self.id}: free choice {f.name!r} is an analysis choice but sets a fixture of "
                                     f"check {target!r}: an analysis choice re-reads the same runs (plain parameters "
                                     "only)")
                changed = [k for k, v in ov.items() if not _same_as_declared(checks[target], k, v)]
                if changed:
                    raise ValueError(f"{self.id}: free choice {f.name!r} at its own value {f.value!r} changes "
                                     f"{', '.join(changed)} of check {target!r}: the claim's run must be one point "
                                     "of its design")
        if self.not_checked is None:
            for c in self.checks:  # every kind is held to this by the registry (verify.registry.all_claims)
                if c.kind == "numeric" and not any(k.target == c.name for k in self.controls):
                    raise ValueError(f"{self.id}: numeric check {c.name!r} has no negative control")
