"""Operating characteristics: how each check and each control behaves over many seeds, measured.

A verdict at one seed says as much about the seed as about the paper unless the checks behind it are stable.
``verify calibrate`` runs the selected claims at ``N`` seeds (on the same executor as ``verify run``: in-process, a
local Dask cluster or a remote scheduler) and counts, per check, how often it passed, failed or was inconclusive, and
per negative control how often the same decision rejected it; each rate with its exact (Clopper–Pearson) 95 %
interval.  Per claim, the verdicts over the seeds: a claim is *stable* when it came back with the same verdict at every
seed.

Which seeds.  A seed that prompted a change (a miss investigated, a size raised) cannot also measure how the changed
code behaves.  So the rates that are *published* come from **confirmation seeds**, which the code chooses: claim
``c``'s ``i``-th seed is the first 8 bytes of ``sha256("<basis of c>:<i>")`` (:func:`confirmation_seeds`), where the
basis hashes ``c``'s code hash with those of the claims it shares a fixture with (:func:`seed_basis`).  Any change to
the code that decides ``c`` (its module, its fixtures, ``numerics/``) changes its code hash and so every one of its
seeds; a developer cannot pick them, and no seed seen before the change is among them but by a 2^-63 accident.
Development runs (``--first-seed S``: seeds ``S, S+1, ...`` for every claim) are for investigating, never published.

Storage.  Each seed (development) or confirmation index is a results directory of its own,
``<results>/calibration/<budget>/seed<S>/`` or ``.../confirmation<i>/``, holding the claim records and the finished
units exactly as ``verify run`` writes them: an interrupted calibration resumes (finished units are not recomputed)
and a repeated one reuses every record whose code hash, budget and seed are unchanged.  The summary,
``<results>/calibration/<budget>.json``, is rewritten atomically after each seed; the report reads it (its *Operating
characteristics* section).
"""
from __future__ import annotations

import hashlib
import json
import math
import re
from dataclasses import dataclass
from pathlib import Path

from theorems.claim import Claim, Context
from verify import published, registry, results

CALIBRATION = "calibration"
#: the confidence of every rate's interval (exact binomial): a rate over 20 seeds that is 20/20 has interval
#: [0.83, 1], so "every seed" over 20 seeds bounds the per-seed failure rate below 17 % at 95 % confidence
CONFIDENCE = 0.95


#: the confirmation seeds a published calibration has per claim, by budget: 20 at quick bounds a per-seed failure
#: rate seen 0 times below 17 % (95 % exact), 5 at standard below 52 % (a standard seed costs ~4x a quick one)
CONFIRMATION_SEEDS = {"quick": 20, "standard": 5, "full": 5}


def confirmation_seeds(basis: str, n: int) -> list[int]:
    """The ``n`` confirmation seeds of a claim whose seed basis (:func:`seed_basis`) is ``basis``: the ``i``-th is the
    first 8 bytes of sha256 over ``"<basis>:<i>"``, big-endian, as a 63-bit integer (a valid torch seed)."""
    return [int.from_bytes(hashlib.sha256(f"{basis}:{i}".encode()).digest()[:8], "big") & (2**63 - 1)
            for i in range(n)]


