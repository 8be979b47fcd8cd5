"""Carrying published measurements forward to changed code that computes the same numbers (``verify carry``).

A published calibration or map measures the code it ran on (its code hash), and any edit to that code (a docstring, a
moved constant, a refactor of a shared module) changes the hash, which would otherwise leave hours of published
measurements stale although not one number moved.  A change *keeps* its evidence when it keeps its numbers: each
claim is run at the canary seeds (:data:`CANARY_SEEDS`, fixed, at :data:`CANARY_BUDGET`) both at the code the
measurements are current for (a git revision, checked out in a worktree) and at the working tree, and where every
verdict, status, measured value and interval, and every decision's interval and band (:func:`canary_view`) are
identical at every canary seed, the store records the claim as carried forward from the measured code to the current
code (``verify.published``: ``carried``), with the canary digests as the proof.  The carried measurements keep their
confirmation seeds (those of the code they were measured on).  Any difference in a canary record leaves the claim's
measurements of older code, as before.  A claim whose code did not change needs nothing, unless a claim it shares a
fixture with changed: its seed basis (``calibrate.seed_basis``), hence its confirmation seeds, moved with the mate's
code, while every number it computes at a given seed is the same (its code hash covers all it imports); it is carried
without a canary, keeping the seeds it was measured at.

What the canary cannot see: a change that moves numbers only at the standard budget, or only at seeds other than the
canary seeds, or only at other settings of a free choice.  ``--budget standard`` adds that budget's canary (slower).
A change that moves numbers at the quick budget alone (its sizes, a decision not taken at quick) keeps the standard
calibration and maps with ``--rows standard``: the canary runs at the standard budget only, the carry covers that
budget's rows (``verify.published.covers``), and the quick calibration is re-run for the claims it carried.
"""
from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
from pathlib import Path

from verify import calibrate, published, registry, results

#: the canary's seeds: fixed (not derived from the code), so two versions of the code are compared at the same draws
CANARY_SEEDS = (0, 1)
CANARY_BUDGET = "quick"
ROOT = Path(__file__).resolve().parent.parent


def canary_view(rec: dict) -> dict:
    """The numbers of a record: the verdict, and per check and control its status, measured values and intervals,
    and each decision's status, interval and band (text, timing and figures left out: rewording is not a change)."""
    def part(c: dict) -> dict:
        d = c.get("details") or {}
        return {"status": c["status"],
                "measurements": [[m.get("name"), m.get("value"), m.get("lo"), m.get("hi")]
                                 for m in c.get("measurements", [])],
                "decisions": [[x.get("name"), x.get("status"), x.get("lo"), x.get("hi"), x.get("band")]
                              for x in d.get("decisions", [])]}
    return {"verdict": rec["verdict"], "checks": {c["name"]: part(c) for c in rec["checks"]},
            "controls": {c["name"]: part(c) for c in rec["controls"]}}


def digest(rec: dict) -> str:
    return hashlib.sha256(json.dumps(canary_view(rec), sort_keys=True, default=str).encode()).hexdigest()[:16]


def differences(old: dict, new: dict) -> list[str]:
    """Where two records' numbers differ (check or control names; "verdict")."""
    a, b = canary_view(old), canary_view(new)
    out = ["verdict"] if a["verdict"] != b["verdict"] else []
    for kind in ("checks", "controls"):
        for name in sorted(set(a[kind]) | set(b[kind])):
            if a[kind].get(name) != b[kind].get(name):
                out.append(f"{kind[:-1]} {name!r}")
    return out


def _env(root: Path) -> dict:
    return {**os.environ, "PYTHONPATH": str(root), "MPLBACKEND": "Agg"}


