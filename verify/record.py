"""What a reader is shown for a claim: its verdict of record (from its confirmation seeds) and its verdict class
(over its free choices).

**The verdict of record.**  One run at one seed is one draw: it says as much about the seed as about the paper.  The
verdict a reader is shown is the claim's outcome over its *confirmation seeds* at a budget (``verify.calibrate``: seeds
derived from the code that decides the claim, so no seed that chose anything is among them), shown as a distribution
("verified at 20 of 20 quick confirmation seeds").  It reads as one verdict when one outcome holds at ``AGREE`` of the
seeds or more:

* ``verified`` when verified at >= ``AGREE`` of the seeds and violated at none (a seed's inconclusive is a failure
  to decide, not evidence either way; a violation at any seed is evidence against);
* ``violated`` when violated at >= ``AGREE`` of the seeds;
* ``inconclusive`` otherwise: undecided at most seeds, or *seed-dependent* (the distribution says which).

``AGREE`` = 0.9 is the power the quick tier is held to (a claim undecided at more than 10 % of its confirmation
seeds needs a stated reason); at 5 standard seeds it means all 5.  The rule reads the distribution only, never a
particular seed.  A calibration of older code (the claim changed since) is still shown, flagged; when the current
code's own draw disagrees with it, the verdict of record is ``inconclusive`` until the claim is re-calibrated.  A
claim with no calibration at all has only its draw: at its first confirmation seed that is a distribution of one
("verified at 1 of 1"); at a development seed (``--seed``) nothing confirms it.

**The verdict class** says what a verdict of record means over the free choices (``verify.sensitivity``'s map):

======================================  ==========================================================================
class                                   when
======================================  ==========================================================================
``verified over the range``             verified, and verified at every setting of a map that covers every declared
                                        free choice (or the claim declares none, with its reason)
``verified at our values only``         verified, but not at every setting (or not mapped): the map says where
``depends on a choice``                 violated at our values but not at every setting of the map, or not shown
                                        over the range (no map covering every choice): *not reproduced under our
                                        reading*, never a plain violation
``violated over the range``             violated at every setting of a map covering every choice (or no free choice):
                                        the only class that is a finding against a paper
``inconclusive``                        the verdict of record is inconclusive
``not checked``                         the claim says why
======================================  ==========================================================================

A map of older code is used, flagged, when it covers every choice the claim now declares.
"""
from __future__ import annotations

import math
from collections import Counter

#: the share of confirmation seeds one outcome needs to be the verdict of record (0.9: the quick tier's power target)
AGREE = 0.9
VERDICTS = ("verified", "violated", "inconclusive", "not checked")
CLASSES = ("verified over the range", "verified at our values only", "depends on a choice", "violated over the range",
           "inconclusive", "not checked")
#: what each class tells a reader, in one line (the report's legend and the docs)
MEANING = {
    "verified over the range": "verified at our values and at every setting of the plausible range of its free choices",
    "verified at our values only": "verified at our values; not at every setting of the plausible range (where it "
                                   "fails is named)",
    "depends on a choice": "violated at our values but not over the whole plausible range: not reproduced under our "
                           "reading, not a finding against the paper",
    "violated over the range": "violated at every setting of the plausible range: a finding against the paper (or our "
                               "reconstruction of it)",
    "inconclusive": "undecided at most confirmation seeds, or seed-dependent",
    "not checked": "the claim says why it cannot be checked here",
}


def needed(n: int) -> int:
    """Seeds of ``n`` one outcome needs to be the verdict of record."""
    return max(1, math.ceil(AGREE * n - 1e-9))


def from_counts(counts: dict[str, int]) -> str:
    """The verdict of record of a distribution ``{verdict: seeds}`` (the rule in the module docstring)."""
    n = sum(counts.values())
    if n == 0:
        return "inconclusive"
    if counts.get("not checked"):
        return "not checked"
    if counts.get("verified", 0) >= needed(n) and not counts.get("violated"):
        return "verified"
    if counts.get("violated", 0) >= needed(n):
        return "violated"
    return "inconclusive"