def seed_basis(claim: Claim, claims: list[Claim] = ()) -> str:
    """What a claim's confirmation seeds derive from: a hash of its code hash together with the code hashes of the
    claims it shares a fixture with (``registry.sharing_groups`` over every registered claim and ``claims``).

    Any change to the code that decides the claim changes its code hash and so this basis.  The group is in it so
    that claims sharing a set-up run at the same seeds and compute it once per seed (B.Fig5-B.Fig7's training runs are
    most of a standard calibration); the price is that a change to one member moves its partners' seeds too."""
    pool = {c.id: c for c in registry.all_claims()}
    pool.update({c.id: c for c in claims})
    pool.setdefault(claim.id, claim)
    groups = registry.sharing_groups(pool.values())
    members = sorted(cid for cid, g in groups.items() if g == groups[claim.id])
    text = ";".join(f"{cid}={registry.code_hash(pool[cid])}" for cid in members)
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def seed_bases(claims: list[Claim | str]) -> dict[str, str]:
    """:func:`seed_basis` of each of ``claims`` (the registry's sharing groups computed once, from its index, so no
    other claim's module is imported); a registered claim may be given by its id (then not even its own module is
    imported); a claim the registry does not know forms a group of its own."""
    known = {e["id"] for e in registry.index()}
    extra = [c for c in claims if not isinstance(c, str) and c.id not in known]
    groups = registry.index_groups(extra)
    hashes = registry.code_hashes()
    hashes.update({c.id: registry.code_hash(c) for c in extra})
    members: dict[str, list[str]] = {}
    for cid, g in groups.items():
        members.setdefault(g, []).append(cid)
    out = {}
    for cid in (c if isinstance(c, str) else c.id for c in claims):
        text = ";".join(f"{m}={hashes[m]}" for m in sorted(members[groups[cid]]))
        out[cid] = hashlib.sha256(text.encode()).hexdigest()[:16]
    return out


def first_confirmation_seeds(claims: list[Claim | str], budget: str | dict[str, str] | None = None) -> dict[str, int]:
    """Each claim's first confirmation seed: the seed ``verify run`` and ``verify report`` use by default, so the draw a
    reader sees is the first of the seeds its verdict of record is measured at (``verify.record``).  At ``budget`` (one
    for every claim, or claim id -> budget), a claim whose published row of that budget was carried forward to its
    code (``verify carry``: its rows keep the seeds they were measured at) has its first seed from the seed basis that
    row records; any other claim from its current seed basis (:func:`seed_basis`)."""
    bases = seed_bases(claims)
    budget_of = budget if isinstance(budget, dict) else {cid: budget for cid in bases}
    for b in sorted({v for v in budget_of.values() if v is not None}):
        bases.update(carried_bases(b, {cid: basis for cid, basis in bases.items() if budget_of.get(cid) == b}))
    return {cid: confirmation_seeds(b, 1)[0] for cid, b in bases.items()}


def carried_bases(budget: str, bases: dict[str, str]) -> dict[str, str]:
    """The seed basis recorded by each published ``budget`` row that counts only by a carry (``verify.carry``: its
    rows keep the seeds they were measured at; ``published.row_state`` "carried" given the claim's seed basis now,
    ``bases``: claim id -> basis), by claim id."""
    store = published.load()
    rows = {c["id"]: c for c in (store["calibration"].get(budget) or {}).get("claims", [])}
    hashes = registry.code_hashes()
    return {cid: rows[cid]["seed_basis"] for cid, basis in bases.items()
            if cid in rows and isinstance(rows[cid].get("seed_basis"), str)
            and published.row_state(cid, rows[cid], hashes.get(cid), store["carried"], basis, budget) == "carried"}


def seed_dir(results_dir: Path, budget: str, seed: int) -> Path:
    return Path(results_dir) / CALIBRATION / budget / f"seed{seed}"


def confirmation_dir(results_dir: Path, budget: str, index: int) -> Path:
    """Where the records of every claim at its ``index``-th confirmation seed are kept."""
    return Path(results_dir) / CALIBRATION / budget / f"confirmation{index}"


def summary_path(results_dir: Path, budget: str) -> Path:
    return Path(results_dir) / CALIBRATION / f"{budget}.json"


@dataclass(frozen=True)
class Rate:
    """``k`` of ``n`` with its exact (Clopper–Pearson) interval."""

    k: int
    n: int

    @property
    def interval(self) -> tuple[float, float]:
        if self.n == 0:
            return 0.0, 1.0
        from scipy.stats import binomtest  # here, not at import: reading a stored summary needs no scipy

        ci = binomtest(self.k, self.n).proportion_ci(confidence_level=CONFIDENCE, method="exact")
        return float(ci.low), float(ci.high)

    def as_dict(self) -> dict:
        lo, hi = self.interval
        return {"k": self.k, "n": self.n, "rate": self.k / self.n if self.n else None, "lo": lo, "hi": hi}


