"""One claim's evidence in the terminal (``verify show``) and what differs between two runs (``verify diff``).

Both read stored records (``verify run``, ``verify report``), never run anything, and print plain text that reads in a
terminal and pipes well, or ``--json``.

``show``: the claim's verdict of record and class (``verify.record``), its headline (what was decided, at what
resolution), every check with each decision (its interval, band, margin, the alternative it excludes, its power),
every control and whether it was rejected, the findings (its own and its notes file's), its free choices and their map,
its scope filters with what they removed, and where the record is.

``diff``: per claim present in both runs, what differs: the verdict, a check's or control's status, a decision's
status or interval, a measured value (beyond a relative tolerance), the seed, budget, code or machine it ran on.
"""
from __future__ import annotations

import math
from pathlib import Path

from verify import expectations, record, results


def _num(x) -> str:
    if x is None:
        return "—"
    if isinstance(x, float) and not math.isfinite(x):
        return "diverged" if math.isnan(x) else ("+inf" if x > 0 else "-inf")
    return f"{x:.4g}" if isinstance(x, float) else str(x)


def view(rec: dict, standing: dict | None = None, smap: dict | None = None, path: Path | None = None) -> dict:
    """What ``verify show`` prints, as data (``--json``)."""
    from verify.report import headline

    cid = rec["claim"]["id"]
    try:
        exp = expectations.expected(cid, rec["budget"], rec["seed"])
        diagnosis = {"verdict": exp.verdict, "diagnosis": exp.diagnosis, "unstable": exp.unstable}
    except KeyError:
        diagnosis = None
    checks = []
    for c in rec["checks"]:
        ds = (c.get("details") or {}).get("decisions", [])
        checks.append({"name": c["name"], "kind": c["kind"], "status": c["status"],
                       "evidence": c.get("evidence", "paper"), "summary": c["summary"],
                       "decisions": [{k: d.get(k) for k in ("name", "status", "lo", "hi", "claimed", "band", "margin",
                                                            "excludes", "power")} for d in ds]})
    return {
        "id": cid, "title": rec["claim"]["title"], "fidelity": rec["claim"]["fidelity"],
        "class": (standing or {}).get("class"), "why": (standing or {}).get("why", ""),
        "verdict_of_record": (standing or {}).get("record", {}).get("text"),
        "this_run": {"verdict": rec["verdict"], "seed": rec["seed"], "budget": rec["budget"], "reason": rec["reason"]},
        "headline": headline(rec), "checks": checks,
        "controls": [{"name": k["name"], "target": k.get("target"), "rejected": bool(k.get("rejected")),
                      "summary": k["summary"]} for k in rec["controls"]],
        "findings": list(rec["claim"].get("findings") or []), "notes": diagnosis,
        "free_choices": rec["claim"].get("free_choices") or [],
        "map": None if smap is None else {k: smap.get(k) for k in ("headline", "budget", "seed", "holds", "of",
                                                                     "current", "carried")},
        "scope": [a for a in rec["claim"].get("assumptions", []) if a.get("scope")],
        "record": str(path) if path else None,
    }


def text(v: dict) -> list[str]:
    """The lines ``verify show`` prints."""
    out = [f"{v['id']}: {v['title']}  [{v['fidelity']}]"]
    if v["class"]:
        out.append(f"class: {v['class']}" + (f" ({v['why']})" if v["why"] else ""))
        out.append(f"verdict of record: {v['verdict_of_record']}")
    r = v["this_run"]
    out.append(f"this run: {r['verdict']} (seed {r['seed']}, {r['budget']})")
    out.append(f"headline: {v['headline']}")
    for c in v["checks"]:
        tag = "" if c["evidence"] == "paper" else " (implementation check)"
        out.append(f"check {c['name']} [{c['kind']}{tag}]: {c['status']}")
        for d in c["decisions"]:
            line = f"    {d['status']:<12} {d['name']}: [{_num(d['lo'])}, {_num(d['hi'])}] {d['claimed']}"
            if d.get("margin") is not None:
                line += f"; margin ± {_num(d['margin'])} against {d.get('excludes') or '—'}"
            if d.get("power") is not None:
                line += f"; power {_num(d['power'])}"
            out.append(line)
    for k in v["controls"]:
        out.append(f"control {k['name']!r} on {k['target']}: {'rejected' if k['rejected'] else 'NOT rejected'}")
    if v["notes"] and v["notes"]["diagnosis"]:
        n = v["notes"]
        out.append(f"notes ({n['verdict']}{'; seed-dependent: ' + n['unstable'] if n['unstable'] else ''}): "
                   f"{n['diagnosis']}")
    out += [f"finding: {f}" for f in v["findings"]]
    for f in v["free_choices"]:
        out.append(f"free choice {f['name']} = {f['value']} (range {f['range']})")
    if v["map"]:
        m = v["map"]
        older = "" if m.get("current") else ", of older code"
        out.append(f"map ({m['budget']}, seed {m['seed']}{older}): {m['headline']}")
    for a in v["scope"]:
        out.append(f"scope filter {a['name']}: {a['description']} (removed {a.get('removed')} of {a.get('total')} "
                   f"{a.get('unit', '')})")
    if v["record"]:
        out.append(f"record: {v['record']}")
    return out


