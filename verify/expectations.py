"""The reviewed expectation of each claim's verdict, read from the claims' notes files.

A verdict is a finding, not a build gate: ``pytest`` compares each claim's verdict with the verdict a reviewer
expects.  The expectation is derived, ``"not checked"`` for a claim that says why it cannot be checked
(``Claim.not_checked``) and ``"verified"`` otherwise, unless the claim's notes file (``<module>.notes.toml`` beside
its module, which also holds the module's decision ledger) records a diagnosed finding::

    [[findings."B.T7"]]
    verdict = "violated"
    budget = "standard"          # optional: only at this budget
    seeds = [1]                  # optional: only at these seeds
    diagnosis = "what was found, and whether it is our bug, our reconstruction or the paper"
    controls_not_rejected = ["name"]  # optional: controls the finding diagnoses as not (always) rejected

A claim whose verdict is measured to depend on the seed (``verify calibrate``) is recorded as such, with the measured
rate and the diagnosis, so that a test at a fresh seed (``VERIFY_TEST_SEED``) states it instead of failing at random::

    [[unstable."B.T1"]]
    budget = "quick"             # optional: only at this budget
    measured = "inconclusive at 1 of 20 calibration seeds (100-119)"
    outcomes = ["inconclusive"]  # the outcomes that were measured: only these are absorbed
    diagnosis = "why, and what would fix it"

At a seed with no finding of its own, such a claim expects its derived verdict; a different verdict that is one of
the measured ``outcomes`` shows as an expected failure naming the measured rate, not as a pass; any other miss (a
violation where only inconclusives were measured) fails its test.  A finding and an ``[unstable]`` entry together say
the finding's own verdict was measured to vary (an estimate on the edge of its band is undecided at most seeds and
just outside it at some): the finding's verdict is expected, another one is an expected failure naming the rate.  A
diagnosed violation shows in pytest as an expected failure with the diagnosis as its reason; a new violation, a
verdict that flips, or an inconclusive verdict fails its test and says which.  ``inconclusive`` may be a *finding*
only when the diagnosis shows it is position, not power (the estimate sits at the edge of the claim's equivalence
band) or a control the check cannot reject.

A file passed as ``path`` (tests) is read alone, and may hold a ``[claims]`` table (``"X.1" = "verified"``) for claim
ids the registry does not know.
"""
from __future__ import annotations

import functools
import tomllib
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
VERDICTS = ("verified", "violated", "not checked")
#: a finding may also be an undecided verdict, diagnosed as the estimate sitting at the edge of its band
FINDING_VERDICTS = VERDICTS + ("inconclusive",)


@dataclass(frozen=True)
class Expectation:
    verdict: str
    diagnosis: str = ""
    unstable: str = ""  # the measured seed dependence ("" for a claim not known to depend on the seed)
    #: controls the finding diagnoses as ones its check cannot (always) reject; any other control must be rejected
    controls_not_rejected: tuple[str, ...] = ()
    #: the verdicts the measured seed dependence was seen to take (a miss of another kind is not absorbed)
    unstable_outcomes: tuple[str, ...] = ()

    def absorbs(self, outcome: str) -> bool:
        """Whether a miss with verdict ``outcome`` is the measured seed dependence (an expected failure)."""
        return bool(self.unstable) and outcome in self.unstable_outcomes


def notes_files(root: Path = ROOT) -> list[Path]:
    """Every claim module's notes file (``theorems/paper_*/**/<module>.notes.toml``)."""
    return sorted((root / "theorems").glob("paper_*/**/*.notes.toml"))


def _validate(where: str, claims: dict, findings: dict, unstable: dict) -> None:
    for cid, v in claims.items():
        if v not in VERDICTS:
            raise ValueError(f"{where}: {cid}: expected verdict {v!r} is not one of {VERDICTS}")
    for cid, entries in findings.items():
        for f in entries:
            if f.get("verdict") not in FINDING_VERDICTS or not f.get("diagnosis", "").strip():
                raise ValueError(f"{where}: finding {cid} needs a verdict in {FINDING_VERDICTS} and a diagnosis")
            names = f.get("controls_not_rejected", [])
            if not isinstance(names, list) or not all(isinstance(n, str) and n in f["diagnosis"] for n in names):
                raise ValueError(f"{where}: finding {cid}: controls_not_rejected must list control names its "
                                 "diagnosis discusses")
    for cid, entries in unstable.items():
        for u in entries:
            if not u.get("measured", "").strip() or not u.get("diagnosis", "").strip():
                raise ValueError(f"{where}: unstable {cid} needs what was measured and a diagnosis")
            outcomes = u.get("outcomes")
            if not (isinstance(outcomes, list) and outcomes and set(outcomes) <= set(FINDING_VERDICTS)):
                raise ValueError(f"{where}: unstable {cid} needs the outcomes it measured (outcomes = [...], of "
                                 f"{FINDING_VERDICTS})")


@functools.cache
def load(path: Path | None = None) -> dict:
    """``{"claims", "findings", "unstable", "where"}`` from the notes files (or the one file ``path``); ``where``: the
    file each claim's entries came from."""
    claims: dict[str, str] = {}
    findings: dict[str, list] = {}
    unstable: dict[str, list] = {}
    where: dict[str, Path] = {}
    for f in [Path(path)] if path is not None else notes_files():
        try:
            data = tomllib.loads(f.read_text())
        except tomllib.TOMLDecodeError as e:
            raise ValueError(f"{f}: {e}") from None
        part_f = {cid: v if isinstance(v, list) else [v] for cid, v in data.get("findings", {}).items()}
        part_u = {cid: v if isinstance(v, list) else [v] for cid, v in data.get("unstable", {}).items()}
        _validate(str(f), data.get("claims", {}), part_f, part_u)
        claims.update(data.get("claims", {}))
        for cid, entries in part_f.items():
            findings.setdefault(cid, []).extend(entries)
            where[cid] = f
        for cid, entries in part_u.items():
            unstable.setdefault(cid, []).extend(entries)
            where[cid] = f
    return {"claims": claims, "findings": findings, "unstable": unstable, "where": where}


def derived(claim_id: str) -> str:
    """The expectation a claim has without a finding: ``"not checked"`` if it says why it cannot be checked, else
    ``"verified"`` (``KeyError`` for an id the registry does not know)."""
    from verify import registry

    entry = next((e for e in registry.index() if e["id"] == claim_id), None)  # the index: no claim module imported
    if entry is None:
        raise KeyError(f"{claim_id} is not a registered claim")
    return "not checked" if entry["not_checked"] else "verified"


def expected(claim_id: str, budget: str, seed: int, path: Path | None = None) -> Expectation:
    """The reviewed verdict of ``claim_id`` at ``budget`` and ``seed`` (a finding where one applies)."""
    data = load(path)
    unstable = next((u for u in data["unstable"].get(claim_id, []) if u.get("budget", budget) == budget), None)
    for f in data["findings"].get(claim_id, []):
        if f.get("budget", budget) == budget and seed in f.get("seeds", [seed]):
            # a finding whose verdict was itself measured to vary (an estimate at its band's edge lands on either side)
            return Expectation(f["verdict"], f["diagnosis"], unstable["measured"] if unstable else "",
                               tuple(f.get("controls_not_rejected", ())),
                               tuple(unstable["outcomes"]) if unstable else ())
    verdict = data["claims"].get(claim_id) or derived(claim_id)
    if unstable:
        return Expectation(verdict, unstable["diagnosis"], unstable["measured"],
                           unstable_outcomes=tuple(unstable["outcomes"]))
    return Expectation(verdict)