# ---------------------------------------------------------------------------
# Detection limits: the smallest deviation from the claim a check catches at POWER of the seeds
# ---------------------------------------------------------------------------

#: a deviation counts as detected "with 95 % power" when the check's decision rejects it at >= 95 % of the
#: calibration seeds (19 of 20)
POWER = 0.95
_CLAIMED = re.compile(r"^(?:P )?(=|≤|≥) (\S+?)(?: ± (\S+?))?(?: \(.*\))?$")
#: decisions that differ only by which instance / run / point / query / sample size they read are one *kind*: a
#: deviation planted in the claim moves them all
_MEMBER = re.compile(r"(\b(?:instance|run|point|query|quadratic|bilinear inside|bilinear outside|seed)\s*#?)\d+|"
                     r"(\bn\s*=\s*)[\d.e+]+|(#)\d+|()\d(?:\.\d+)?e[+-]\d+")


def allowed_region(claimed: str) -> tuple[float, float] | None:
    """The region ``[a, b]`` a decision's claim allows, read off the ``claimed`` text that ``numerics.stats`` writes
    (``"= t"``, ``"= t ± r"``, ``"≤ b"``, ``"≤ b (+ tolerance e)"``, ``"≥ b"``, ``"P ≥ b"``): the decision fails
    when its interval misses ``[a, b]`` (a tolerance widens only the pass side, so it is not part of the region).
    None for a text of another form."""
    m = _CLAIMED.match(claimed.strip())
    if not m:
        return None
    try:
        x = float(m.group(2))
        r = float(m.group(3)) if m.group(3) else 0.0
    except ValueError:
        return None
    return {"=": (x - r, x + r), "≤": (-math.inf, x), "≥": (x, math.inf)}[m.group(1)]


def decision_kind(name: str) -> str:
    return _MEMBER.sub(lambda m: (m.group(1) or m.group(2) or m.group(3) or "") + "·", name)