def code_hashes_at(root: Path) -> dict[str, str]:
    """Each claim's code hash in the checkout at ``root`` (a subprocess with that checkout first on its path)."""
    code = ("import json; from verify import registry; "
            "print(json.dumps({c.id: registry.code_hash(c) for c in registry.all_claims()}))")
    out = subprocess.run([sys.executable, "-c", code], cwd=root, env=_env(root), capture_output=True, text=True,
                         check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def run_at(root: Path, claim_ids: list[str], budget: str, seed: int, results_dir: Path, workers: int) -> dict:
    """The records of ``claim_ids`` at ``seed`` run by the checkout at ``root`` (``verify run --seed``), by id."""
    argv = [sys.executable, "-m", "verify.cli", "run", "--budget", budget, "--seed", str(seed), "--workers",
            str(workers), "--results", str(results_dir)]
    for cid in claim_ids:
        argv += ["-k", cid]
    # each run its own hypothesis example database, empty at its start: code from before the probes' private
    # databases (theorems.probe) reads the directory this names, and would otherwise replay its checkout's history;
    # code since then drops the variable in every verdict command and keeps each probe's database to itself
    env = _env(root) | {results.SHARED_EXAMPLES: str(results_dir / "hypothesis-db")}
    proc = subprocess.run(argv, cwd=root, env=env, capture_output=True, text=True)
    if proc.returncode != 0:
        raise RuntimeError(f"the canary run at {root} failed: {(proc.stderr or proc.stdout).strip()[-300:]}")
    return {r["claim"]["id"]: r for r in results.read_records(results_dir) if r["claim"]["id"] in claim_ids
            and r["seed"] == seed and r["budget"] == budget}


def commit_of(rev: str) -> str:
    """The commit ``rev`` names (its full hash): what a carry records, since a name like ``HEAD`` moves."""
    commit = subprocess.run(["git", "rev-parse", "--verify", f"{rev}^{{commit}}"], cwd=ROOT, capture_output=True,
                            text=True)
    if commit.returncode != 0:
        raise ValueError(f"{rev!r} is not a commit of this repository")
    return commit.stdout.strip()


def worktree(rev: str, where: Path) -> Path:
    """A checkout of ``rev`` (a worktree of this repository; reused when it is there at that commit)."""
    sha = commit_of(rev)
    path = Path(where) / f"tree-{sha[:12]}"
    if not (path / ".git").exists():
        subprocess.run(["git", "worktree", "add", "--detach", "--force", str(path), sha], cwd=ROOT,
                       capture_output=True, text=True, check=True)
    return path


def measured(store: dict, claim_id: str, budgets: tuple[str, ...] | None = None) -> list[tuple[str, str]]:
    """(budget, code hash) of each of the claim's published measurements (calibration rows and maps) of ``budgets``
    (None: every budget)."""
    out = [(b, c["code_hash"]) for b, s in store["calibration"].items() for c in s.get("claims", [])
           if c["id"] == claim_id]
    out += [(b, m[claim_id]["code_hash"]) for b, m in store["maps"].items() if claim_id in m]
    return sorted({x for x in out if budgets is None or x[0] in budgets})


def basis_moved(store: dict, claim_id: str, basis: str | None, code_hash: str) -> bool:
    """Whether a published calibration row of the claim's code ``code_hash`` records a seed basis other than ``basis``
    (None: any basis): its code is unchanged but a claim it shares a fixture with changed (``calibrate.seed_basis``),
    so its confirmation seeds moved."""
    return any(c["id"] == claim_id and c.get("code_hash") == code_hash and c.get("seed_basis") not in (None, basis)
               for s in store["calibration"].values() for c in s.get("claims", []))


def carry(rev: str, claims: list, *, workdir: Path, budgets: tuple[str, ...] = (CANARY_BUDGET,),
          seeds: tuple[int, ...] = CANARY_SEEDS, workers: int = 1, rows: tuple[str, ...] | None = None) -> list[dict]:
    """Compare ``claims`` at ``rev`` and at the working tree on the canary (at ``budgets``), and carry forward the
    published measurements of those whose canary records are identical; returns one row per claim (``status``:
    ``carried``, ``differs``, ``current`` (its measurements are of this code already), ``unchanged`` (its code is as
    at ``rev``: nothing to compare), ``unpublished`` (nothing of the code at ``rev`` to carry)).

    ``rows``: carry only the rows (calibration rows and maps) of these budgets, each of which the canary must run at;
    the carry records them (``verify.published.covers``) and the claim's rows of other budgets stay of older code.
    For a change that moves numbers at one budget alone (the quick budget's sizes): ``rows=("standard",)`` keeps the
    standard calibration and maps, and only the quick calibration is re-run."""
    if rows is not None and not set(rows) <= set(budgets):
        raise ValueError(f"carrying the rows of {', '.join(rows)} needs the canary at those budgets (it runs at "
                         f"{', '.join(budgets)})")
    store = published.load()
    # the code the canary measures is the working tree's now: its commit is read before the runs, not after them
    # (``dirty``: tracked files differed from that commit, so the commit alone does not hold the measured code)
    code = {k: v for k, v in published.stamp().items() if k in ("commit", "dirty")}
    then = code_hashes_at(worktree(rev, workdir))
    out, todo, unchanged = [], [], []
    hashes = {c.id: registry.code_hash(c) for c in claims}
    measured_of = {c.id: measured(store, c.id, rows) for c in claims}
    for c in claims:
        now, old, hs = hashes[c.id], then.get(c.id), measured_of[c.id]
        rest = [(b, h) for b, h in hs if not published.current(c.id, h, now, store["carried"], b)]
        froms = [(b, h) for b, h in rest if old and published.current(c.id, h, old, store["carried"], b)]
        if not hs:
            out.append({"id": c.id, "status": "unpublished", "why": "nothing published"})
        elif not rest or old == now:  # all current; or what was current at ``rev`` is current now, and its other
            unchanged.append(c)       # measurements are of code before ``rev``, which comparing the two cannot carry
        elif froms:
            todo.append((c, old, now, froms))
        elif len(rest) < len(hs):  # carried already (an earlier carry, perhaps with a stronger canary): kept as it is
            out.append({"id": c.id, "status": "current", "why": f"its measurements of the code at {rev} are carried "
                                                                "already; its others are of code before that"})
        else:
            out.append({"id": c.id, "status": "unpublished",
                        "why": f"no published measurement is of the code at {rev}"})
    # its code, hence every number it computes at a given seed, is unchanged: no canary can differ
    recorded = [c for c in unchanged if c.id not in store["carried"] and basis_moved(store, c.id, None, hashes[c.id])]
    bases = calibrate.seed_bases(recorded) if recorded else {}
    mates = [c for c in recorded if basis_moved(store, c.id, bases[c.id], hashes[c.id])]
    for c in unchanged:
        if c in mates:
            continue
        older = [h for b, h in measured_of[c.id] if not published.current(c.id, h, hashes[c.id], store["carried"], b)]
        out.append({"id": c.id, "status": "current", "why": "its published measurements are of this code"} if not older
                   else {"id": c.id, "status": "unchanged", "why": f"its code is as at {rev}; its measurements of "
                                                                  "code before that stay of older code"})
    ids = [c.id for c, *_ in todo]
    diff: dict[str, list[str]] = {}
    digests: dict[str, dict] = {cid: {} for cid in ids}
    tree = worktree(rev, workdir)
    for budget in budgets:
        for seed in seeds:
            if not ids:
                break
            tag = f"{budget}-seed{seed}"
            before = run_at(tree, ids, budget, seed, Path(workdir) / f"then-{tag}", workers)
            after = run_at(ROOT, ids, budget, seed, Path(workdir) / f"now-{tag}", workers)
            for cid in ids:
                if cid not in before or cid not in after:
                    diff.setdefault(cid, []).append(f"no record at {tag}")
                    continue
                d = differences(before[cid], after[cid])
                if d:
                    diff.setdefault(cid, []).append(f"{tag}: {', '.join(d)}")
                digests[cid][tag] = digest(after[cid])
    rev = commit_of(rev)[:7]
    for c, old, now, froms in todo:
        if c.id in diff:
            # an earlier carry to other code is dropped; one to the code at ``rev`` stays: it is what makes the rows
            # current there, so a later carry from ``rev`` (a fixed change, a canary re-run) can chain through it
            if store["carried"].get(c.id, {}).get("to") != old:
                store["carried"].pop(c.id, None)
            out.append({"id": c.id, "status": "differs", "why": "; ".join(diff[c.id])})
        else:
            store["carried"][c.id] = {"from": sorted({h for _, h in froms}), "to": now, "rev": rev, **code,
                                      "canary": {"budgets": list(budgets), "seeds": list(seeds),
                                                 "digests": digests[c.id]}, "time": results.now_utc()}
            if rows is not None:
                store["carried"][c.id]["budgets"] = sorted({b for b, _ in froms})
            out.append({"id": c.id, "status": "carried", "why": f"identical at {len(digests[c.id])} canary records"})
    for c in mates:
        now = hashes[c.id]
        store["carried"][c.id] = {"from": [now], "to": now, "rev": rev, **code,
                                  "canary": {"budgets": [], "seeds": [], "digests": {},
                                             "why": "code unchanged; the seed basis moved with a fixture mate's code"},
                                  "time": results.now_utc()}
        out.append({"id": c.id, "status": "carried", "why": "its code is unchanged (a fixture mate's changed): its "
                                                           "rows keep the seeds they were measured at"})
    published.save(store)
    return out
