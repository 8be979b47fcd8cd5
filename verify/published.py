"""The published measurements: one store, ``verify/published.json``, with one staleness rule.

What the suite publishes about its claims are measurements of their code: the operating characteristics over the
confirmation seeds (``verify calibrate --publish``: per budget, a summary with a row per claim) and the sensitivity
maps (``verify sensitivity --publish``: per budget, a map per claim), with the append-only log of every calibration and
map run (published or not) and the record of what was carried forward to changed code.  They live in one file::

    {"schema": 1,
     "calibration": {"quick": {summary}, "standard": {summary}},
     "maps": {"quick": {"A.L5": {map}, ...}, "standard": {...}},
     "carried": {"A.L5": {"from": ["<code hash>"], "to": "<code hash>", "canary": {...}, "commit": "..."}},
     "log": [{one calibration or map run}, ...]}

**One staleness rule** (:func:`current`): a published row or map measures the claim's current code when its code hash
is the claim's code hash now, or when the claim was *carried forward* from that hash to the current one: a change whose
records are identical at the canary seeds to the published code's (``verify carry``) keeps its published
measurements, and their confirmation seeds stay as they were.  A carry may cover some budgets only (``"budgets":
["standard"]``: its canary ran at the standard budget, after a change to the quick budget's path alone); rows of other
budgets are then of older code until re-run.  Anything else is of older code and shown as such.
"""
from __future__ import annotations

import json
import os
from pathlib import Path

from verify import results

PATH = Path(__file__).with_name("published.json")
SCHEMA = 1


def path() -> Path:
    """The store (``VERIFY_PUBLISHED`` moves it: tests and scratch checkouts)."""
    return Path(os.environ.get("VERIFY_PUBLISHED") or PATH)


def load() -> dict:
    """The store, with every section present (empty when the file is missing or unreadable)."""
    try:
        data = json.loads(path().read_text())
    except (OSError, json.JSONDecodeError):
        data = {}
    data.setdefault("schema", SCHEMA)
    for key in ("calibration", "maps", "carried"):
        data.setdefault(key, {})
    data.setdefault("log", [])
    return data


def save(data: dict) -> Path:
    """Write the store atomically (an interrupted write leaves the old one)."""
    p = path()
    results.atomic_write_text(p, json.dumps(data, indent=1, sort_keys=True, default=float) + "\n")
    return p


def update(section: str, key: str, value) -> Path:
    """Set ``data[section][key]`` and write the store."""
    data = load()
    data[section][key] = value
    return save(data)


def stamp() -> dict:
    """When and at what code a run happened, for its log entry: the time, the commit, and whether tracked files
    differed from it (``dirty``; None with ``commit`` "" where git cannot say)."""
    import subprocess

    root = Path(__file__).resolve().parent.parent
    when = {"time": results.now_utc()}
    try:
        head = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=root, capture_output=True, text=True,
                              timeout=10).stdout.strip()
        dirty = bool(subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"], cwd=root,
                                    capture_output=True, text=True, timeout=10).stdout.strip())
    except (OSError, subprocess.SubprocessError):
        return when | {"commit": "", "dirty": None}
    return when | {"commit": head, "dirty": dirty}


def append_log(entry: dict) -> Path:
    """Append one entry to the log (the store rewritten whole, atomically)."""
    data = load()
    data["log"].append(entry)
    return save(data)


def covers(entry: dict | None, budget: str | None) -> bool:
    """Whether a carried entry covers the rows (calibration rows and maps) of ``budget``: every budget, unless the
    entry names its ``budgets`` (a carry whose canary ran at those budgets only, ``verify carry --rows standard``,
    after a change that moved numbers at another budget alone); ``budget`` None asks about any row."""
    return bool(entry) and (budget is None or not entry.get("budgets") or budget in entry["budgets"])


def current(claim_id: str, measured_hash: str | None, code_hash: str, carried: dict | None = None,
            budget: str | None = None) -> bool:
    """Whether a measurement of the claim's code ``measured_hash`` (a row or map of ``budget``) measures its code
    ``code_hash`` now: the same code, or code it was carried forward to (:mod:`verify.carry`) with a carry that covers
    ``budget`` (:func:`covers`)."""
    if measured_hash == code_hash:
        return True
    c = (load()["carried"] if carried is None else carried).get(claim_id)
    return covers(c, budget) and measured_hash in (c.get("from") or []) and c.get("to") == code_hash


def row_state(claim_id: str, row: dict, code_hash: str, carried: dict, basis: str | None = None,
              budget: str | None = None) -> str:
    """``"current"``, ``"carried"`` or ``"older"`` for a published row (calibration or map, of ``budget``) of
    ``claim_id`` whose code is ``code_hash`` now: :func:`current` on its code hash; and, given the claim's seed basis
    now (``basis``; for a calibration row), a row whose recorded basis differs ran at the seeds of older code (a fixture
    mate changed) and counts only if the claim was carried for that budget (``verify.carry``: its rows keep the seeds
    they were measured at)."""
    moved = basis is not None and row.get("seed_basis") not in (None, basis)
    if not current(claim_id, row["code_hash"], code_hash, carried, budget) or (
            moved and not covers(carried.get(claim_id), budget)):
        return "older"
    return "carried" if row["code_hash"] != code_hash or moved else "current"