def detection_limits(check_records: dict[int, dict]) -> list[dict]:
    """Per decision kind of one check (``{seed: check record}``), the smallest deviation it detects at ``POWER`` of
    the seeds, upward and downward, in the decision's own units (an exponent, a ratio, a probability); its margin and
    the alternative the margin excludes; and its power: ``verified``, the rate at which every member verified over the
    seeds, and ``predicted_power``, the median over seeds of its least powerful member's power at the claim's value
    (``numerics.stats.power_at_target``, from the interval's width alone).

    The deviation is *planted by shift*: a claim off by ``delta`` moves the decision's estimate, and its interval
    ``[lo, hi]``, by ``delta`` with its spread unchanged; the decision then rejects when the shifted interval misses
    the allowed region ``[a, b]``, i.e. at seed s for every ``delta > b - lo_s`` (up) or ``delta < -(hi_s - a)``
    (down).  For exponent decisions this is exact, not a model: planting a factor ``x^delta`` in the fitted data
    (a rate off by ``delta``) adds ``delta log x`` to every log value and leaves the relative errors, hence the
    weights and the residuals, unchanged, so the fitted exponent and both ends of its interval move by exactly
    ``delta`` (``tests/test_calibrate.py`` checks it on ``numerics.stats.loglog_slope`` and ``per_run_slopes``).
    For a constant read as a mean with its standard error it is first order (a factor ``1 + delta`` also scales the
    spread); for a probability (Clopper–Pearson) it is an approximation, as the interval's width depends on p.  A deviation in the claim moves every member of a kind (every instance), so a seed detects it through
    its most sensitive member.  The limit is the ``POWER``-quantile over seeds (``ceil(POWER n)``-th smallest); an
    infinite side (an upper-bound claim has no downward failure) is None."""
    per_kind: dict[str, dict] = {}
    for seed, rec in check_records.items():
        for d in (rec.get("details") or {}).get("decisions", []):
            region = allowed_region(d.get("claimed", ""))
            lo, hi = d.get("lo"), d.get("hi")
            if region is None or lo is None or hi is None or not (math.isfinite(lo) and math.isfinite(hi)):
                continue
            a, b = region
            k = per_kind.setdefault(decision_kind(d["name"]), {"rule": d.get("rule"), "claimed": d["claimed"],
                                                                "up": {}, "down": {}, "members": set(),
                                                                "margin": d.get("margin"),
                                                                "excludes": d.get("excludes", ""),
                                                                "passed": {}, "power": {}})
            k["members"].add(d["name"])
            k["passed"][seed] = k["passed"].get(seed, True) and d.get("status") == "pass"
            if d.get("power") is not None:
                k["power"][seed] = min(k["power"].get(seed, 1.0), d["power"])
            k["up"][seed] = min(k["up"].get(seed, math.inf), b - lo)
            k["down"][seed] = min(k["down"].get(seed, math.inf), hi - a)
    out = []
    for kind, k in per_kind.items():
        row = {"decision": kind, "rule": k["rule"], "claimed": k["claimed"], "members": len(k["members"])}
        for side in ("up", "down"):
            v = sorted(k[side].values())
            q = v[max(0, math.ceil(POWER * len(v)) - 1)] if v else math.inf
            row[side] = max(q, 0.0) if math.isfinite(q) else None
        row["seeds"] = len(k["up"])
        row["margin"], row["excludes"] = k["margin"], k["excludes"]
        # measured power: the share of seeds at which every member verified (at the claim's value if it holds);
        # predicted: the median over seeds of the least powerful member's power at its target (numerics.stats)
        row["verified"] = Rate(sum(k["passed"].values()), len(k["passed"])).as_dict()
        pw = sorted(k["power"].values())
        row["predicted_power"] = pw[len(pw) // 2] if pw else None
        out.append(row)
    return out


def loosest_limit(detection: list[dict], rule: str = "exponent") -> float | None:
    """The loosest two-sided detection limit among ``detection`` rows of ``rule`` (each row's larger side)."""
    sides = [max(v for v in (d["up"], d["down"]) if v is not None) for d in detection
             if d["rule"] == rule and (d["up"] is not None or d["down"] is not None)]
    return max(sides) if sides else None


def characteristics(claim: Claim, records: dict[int, dict]) -> dict:
    """The operating characteristics of one claim from its records at several seeds (``{seed: record}``)."""
    seeds = sorted(records)
    verdicts = {s: records[s]["verdict"] for s in seeds}
    checks, controls = {}, {}
    for s in seeds:
        for c in records[s]["checks"]:
            row = checks.setdefault(c["name"], {"kind": c["kind"], "pass": [], "fail": [], "inconclusive": []})
            row.setdefault(c["status"], []).append(s)
        for c in records[s]["controls"]:
            row = controls.setdefault(c["name"], {"target": c.get("target"), "rejected": [], "not rejected": []})
            row["rejected" if c["rejected"] else "not rejected"].append(s)
    n = len(seeds)
    for name, row in checks.items():
        row["pass_rate"] = Rate(len(row["pass"]), n).as_dict()
        row["detection"] = detection_limits({s: c for s in seeds for c in records[s]["checks"] if c["name"] == name})
    for row in controls.values():
        row["rejection_rate"] = Rate(len(row["rejected"]), n).as_dict()
    hashes = sorted({records[s]["code_hash"] for s in seeds})
    return {"id": claim.id, "paper": claim.paper, "fidelity": claim.fidelity, "code_hash": hashes[-1] if len(hashes) == 1
            else hashes, "seeds": seeds, "verdicts": verdicts, "stable": len(set(verdicts.values())) == 1,
            "checks": checks, "controls": controls}


def summarize(claims: list[Claim], records: dict[str, dict[int, dict]], budget: str, mode: str) -> dict:
    """The calibration summary (``records``: per claim id, its records by seed): per claim its characteristics, and
    per paper the pooled rates.  ``mode`` is ``"confirmation"`` (each claim at the seeds its code derives) or
    ``"development"`` (every claim at the same consecutive seeds)."""
    per_claim = [characteristics(c, records[c.id]) for c in claims if records.get(c.id)]
    n = {len(r) for r in records.values()}
    out = {"budget": budget, "mode": mode, "n_seeds": min(n) if n else 0, "confidence": CONFIDENCE, "power": POWER,
           "papers": paper_totals(per_claim), "claims": per_claim, "written": results.now_utc()}
    if mode == "development":
        out["seeds"] = sorted({s for r in records.values() for s in r})
    return out


def paper_totals(per_claim: list[dict]) -> dict:
    """Per paper: claims calibrated, claims stable, and the pooled check pass and control rejection rates."""
    papers = {}
    for paper in sorted({c["paper"] for c in per_claim}):
        rows = [c for c in per_claim if c["paper"] == paper and c["checks"]]
        k_pass = sum(len(r["pass"]) for c in rows for r in c["checks"].values())
        n_check = sum(len(c["seeds"]) for c in rows for _ in c["checks"])
        k_rej = sum(len(r["rejected"]) for c in rows for r in c["controls"].values())
        n_ctl = sum(len(c["seeds"]) for c in rows for _ in c["controls"])
        papers[paper] = {"claims": len(rows), "stable": sum(c["stable"] for c in rows),
                         "check_pass_rate": Rate(k_pass, n_check).as_dict(),
                         "control_rejection_rate": Rate(k_rej, n_ctl).as_dict()}
    return papers


def calibrate(claims: list[Claim], budget: str, results_dir: Path, executor, *, seeds: list[int] | None = None,
              confirmations: int | None = None, device: str = "cpu", on_seed=lambda label, counts: None) -> dict:
    """Run ``claims`` at ``confirmations`` seeds each, derived from each claim's code hash (:func:`confirmation_seeds`;
    the published kind), or at the development ``seeds`` (the same for every claim), resuming and reusing stored
    work; write the summary after each seed and return it.  ``on_seed(label, counts)`` after each seed."""
    from verify.execution import execute

    if (seeds is None) == (confirmations is None):
        raise ValueError("calibrate: give the development seeds or the number of confirmation seeds, not both")
    if confirmations is not None:
        basis = {c.id: seed_basis(c, claims) for c in claims}
        seeds_of = {c.id: confirmation_seeds(basis[c.id], confirmations) for c in claims}
        steps = [({c.id: Context(seed=seeds_of[c.id][i], budget=budget, device=device) for c in claims},
                  confirmation_dir(results_dir, budget, i), f"confirmation seed {i + 1} of {confirmations}")
                 for i in range(confirmations)]
        mode = "confirmation"
    else:
        steps = [(Context(seed=s, budget=budget, device=device), seed_dir(results_dir, budget, s), f"seed {s}")
                 for s in seeds]
        mode = "development"
    records: dict[str, dict[int, dict]] = {c.id: {} for c in claims}
    summary = {}
    for ctx, directory, label in steps:
        recs, counts = execute(claims, ctx, directory, executor, reuse_records=True,
                               bar_label=f"calibrate {budget}, {label}")
        for c, rec in zip(claims, recs):
            records[c.id][rec["seed"]] = rec
        on_seed(label, counts)
        summary = summarize(claims, records, budget, mode)
        for row in summary["claims"] if mode == "confirmation" else ():
            row["seed_basis"] = basis[row["id"]]
        results.atomic_write_text(summary_path(results_dir, budget), json.dumps(summary, indent=1, default=float))
    return summary


def publish(summary: dict, claim_order: list[str] | None = None) -> Path:
    """Write ``summary`` as the published calibration of its budget (``verify.published``, atomically); returns the
    store's path.

    Only a confirmation calibration is published (``ValueError`` otherwise): its rows each stand alone (a claim at
    its own seeds), so a calibration of some claims (``-k``) replaces their rows and keeps the others', in
    ``claim_order`` (the registry's), with the per-paper totals recomputed.  Each row says how many confirmation runs
    at other code the log holds since that claim's previous publication (``runs_at_earlier_code``); a claim published
    again is no longer carried forward."""
    if summary.get("mode") != "confirmation":
        raise ValueError("publish: only a confirmation calibration is published (seeds derived from each claim's code "
                         "hash); development seeds (--first-seed) are for investigating")
    store = published.load()
    old = store["calibration"].get(summary["budget"])
    summary = {**summary, "claims": [{**c, "runs_at_earlier_code": runs_before(c["id"], c.get("seed_basis"),
                                                                                 store["log"])}
                                     for c in summary["claims"]]}
    ids = {c["id"] for c in summary["claims"]}
    kept = [c for c in (old or {}).get("claims", []) if c["id"] not in ids] if (old or {}).get("mode") == "confirmation" \
        else []
    if kept:
        rank = {cid: i for i, cid in enumerate(claim_order or [])}
        rows = sorted(kept + summary["claims"], key=lambda c: rank.get(c["id"], len(rank)))
        summary = {**summary, "claims": rows, "papers": paper_totals(rows),
                   "n_seeds": min(len(c["seeds"]) for c in rows)}
    store["calibration"][summary["budget"]] = summary
    return published.save(store)


# ---------------------------------------------------------------------------
# The confirmation log: every calibration run, published or not
# ---------------------------------------------------------------------------

def read_log() -> list[dict]:
    """The confirmation log (``verify.published``): every ``verify calibrate`` and ``verify sensitivity`` run, published
    or not, oldest first, so that a look at the confirmation seeds before a change leaves a trace."""
    return published.load()["log"]


def runs_before(claim_id: str, basis: str, log: list[dict]) -> int:
    """How many confirmation runs of ``claim_id`` at other code (another seed basis) the log holds since its last
    publication: the looks at confirmation seeds that preceded the code being published."""
    n = 0
    for e in log:
        c = (e.get("claims") or {}).get(claim_id)
        if c is None or e.get("mode") != "confirmation":
            continue
        if e.get("published"):
            n = 0
        elif c.get("seed_basis") != basis:
            n += 1
    return n


def log_run(summary: dict, *, published_too: bool, interrupted: bool = False) -> dict:
    """Append one entry for a calibration run to the log: when, at which commit, the budget and mode, and per claim its
    seed basis, code hash, seeds run and verdict counts."""
    from collections import Counter

    entry = {**published.stamp(), "budget": summary.get("budget"), "mode": summary.get("mode"),
             "published": bool(published_too), "interrupted": bool(interrupted),
             "claims": {c["id"]: {"seed_basis": c.get("seed_basis"), "code_hash": c.get("code_hash"),
                                  "seeds": len(c.get("seeds") or []),
                                  "verdicts": dict(Counter((c.get("verdicts") or {}).values()))}
                        for c in summary.get("claims", [])}}
    published.append_log(entry)
    return entry


def confirmed(row: dict) -> bool:
    """Whether a calibration row's seeds are the confirmation seeds of the seed basis it records."""
    return isinstance(row.get("seed_basis"), str) and sorted(row["seeds"]) == sorted(
        confirmation_seeds(row["seed_basis"], len(row["seeds"])))


def load_summary(results_dir: Path | None, budget: str) -> dict | None:
    """The calibration summary of ``budget`` in ``results_dir`` (None: skip it), else the published one
    (``verify.published``), or None; rows of older code are marked ``stale`` (``carried`` when the claim was carried
    forward to its current code: ``verify.published.current``), and a published summary says it is
    (``"published": True``)."""
    summary, is_published = None, False
    if results_dir is not None:
        try:
            summary = json.loads(summary_path(results_dir, budget).read_text())
        except (OSError, json.JSONDecodeError):
            summary = None
    store = published.load()
    if summary is None:
        summary, is_published = store["calibration"].get(budget), True
        if summary is None:
            return None
        summary = json.loads(json.dumps(summary))  # a copy: the rows are annotated below
    summary["published"] = is_published
    summary.setdefault("mode", "development")  # written before confirmation seeds existed
    summary.setdefault("n_seeds", len(summary.get("seeds") or []))
    hashes = registry.code_hashes()
    bases = seed_bases([c["id"] for c in summary.get("claims", []) if c["id"] in hashes])
    for c in summary.get("claims", []):
        c["confirmed"] = summary["mode"] == "confirmation" and confirmed(c)
        now = hashes.get(c["id"])
        if now is None:  # a claim since removed or renamed
            c["stale"], c["carried"], c["seeds_carried"] = True, False, False
            continue
        state = published.row_state(c["id"], c, now, store["carried"], bases[c["id"]], budget)
        c["stale"], c["carried"] = state == "older", state == "carried"
        # carried without a canary: the row measures this very code, at the seeds derived from the earlier code of a
        # claim it shares fixtures with (a carry keeps them); a row of other code was carried by its canary's records
        c["seeds_carried"] = c["carried"] and c["code_hash"] == now
    return summary


def describe_seeds(summary: dict) -> str:
    """"20 confirmation seeds per claim (derived from its code hash)" or "development seeds 100..119 (20)"."""
    if summary.get("mode") == "confirmation":
        return f"{summary['n_seeds']} confirmation seeds per claim (derived from its code hash)"
    seeds = summary.get("seeds") or [0]
    return f"development seeds {seeds[0]}..{seeds[-1]} ({len(seeds)})"


def table(summary: dict) -> list[str]:
    """Plain-text lines: per claim its verdicts over the seeds and its weakest check and control."""
    lines = [f"operating characteristics, {summary['budget']} budget, {describe_seeds(summary)}; rates with exact "
             f"{summary['confidence']:.0%} intervals"]
    for c in summary["claims"]:
        if not c["checks"]:
            continue
        counts = {}
        for v in c["verdicts"].values():
            counts[v] = counts.get(v, 0) + 1
        worst_check = min(c["checks"].items(), key=lambda kv: kv[1]["pass_rate"]["k"])
        worst_ctl = min(c["controls"].items(), key=lambda kv: kv[1]["rejection_rate"]["k"]) if c["controls"] else None
        line = (f"{c['id']:<8} {'stable  ' if c['stable'] else 'UNSTABLE'} "
                + ", ".join(f"{v} {k}" for v, k in sorted(counts.items()))
                + f" | weakest check {worst_check[0]!r}: {_rate(worst_check[1]['pass_rate'])} pass")
        if worst_ctl:
            line += f" | weakest control {worst_ctl[0]!r}: {_rate(worst_ctl[1]['rejection_rate'])} rejected"
        limit = loosest_limit([d for row in c["checks"].values() for d in row.get("detection", [])])
        if limit is not None:
            line += f" | exponents off by ≥ {limit:.3g} detected at {summary.get('power', POWER):.0%} of seeds"
        lines.append(line)
    for p, row in summary["papers"].items():
        lines.append(f"paper {p}: {row['stable']}/{row['claims']} claims stable; checks pass "
                     f"{_rate(row['check_pass_rate'])}; controls rejected {_rate(row['control_rejection_rate'])}")
    return lines


def _rate(r: dict) -> str:
    return f"{r['k']}/{r['n']} [{r['lo']:.2f}, {r['hi']:.2f}]"
