"""Operating characteristics: how each check and each control behaves over many seeds, measured.

A verdict at one seed says as much about the seed as about the paper unless the checks behind it are stable.
``verify calibrate`` runs the selected claims at ``N`` consecutive seeds (on the same executor as ``verify run``:
in-process, a local Dask cluster or a remote scheduler) and counts, per check, how often it passed, failed or was
inconclusive, and per negative control how often the same decision rejected it; each rate with its exact
(Clopper–Pearson) 95 % interval.  Per claim, the verdicts over the seeds: a claim is *stable* when it came back with
the same verdict at every seed.

Storage.  Each seed is a results directory of its own, ``<results>/calibration/<budget>/seed<S>/``, holding the
claim records and the finished units exactly as ``verify run`` writes them: an interrupted calibration resumes
(finished units are not recomputed) and a repeated one reuses every record whose code hash, budget and seed are
unchanged.  The summary, ``<results>/calibration/<budget>.json``, is rewritten atomically after each seed; the
report reads it (its *Operating characteristics* section).
"""
from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from scipy.stats import binomtest

from theorems.claim import Claim, Context
from verify import registry, results

CALIBRATION = "calibration"
#: the confidence of every rate's interval (exact binomial): a rate over 20 seeds that is 20/20 has interval
#: [0.83, 1], so "every seed" over 20 seeds bounds the per-seed failure rate below 17 % at 95 % confidence
CONFIDENCE = 0.95


def seed_dir(results_dir: Path, budget: str, seed: int) -> Path:
    return Path(results_dir) / CALIBRATION / budget / f"seed{seed}"


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
        ci = binomtest(self.k, self.n).proportion_ci(confidence_level=CONFIDENCE, method="exact")
        return float(ci.low), float(ci.high)

    def as_dict(self) -> dict:
        lo, hi = self.interval
        return {"k": self.k, "n": self.n, "rate": self.k / self.n if self.n else None, "lo": lo, "hi": hi}


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
    for row in checks.values():
        row["pass_rate"] = Rate(len(row["pass"]), n).as_dict()
    for row in controls.values():
        row["rejection_rate"] = Rate(len(row["rejected"]), n).as_dict()
    hashes = sorted({records[s]["code_hash"] for s in seeds})
    return {"id": claim.id, "paper": claim.paper, "fidelity": claim.fidelity, "code_hash": hashes[-1] if len(hashes) == 1
            else hashes, "seeds": seeds, "verdicts": verdicts, "stable": len(set(verdicts.values())) == 1,
            "checks": checks, "controls": controls}


def summarize(claims: list[Claim], by_seed: dict[int, list[dict]], budget: str) -> dict:
    """The calibration summary: per claim its characteristics, and per paper the pooled rates."""
    per_claim = []
    for i, c in enumerate(claims):
        per_claim.append(characteristics(c, {s: recs[i] for s, recs in by_seed.items()}))
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
    return {"budget": budget, "seeds": sorted(by_seed), "confidence": CONFIDENCE, "papers": papers,
            "claims": per_claim, "written": results.now_utc()}


def calibrate(claims: list[Claim], budget: str, seeds: list[int], results_dir: Path, executor, device: str = "cpu",
              on_seed=lambda seed, counts: None) -> dict:
    """Run ``claims`` at every seed of ``seeds`` (resuming and reusing stored work) and write the summary."""
    from verify.execution import execute

    by_seed: dict[int, list[dict]] = {}
    summary = {}
    for seed in seeds:
        ctx = Context(seed=seed, budget=budget, device=device)
        recs, counts = execute(claims, ctx, seed_dir(results_dir, budget, seed), executor, reuse_records=True,
                               bar_label=f"calibrate {budget}, seed {seed}")
        by_seed[seed] = recs
        on_seed(seed, counts)
        summary = summarize(claims, by_seed, budget)
        results.atomic_write_text(summary_path(results_dir, budget), json.dumps(summary, indent=1, default=float))
    return summary


def load_summary(results_dir: Path, budget: str) -> dict | None:
    """The stored calibration summary of ``budget``, or None; rows whose code hash is stale are marked so."""
    try:
        summary = json.loads(summary_path(results_dir, budget).read_text())
    except (OSError, json.JSONDecodeError):
        return None
    for c in summary.get("claims", []):
        try:
            c["stale"] = c["code_hash"] != registry.code_hash(registry.get(c["id"]))
        except KeyError:
            c["stale"] = True
    return summary


def table(summary: dict) -> list[str]:
    """Plain-text lines: per claim its verdicts over the seeds and its weakest check and control."""
    lines = [f"operating characteristics, {summary['budget']} budget, seeds {summary['seeds'][0]}..{summary['seeds'][-1]}"
             f" ({len(summary['seeds'])}); rates with exact {summary['confidence']:.0%} intervals"]
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
        lines.append(line)
    for p, row in summary["papers"].items():
        lines.append(f"paper {p}: {row['stable']}/{row['claims']} claims stable; checks pass "
                     f"{_rate(row['check_pass_rate'])}; controls rejected {_rate(row['control_rejection_rate'])}")
    return lines


def _rate(r: dict) -> str:
    return f"{r['k']}/{r['n']} [{r['lo']:.2f}, {r['hi']:.2f}]"
