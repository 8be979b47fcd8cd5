"""Compare two results directories claim by claim: verdicts, statuses, summaries, measurements, details, findings.

    python benchmarks/compare_records.py BASE NEW [-k ID ...]

For a change that must not move any result (a refactor): run the same tier and seed before and after into two
results directories and compare.  Ignored, since a refactor changes them legitimately: code hashes, timings, creation
times, library versions, figures (their SVG ids), the claim's module and constants table, what each unit used
(``uses``) and the text of a control's overrides.  Exit status 1 when any record differs.
"""
import json, sys, math
from pathlib import Path

IGNORE = {"code_hash", "created_utc", "timing", "versions", "seconds", "figures", "preregistered", "module", "uses", "overrides",
          "ledger", "without", "provenance"}


def norm(x):
    if isinstance(x, dict):
        return {k: norm(v) for k, v in x.items() if k not in IGNORE}
    if isinstance(x, list):
        return [norm(v) for v in x]
    if isinstance(x, float) and math.isnan(x):
        return "nan"
    return x


def diff(a, b, path=""):
    out = []
    if type(a) != type(b):
        return [f"{path}: {a!r:.120} != {b!r:.120}"]
    if isinstance(a, dict):
        for k in sorted(set(a) | set(b)):
            if k not in a or k not in b:
                out.append(f"{path}.{k}: only in {'new' if k in b else 'base'}")
            else:
                out += diff(a[k], b[k], f"{path}.{k}")
    elif isinstance(a, list):
        if len(a) != len(b):
            out.append(f"{path}: length {len(a)} != {len(b)}")
        for i, (x, y) in enumerate(zip(a, b)):
            out += diff(x, y, f"{path}[{i}]")
    elif a != b:
        out.append(f"{path}: {a!r:.150} != {b!r:.150}")
    return out


def main() -> None:
    base, new, *rest = sys.argv[1:]
    ids = rest[rest.index("-k") + 1:] if "-k" in rest else None
    files = sorted(Path(new).glob("*.json"))
    bad = missing = n = 0
    for f in files:
        rec = json.loads(f.read_text())
        if "claim" not in rec:
            continue
        cid = rec["claim"]["id"]
        if ids and cid not in ids:
            continue
        g = Path(base) / f.name
        if not g.exists():
            print(f"{cid}: not in base"); missing += 1; continue
        n += 1
        d = diff(norm(json.loads(g.read_text())), norm(rec))
        if d:
            bad += 1
            print(f"{cid}: {len(d)} differences"); [print("   ", x) for x in d[:8]]
    print(f"compared {n} records: {n - bad} identical, {bad} differ" + (f"; {missing} not in base" if missing else ""))
    sys.exit(1 if bad or missing else 0)


main()