def describe(counts: dict[str, int], budget: str, where: str = "confirmation seeds") -> str:
    """"verified at 18 of 20 quick confirmation seeds (inconclusive at 2)"."""
    n = sum(counts.values())
    order = sorted(counts.items(), key=lambda kv: (-kv[1], VERDICTS.index(kv[0]) if kv[0] in VERDICTS else 9))
    (top, k), rest = order[0], order[1:]
    seeds = f"{budget} {where}" if n != 1 else f"{budget} {where[:-1]}"
    text = f"{top} at {k} of {n} {seeds}"
    if rest:
        text += " (" + ", ".join(f"{v} at {j}" for v, j in rest) + ")"
    return text


def of_record(draw: dict | None, row: dict | None, budget: str, *, confirmation_draw: bool = True,
              not_checked: str | None = None) -> dict:
    """The verdict of record of one claim at ``budget``.

    ``draw``: the claim's record at this code (a report's or a run's), or None; ``row``: its row of the calibration
    summary of ``budget`` (``verify.calibrate.load_summary``: ``verdicts`` by seed, ``stale`` when of older code), or
    None; ``confirmation_draw``: whether ``draw`` is at the claim's first confirmation seed (not a development seed).
    Returns ``verdict``, ``counts``, ``n``, ``budget``, ``older_code``, ``text`` (one line for a table cell) and
    ``source`` (``"calibration"``, ``"draw"`` or ``"none"``)."""
    if not_checked or (draw is not None and draw.get("verdict") == "not checked"):
        return {"verdict": "not checked", "counts": {}, "n": 0, "budget": budget, "older_code": False,
                "text": "not checked", "source": "none"}
    if row is not None and row.get("verdicts"):
        counts = dict(Counter(row["verdicts"].values()))
        verdict = from_counts(counts)
        older = bool(row.get("stale"))
        text = describe(counts, budget)
        if row.get("seeds_carried"):
            text += ", measured at this code at seeds derived before a claim sharing its fixtures changed"
        elif row.get("carried"):
            text += ", carried forward to this code (identical at the canary seeds)"
        if older:
            text += ", of older code"
            now = draw.get("verdict") if draw is not None and draw.get("code_hash") != row.get("code_hash") else None
            if now is not None and now not in counts:
                verdict = "inconclusive"
                text += f"; the current code's draw is {now}: re-calibrate"
        return {"verdict": verdict, "counts": counts, "n": sum(counts.values()), "budget": budget,
                "older_code": older, "text": text, "source": "calibration"}
    if draw is not None and confirmation_draw:
        counts = {draw["verdict"]: 1}
        return {"verdict": from_counts(counts), "counts": counts, "n": 1, "budget": budget, "older_code": False,
                "text": describe(counts, budget) + "; not yet calibrated", "source": "draw"}
    text = "not confirmed: no calibration" + (f"; a development draw is {draw['verdict']}" if draw else "")
    return {"verdict": "inconclusive", "counts": {}, "n": 0, "budget": budget, "older_code": False, "text": text,
            "source": "none"}


def uncovered(smap: dict, choices: list[str]) -> list[str]:
    """The claim's declared free choices a map does not vary (a map of older code may predate a choice)."""
    have = {c["name"] for c in smap.get("choices", [])}
    return [c for c in choices if c not in have]


def verdict_class(verdict: str, choices: list[str], smap: dict | None, *, no_free_choice: str = "",
                  older_map: bool = False) -> dict:
    """The class of a verdict of record over the free choices (the table in the module docstring).

    ``choices``: the names of the claim's declared free choices; ``smap``: its sensitivity map (``settings`` with
    their ``verdict``s), or None; ``older_map``: the map is of older code.  Returns ``class`` and ``why`` (one line)."""
    if verdict in ("not checked", "inconclusive"):
        return {"class": verdict, "why": ""}
    if verdict not in ("verified", "violated"):
        raise ValueError(f"verdict_class: unknown verdict {verdict!r}")
    good = "verified over the range" if verdict == "verified" else "violated over the range"
    partial = "verified at our values only" if verdict == "verified" else "depends on a choice"
    if not choices:
        return {"class": good, "why": "no free choice" + (f": {no_free_choice}" if no_free_choice else "")}
    if smap is None:
        return {"class": partial, "why": "its free choices are not mapped"
                + (": not shown over the range" if verdict == "violated" else "")}
    older = " (map of older code)" if older_map else ""
    missing = uncovered(smap, choices)
    if missing:
        return {"class": partial, "why": f"its map does not vary {', '.join(missing)}{older}"}
    rows = smap.get("settings") or []
    same = sum(r["verdict"] == verdict for r in rows)
    if rows and same == len(rows):
        return {"class": good, "why": f"{verdict} at all {len(rows)} settings{older}"}
    where = "; ".join(f"{k} ({w[0]})" for k, w in (smap.get("depends_on") or {}).items()) if isinstance(
        smap.get("depends_on"), dict) else ", ".join(smap.get("depends_on") or [])
    why = f"{verdict} at {same} of {len(rows)} settings" + (f"; depends on {where}" if where else "") + older
    return {"class": partial, "why": why}


