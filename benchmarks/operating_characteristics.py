"""Issue 13's acceptance run: every claim at its N confirmation seeds, judged against the reviewed expectations.

    python benchmarks/operating_characteristics.py [--budget quick] [--seeds 20] [--first-seed S] [--workers 2]
                                                   [--results DIR] [--summary FILE]

Runs ``verify calibrate`` (resuming: finished units in ``--results`` are reused; ``--summary FILE`` judges an
existing summary instead, e.g. the published ``verify/calibration/quick.json``) and then asks, per claim:

- its verdict is the reviewed one (``verify/expectations.toml``, findings included) at **every** seed;
- every negative control was rejected at every seed;
- no check was inconclusive at any seed; a check of a claim reviewed as *verified* passed at every seed (a claim
  reviewed as *violated* may fail its checks: that is the finding).

Prints one line per claim that misses (and a count of those that do not) and exits 1 if any misses.  By default each
claim runs at the confirmation seeds its code hash derives (``verify.calibrate.confirmation_seeds``), which nobody
chose; ``--first-seed S`` runs every claim at the development seeds S, S+1, ... instead.
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


def misses(summary: dict, expected) -> dict[str, list[str]]:
    """Per claim id, what breaks the acceptance rule above (``expected(claim_id, budget, seed)`` gives the reviewed
    verdict); claims without checks (not checked) are skipped."""
    budget, out = summary["budget"], {}
    for c in summary["claims"]:
        if not c["checks"]:
            continue
        why = []
        wrong = {s: v for s, v in c["verdicts"].items() if v != expected(c["id"], budget, int(s)).verdict}
        if wrong:
            why.append("verdict " + ", ".join(f"{v} at {s}" for s, v in sorted(wrong.items())))
        verified = all(expected(c["id"], budget, int(s)).verdict == "verified" for s in c["verdicts"])
        for name, row in c["checks"].items():
            if row["inconclusive"]:
                why.append(f"check {name!r} inconclusive at {row['inconclusive']}")
            if verified and row["fail"]:
                why.append(f"check {name!r} failed at {row['fail']}")
        for name, row in c["controls"].items():
            if row["not rejected"]:
                why.append(f"control {name!r} not rejected at {row['not rejected']}")
        if why:
            out[c["id"]] = why
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--budget", default="quick", choices=("quick", "standard", "full"))
    ap.add_argument("--seeds", type=int, default=None, help="seeds per claim (default: the published count)")
    ap.add_argument("--first-seed", type=int, default=None, help="development seeds S, S+1, ... (default: "
                    "confirmation seeds)")
    ap.add_argument("--workers", type=int, default=None)
    ap.add_argument("--results", type=Path, default=ROOT / "reports" / "results")
    ap.add_argument("--summary", type=Path, default=None, help="judge this calibration summary; run nothing")
    args = ap.parse_args(argv)
    from verify import calibrate, expectations

    if args.summary is None:
        from verify.cli import main as verify
        cmd = (["calibrate", "--budget", args.budget, "--results", str(args.results)]
               + (["--seeds", str(args.seeds)] if args.seeds else [])
               + (["--first-seed", str(args.first_seed)] if args.first_seed is not None else [])
               + (["--workers", str(args.workers)] if args.workers else []))
        if verify(cmd) != 0:
            return 2
        args.summary = calibrate.summary_path(args.results, args.budget)
    try:
        summary = json.loads(args.summary.read_text())
    except (OSError, json.JSONDecodeError) as e:
        print(f"operating_characteristics: cannot read {args.summary}: {e}", file=sys.stderr)
        return 2
    found = misses(summary, expectations.expected)
    judged = sum(1 for c in summary["claims"] if c["checks"])
    print(f"{summary['budget']} budget, {calibrate.describe_seeds(summary)}: {judged - len(found)} of "
          f"{judged} claims at their reviewed verdict at every seed, every control rejected, no check inconclusive")
    for cid, why in found.items():
        print(f"  {cid}: " + "; ".join(why))
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
