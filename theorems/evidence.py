"""What a check decides, collected as it decides it.

A numeric check body reads as the list of its decisions::

    ev = Evidence(ctx, decisions=2 * n_inst)          # alpha split over the decisions, declared up front
    for i in range(n_inst):
        fit = ev.exponent(f"instance {i + 1}: exponent of E dist", ns, mean, se, target=-0.5, margin=RATE_MARGIN)
    ev.figure("Distance vs n", fig, "caption")        # kept only when ctx.figures (off for negative controls)
    return ev.outcome(ns=ns)

Each stochastic decision spends ``ctx.alpha / decisions`` (``ev.z``, ``ev.level``); making more decisions
than declared is an error (the split would understate the false-alarm rate).  Exact (deterministic)
decisions are recorded with :meth:`Evidence.exact` and do not spend alpha.  An equality decision's record carries
its margin, the alternative the margin excludes, and its power at the claim's own value at this interval's width
(``numerics.stats.power_at_target``); its ``max_width`` is the width at which that power is 95 %, the size a pilot
(``theorems.pilot``) grows a check to.  The check's status is the
worst of its decisions (``theorems.claim.worst_status``); its summary joins the lines in order.

A check that applies one of its claim's scope filters (``theorems.claim.ScopeFilter``: draws, runs or instances it
drops) records what the filter removed in this run, ``ev.scope(FILTER, removed, total)``; the outcome's
``details["scope"]`` lists them and the runner adds them up under the claim's assumptions.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from numerics.stats import Decision, Fit, Margin, decide_exponent, loglog_slope, power_at_target, width_for_power
from theorems.claim import Context, Figure, Measurement, Outcome, ScopeFilter, worst_status


class ScopeTally(dict):
    """``{filter name: [removed, total]}``: what scope filters removed while a fixture drew its values (the fixture
    returns it with them; each check that reads them passes it to :meth:`Evidence.scopes`).  A sampler records into
    it exactly as into an :class:`Evidence` (``.scope(filter, removed, total)``).  ``source`` names the draws (the
    fixture), so that the several checks reading them count them once."""

    def __init__(self, source: str = ""):
        super().__init__()
        self.source = source

    def scope(self, scope_filter: "ScopeFilter | str", removed: int, total: int) -> None:
        tally = self.setdefault(getattr(scope_filter, "name", scope_filter), [0, 0])
        tally[0] += int(removed)
        tally[1] += int(total)


class Evidence:
    def __init__(self, ctx: Context, decisions: int = 1):
        self.ctx = ctx
        self.declared = decisions
        self.each = ctx.split(decisions)  # the context of one decision: alpha / decisions
        self.made = 0
        self.statuses: list[str] = []
        self.measurements: list[Measurement] = []
        self.lines: list[str] = []
        self.figures: list[Figure] = []
        self.decisions: list[dict] = []
        self.scoped = ScopeTally()
        self.sources: dict[str, str] = {}  # filter name -> the fixture whose draws it counted

    @property
    def z(self) -> float:
        """Two-sided normal quantile of one decision's false-alarm rate."""
        return self.each.z

    @property
    def level(self) -> float:
        """Confidence level of one decision's interval."""
        return self.each.level

    @property
    def plots(self) -> bool:
        """Whether figures are wanted (False when a negative control re-runs the check)."""
        return self.ctx.figures

    # -- decisions ---------------------------------------------------------

    def decide(self, name: str, decision: Decision, value: float | None = None, line: str | None = None,
               say: bool = True, measure: bool = True) -> Decision:
        """Record a stochastic decision: its status, a measurement with its interval, and a summary line.

        A check with many cells (one decision per instance x n, say) may write one line for all of them
        (``say=False``) and keep only some measurements (``measure=False``): the decision still counts against
        the declared split, enters the record's ``decisions`` and the status.
        """
        self.made += 1
        if self.made > self.declared:
            raise RuntimeError(f"Evidence: decision {self.made} ({name!r}) exceeds the {self.declared} declared; "
                               "declare them all so alpha is split over them")
        self.statuses.append(decision.status)
        v = decision.mid if value is None else float(value)
        if measure:
            self.measurements.append(Measurement(name, v, decision.lo, decision.hi, claimed=decision.claimed,
                                                 level=self.level))
        row = {"name": name, "rule": decision.rule, "status": decision.status, "lo": decision.lo,
               "hi": decision.hi, "claimed": decision.claimed, "max_width": decision.max_width,
               "band": list(decision.band), "alpha": self.each.alpha}
        if decision.margin is not None:
            row.update(margin=decision.margin, excludes=decision.excludes)
        if decision.equivalence:
            row.update(max_width=width_for_power(decision.margin, self.z),
                       power=power_at_target(decision.width, decision.margin, self.z))
        self.decisions.append(row)
        if say:
            self.lines.append(line if line is not None else f"{name}: {v:.4g} {decision}")
        return decision

    def exponent(self, name: str, x, y, se, *, target: float, margin: Margin) -> Fit:
        """Fit ``log y = a + b log x`` (weighted; delta-method errors) and decide ``b = target ± margin``."""
        fit = loglog_slope(x, y, se)
        self.decide(name, decide_exponent(fit, self.z, target, margin=margin),
                    value=float(fit.coef[1]))
        return fit

    def exact(self, name: str, ok: bool, line: str, value: float | None = None, claimed: str | None = None) -> bool:
        """Record a deterministic decision (no false-alarm rate): ``pass`` if ``ok`` else ``fail``."""
        self.statuses.append("pass" if ok else "fail")
        if value is not None:
            self.measurements.append(Measurement(name, float(value), claimed=claimed))
        self.lines.append(line)
        return ok

    def status(self, status: str, line: str) -> None:
        """Record a status reached outside the rules above (e.g. ``inconclusive``: an instance out of scope)."""
        self.statuses.append(status)
        self.lines.append(line)

    # -- what is reported but not decided ------------------------------------

    def scope(self, scope_filter: ScopeFilter, removed: int, total: int) -> None:
        """Record that ``scope_filter`` removed ``removed`` of ``total`` draws (runs, ...) in this run (added up
        over calls: a sampler called once per instance)."""
        self.scoped.scope(scope_filter, removed, total)

    def scopes(self, tally: "ScopeTally") -> None:
        """Record what a fixture's scope filters removed while it drew the values this check reads."""
        for name, (k, n) in tally.items():
            self.scoped.scope(name, k, n)
            if tally.source:
                self.sources[name] = tally.source

    def measure(self, name: str, value: float, claimed: str | None = None, lo: float | None = None,
                hi: float | None = None, level: float | None = None) -> None:
        self.measurements.append(Measurement(name, float(value), lo, hi, claimed=claimed, level=level))

    def say(self, line: str) -> None:
        self.lines.append(line)

    def figure(self, title: str, fig, caption: str = "") -> None:
        """Attach a matplotlib figure (rendered to SVG) unless figures are off."""
        if not self.plots:
            return
        from theorems.plots import to_svg

        self.figures.append(Figure(title, to_svg(fig), caption))

    # -- the result ----------------------------------------------------------

    def outcome(self, headline: str = "", summary_prefix: str = "", **details: Any) -> Outcome:
        if self.scoped:
            details["scope"] = scope_details(self.scoped, self.sources)
        if not self.statuses:
            return Outcome("inconclusive", summary_prefix + "the check decided nothing", self.measurements,
                           self.figures, details=details)
        details = {"decisions": self.decisions, "alpha_per_decision": self.each.alpha, **details} \
            if self.decisions else details
        return Outcome(worst_status(self.statuses), summary_prefix + " | ".join(self.lines), self.measurements,
                       self.figures, details=_plain(details), headline=headline)


def scope_details(tallies: dict, sources: dict[str, str] | None = None) -> list[dict]:
    """``{filter name: (removed, total)}`` as an outcome's ``details["scope"]`` (also for a check that builds its
    :class:`Outcome` without :class:`Evidence`); ``sources``: the fixture a filter's draws came from."""
    sources = sources or {}
    return [{"name": name, "removed": int(k), "total": int(n), **({"source": sources[name]} if name in sources else {})}
            for name, (k, n) in tallies.items()]


def _plain(x):
    """numpy scalars and arrays in details become Python numbers and lists (JSON records)."""
    if isinstance(x, dict):
        return {k: _plain(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [_plain(v) for v in x]
    if isinstance(x, np.generic):
        return x.item()
    if isinstance(x, np.ndarray):
        return x.tolist()
    return x