def _measurements(rec: dict) -> dict[str, tuple]:
    out = {}
    for part in ("checks", "controls"):
        for c in rec[part]:
            for m in c.get("measurements", []):
                out[f"{c['name']}: {m['name']}"] = (m.get("value"), m.get("lo"), m.get("hi"))
    return out


def _differs(a, b, tol: float) -> bool:
    if a is None or b is None:
        return a is not b
    if isinstance(a, float) or isinstance(b, float):
        a, b = float(a), float(b)
        if not (math.isfinite(a) and math.isfinite(b)):
            return not (a == b or (math.isnan(a) and math.isnan(b)))
        return abs(a - b) > tol * max(1.0, abs(a), abs(b))
    return a != b


def diff(a: list[dict], b: list[dict], tol: float = 1e-9) -> list[dict]:
    """Per claim in both runs, the differences (``{"id", "what", "a", "b"}`` rows); claims in one run only too."""
    ra = {r["claim"]["id"]: r for r in a}
    rb = {r["claim"]["id"]: r for r in b}
    out = [{"id": cid, "what": "only in one run", "a": cid in ra, "b": cid in rb} for cid in sorted(set(ra) ^ set(rb))]
    for cid in sorted(set(ra) & set(rb)):
        x, y = ra[cid], rb[cid]
        for key in ("verdict", "seed", "budget", "code_hash", "device"):
            if x.get(key) != y.get(key):
                out.append({"id": cid, "what": key, "a": x.get(key), "b": y.get(key)})
        if x.get("versions") != y.get("versions"):
            va, vb = x.get("versions") or {}, y.get("versions") or {}
            for lib in sorted(set(va) | set(vb)):
                if va.get(lib) != vb.get(lib):
                    out.append({"id": cid, "what": f"version of {lib}", "a": va.get(lib), "b": vb.get(lib)})
        for part in ("checks", "controls"):
            sa, sb = {c["name"]: c for c in x[part]}, {c["name"]: c for c in y[part]}
            for name in sorted(set(sa) | set(sb)):
                if name not in sa or name not in sb:
                    out.append({"id": cid, "what": f"{part[:-1]} {name}", "a": name in sa, "b": name in sb})
                    continue
                if sa[name]["status"] != sb[name]["status"]:
                    out.append({"id": cid, "what": f"{part[:-1]} {name}: status", "a": sa[name]["status"],
                                "b": sb[name]["status"]})
                da = {d["name"]: d for d in (sa[name].get("details") or {}).get("decisions", [])}
                db = {d["name"]: d for d in (sb[name].get("details") or {}).get("decisions", [])}
                for dn in sorted(set(da) & set(db)):
                    if da[dn]["status"] != db[dn]["status"] or any(
                            _differs(da[dn].get(k), db[dn].get(k), tol) for k in ("lo", "hi")):
                        out.append({"id": cid, "what": f"{name}: decision {dn}",
                                    "a": [da[dn]["status"], da[dn].get("lo"), da[dn].get("hi")],
                                    "b": [db[dn]["status"], db[dn].get("lo"), db[dn].get("hi")]})
        ma, mb = _measurements(x), _measurements(y)
        for key in sorted(set(ma) & set(mb)):
            if any(_differs(u, v, tol) for u, v in zip(ma[key], mb[key])):
                out.append({"id": cid, "what": f"measured {key}", "a": list(ma[key]), "b": list(mb[key])})
    return out


def diff_text(rows: list[dict], a: Path, b: Path, tol: float) -> list[str]:
    if not rows:
        return [f"no differences between {a} and {b} (relative tolerance {tol:g})"]
    fmt = lambda v: "[" + ", ".join(_num(x) for x in v) + "]" if isinstance(v, list) else _num(v)  # noqa: E731
    out = [f"{r['id']}  {r['what']}: {fmt(r['a'])} -> {fmt(r['b'])}" for r in rows]
    out.append(f"{len(rows)} differences in {len({r['id'] for r in rows})} claims (relative tolerance {tol:g})")
    return out


def records(results_dir: Path) -> list[dict]:
    """The records stored in a results directory (``ValueError`` when there is none)."""
    recs = results.read_records(results_dir)
    if not recs:
        raise ValueError(f"{results_dir} holds no records (`verify run --results {results_dir}` writes them)")
    return recs


def standing_of(rec: dict, results_dir: Path, maps: dict) -> dict:
    """The record's verdict of record and class (``verify.record``), from the calibration at its budget."""
    from verify import calibrate

    first = calibrate.first_confirmation_seeds([rec["claim"]["id"]], rec["budget"])  # by id: no module imported
    (s,) = record.standings([rec], {rec["budget"]: calibrate.load_summary(results_dir, rec["budget"])}, maps,
                            first_seeds=first)
    return s