def class_counts(classes: list[str]) -> dict[str, int]:
    """``{class: count}`` in the order of ``CLASSES`` (every class present, zeros included)."""
    c = Counter(classes)
    return {k: c.get(k, 0) for k in CLASSES}


def standing(rec: dict, calibration: dict | None, maps: dict[str, dict], *, confirmation_draw: bool = True) -> dict:
    """One claim's verdict of record and class from its record ``rec`` (the draw), the calibration summary of the
    record's budget (``verify.calibrate.load_summary``; rows flagged ``stale``) and the maps to show (claim id ->
    map, of this code or older: ``verify.sensitivity.published_maps(..., older=True)`` or a run's own)."""
    cid = rec["claim"]["id"]
    row = next((c for c in (calibration or {}).get("claims", []) if c["id"] == cid), None)
    if row is not None and row.get("stale") is None:  # a summary not annotated by load_summary
        row = {**row, "stale": row.get("code_hash") != rec["code_hash"]}
    vr = of_record(rec, row, rec["budget"], confirmation_draw=confirmation_draw,
                   not_checked=rec["claim"].get("not_checked") if rec["verdict"] == "not checked" else None)
    smap = maps.get(cid)
    choices = [f.get("name", "?") for f in rec["claim"].get("free_choices") or []]
    older = smap is not None and not smap.get("current", smap.get("code_hash") == rec["code_hash"])
    cls = verdict_class(vr["verdict"], choices, smap, no_free_choice=rec["claim"].get("no_free_choice") or "",
                        older_map=older)
    return {"id": cid, "paper": rec["claim"]["paper"], "record": vr, **cls}


def shown_maps(records: list[dict]) -> dict[str, dict]:
    """The published map shown with each record: of the record's code, else one of older code (flagged)."""
    from verify import sensitivity

    return sensitivity.published_maps({r["claim"]["id"]: r["code_hash"] for r in records}, older=True)


def first_seeds_of(records: list[dict]) -> dict[str, int]:
    """Each record's claim's first confirmation seed at the record's budget (``calibrate.first_confirmation_seeds``;
    a carried claim's from the basis its row records), to tell a draw at it from a development draw.  Registered
    claims are named by id, so their bases come from the registry's index without importing a claim module."""
    from verify import calibrate, registry

    known = {e["id"] for e in registry.index()}
    return calibrate.first_confirmation_seeds([r["claim"]["id"] for r in records if r["claim"]["id"] in known],
                                              {r["claim"]["id"]: r["budget"] for r in records})


def standings(records: list[dict], calibrations: dict[str, dict | None], maps: dict[str, dict] | None = None,
              *, first_seeds: dict[str, int] | None = None) -> list[dict]:
    """:func:`standing` of each record.  ``calibrations``: budget -> calibration summary (``load_summary``);
    ``maps``: claim id -> the map to show (default: :func:`shown_maps`); ``first_seeds``: each claim's first
    confirmation seed at its current code (default: :func:`first_seeds_of`)."""
    maps = shown_maps(records) if maps is None else maps
    first_seeds = first_seeds_of(records) if first_seeds is None else first_seeds
    return [standing(r, calibrations.get(r["budget"]), maps,
                     confirmation_draw=first_seeds.get(r["claim"]["id"]) == r["seed"]) for r in records]
