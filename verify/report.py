"""Render results records into one self-contained HTML file (no scripts, no network).

Math is MathML (claim statements converted from LaTeX by latex2mathml, derivation
steps printed by sympy: ``verify.mathml``), plots are inline SVG (``verify.svg``), styling is inline CSS; templating
is Jinja2 (``verify/templates``).  The JSON bundle of the records (plus the
report's run metadata) is written beside the HTML.  This module is the view model and the rendering; each paper's
heading is its package's ``TITLE`` (``verify.registry.papers``).

What the report derives from a record (and nothing else, so a stored record
renders the same tomorrow):

* a **headline** per claim: the first check's ``headline`` when a check set one,
  else the first measurement with an interval (``name value [lo, hi], claimed X``);
  ``not checked`` claims show their reason;
* the **evidence** that ran, per kind (symbolic / numeric / probe / controls);
* **counterexamples**: a check (not a control) whose probe shrank one, or whose
  four-cell accounting has instances in the counterexample cell;
* **constants** a check chose (``details["constants"]``), shown as a table;
* the claim's **decision ledger** (``claim["ledger"]``): each decision constant's value, reason, the commit that
  fixed it, before or after seeing the data, and its changes; tallied per claim, per paper and at the top;
* an **interval glyph** per measurement (interval, point, claimed value or envelope), the claim read from the band
  of the decision the measurement came from (:func:`claimed_relation`).

How it is shown: every printed value goes through :func:`verify.mathml.prose` (TeX-style ``^{…}``/``_{…}`` as
superscripts and subscripts), every plot through :func:`verify.svg.compact_svg` (the same drawing in about half the
bytes, sized to be legible);
each claim carries a contents bar and folds what a reader rarely needs (``verify/templates/_claim.html``).
"""
from __future__ import annotations

import json
import math
import os
import platform
import re
from collections import Counter
from collections.abc import Sequence
from pathlib import Path

import jinja2
from markupsafe import Markup, escape

from theorems.claim import FAMILY_ALPHA, MAX_DECISIONS, Context, worst_status
from theorems.probe import COUNTEREXAMPLE, FAIL_FAIL, FAIL_HOLD, HOLD_HOLD
from verify import calibrate, ledger, record, registry, results
from verify.mathml import prose, statement_mathml, step_mathml
from verify.svg import interval_glyph, scoped_svg

VERDICTS = ("verified", "violated", "inconclusive", "not checked")
KINDS = ("symbolic", "numeric", "probe")
FOUR_CELLS = (HOLD_HOLD, FAIL_FAIL, FAIL_HOLD, COUNTEREXAMPLE)
FIDELITY = {
    "exact": "the source text's words pin the statement down (up to notation); a verdict is about the paper's "
             "statement",
    "reconstructed": "the formula was rebuilt from the source text's prose and the proofs' structure; "
                     "a verdict is about our reconstruction",
    "qualitative": "only the shape of the claim survives; constants or exponents are measured and reported",
}
#: the one-page report's declared weight (bytes): the HTML of every claim at the quick budget, measured 6.3 MB on the
#: stored records once every claim had its three kinds of evidence (docs/report.md: 3.1 MB plots, 1.4 MB folded
#: ledgers); a reader opens the index and a claim's page, the one page is for print and search; a test renders stored
#: records, when there are some, and holds it to this
SIZE_BUDGET = 8_000_000


# ---------------------------------------------------------------------------
# numbers
# ---------------------------------------------------------------------------

def fmt(v, digits: int = 4) -> str:
    if v is None:
        return "—"
    if isinstance(v, bool):
        return str(v)
    if isinstance(v, int):
        return str(v)
    if isinstance(v, float):
        if math.isnan(v):  # a computation that did not give a number (overflow, a diverged run): said in words
            return "diverged"
        if math.isinf(v):
            return "infinite" if v > 0 else "−infinite"
        return f"{v:.{digits}g}"
    return str(v)


def fmt_interval(value, lo, hi) -> tuple[str, str, str]:
    """Shortest significant-digit formatting (3..6) that tells value, lo and hi apart."""
    for d in range(3, 7):
        s = tuple(fmt(x, d) for x in (value, lo, hi))
        if len({x for x in s if x != "—"}) == len([x for x in s if x != "—"]):
            return s
    return s


def fmt_value(v) -> str:
    """A constant or counterexample field: numbers short, lists element-wise, the rest as text."""
    if isinstance(v, (list, tuple)):
        inner = ", ".join(fmt_value(x) for x in v[:12])
        return f"[{inner}{', …' if len(v) > 12 else ''}]"
    if isinstance(v, dict):
        return "{" + ", ".join(f"{k}: {fmt_value(x)}" for k, x in v.items()) + "}"
    return fmt(v)


def source(value) -> Markup:
    """Program text (a ledger constant's source, a control's overrides): escaped, never rewritten."""
    return escape(value if isinstance(value, str) else fmt_value(value))


_CLAIMED = re.compile(r"^\s*(==|=|≈|~|<=|≤|<|>=|≥|>)?\s*([-−+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-−+]?\d+)?)")


def parse_claimed(claimed: str | None) -> tuple[str, float] | None:
    """``"= −1"`` -> ``("=", -1.0)``, ``"<= 0.5 (derived)"`` -> ``("<=", 0.5)``; None if not numeric.  Only for what
    carries no band: a measurement recorded without a decision (:func:`claimed_relation`)."""
    if not claimed:
        return None
    m = _CLAIMED.match(claimed)
    if not m:
        return None
    rel = {"==": "=", "≈": "=", "~": "=", None: "=", "≤": "<=", "<": "<=", "≥": ">=", ">": ">="}.get(m.group(1),
                                                                                                 m.group(1))
    try:
        return rel, float(m.group(2).replace("−", "-"))
    except ValueError:
        return None


def band_relation(band) -> tuple[str, float] | None:
    """A decision's band ``[a, b]`` (``numerics.stats.Decision.band``: the region a pass lies inside, margin and
    tolerance included) as a relation and a value: ``("=", centre)`` for an equality's finite band, ``("<=", b)`` or
    ``(">=", a)`` for a bound; None for no band."""
    if not isinstance(band, (list, tuple)) or len(band) != 2 or not all(isinstance(x, (int, float)) for x in band):
        return None
    a, b = float(band[0]), float(band[1])
    if math.isfinite(a) and math.isfinite(b):
        return "=", (a + b) / 2
    if math.isfinite(b):
        return "<=", b
    if math.isfinite(a):
        return ">=", a
    return None


def _decision_of(m: dict, decisions: Sequence[dict]) -> dict | None:
    """The decision a measurement was recorded from (``theorems.evidence.Evidence.decide`` writes both): the same
    name and claimed text, and the same interval where several share those."""
    same = [d for d in decisions if d.get("name") == m.get("name") and d.get("claimed") == m.get("claimed")]
    return next((d for d in same if d.get("lo") == m.get("lo") and d.get("hi") == m.get("hi")),
                same[0] if same else None)


def claimed_relation(item: dict, decisions: Sequence[dict] = ()) -> tuple[str, float] | None:
    """The relation and value ``item`` is claimed to satisfy (``("=", c)``, ``("<=", c)``, ``(">=", c)``), read from
    a band: a decision's own (``item`` a row of a check's ``details["decisions"]``), or for a measurement, the band of
    the decision it was recorded from, found among ``decisions``.  A measurement without a decision, and a record
    from before decisions carried a band, has only its claimed text, which is parsed (:func:`parse_claimed`)."""
    d = item if "band" in item else _decision_of(item, decisions)
    return band_relation((d or {}).get("band")) or parse_claimed(item.get("claimed"))


# ---------------------------------------------------------------------------
# per-record derivations
# ---------------------------------------------------------------------------

def _measurement_headline(m: dict) -> str:
    v, lo, hi = fmt_interval(m.get("value"), m.get("lo"), m.get("hi"))
    s = f"{m['name']} {v}"
    if m.get("lo") is not None and m.get("hi") is not None:
        s += f" [{lo}, {hi}]"
    if m.get("claimed"):
        s += f", claimed {m['claimed']}"
    return s


#: the note a claim's headline carries when every check that passed is an implementation check
IMPLEMENTATION_LEVEL = "implementation-level: holds by algebra once the code is right"


def implementation_level(rec: dict) -> bool:
    """Whether every check of the claim that passed is an implementation check (``Check.evidence``): then its passes
    say our code is right, not that the paper is."""
    passed = [c for c in rec.get("checks", []) if c["status"] == "pass"]
    return bool(passed) and all(c.get("evidence") == "implementation" for c in passed)


def headline(rec: dict) -> str:
    """One number a reader can quote: what was decided, at what resolution (:func:`decided`), then the check's own
    headline or its first measured interval; a claim whose passing checks are all implementation checks says so
    first."""
    text = _headline(rec)
    said = decided(rec)
    text = f"{said}. Measured: {text}" if said and rec["verdict"] != "not checked" else text
    return f"[{IMPLEMENTATION_LEVEL}] {text}" if implementation_level(rec) else text


def _short(text: str) -> str:
    """An alternative's name without its justification ("exponent −1 (the paper's …); half the distance" ->
    "exponent −1")."""
    return re.split(r"\s\(|;|:", text or "", maxsplit=1)[0].strip()


def _headline_check(rec: dict) -> dict | None:
    checks = rec.get("checks", [])
    ordered = sorted(checks, key=lambda c: c["status"] != "fail") if rec["verdict"] == "violated" else checks
    return next((c for c in ordered if c.get("headline")), None) or next(
        (c for c in ordered if (c.get("details") or {}).get("decisions")), None)


def decided(rec: dict) -> str:
    """What the headline's check decided and the resolution its data reached: for an equality, the band and the
    alternative its margin excludes beside the interval's half-width ("decided: -2 ± 0.5, against exponent −1;
    resolution ± 0.006"); for a bound, the bound beside the interval ("decided: ≤ -0.707; measured [-2.0005,
    -2.0001]"), so a measured exponent is not read as the decision.  "" for a check without decisions."""
    c = _headline_check(rec)
    ds = [d for d in ((c or {}).get("details") or {}).get("decisions", [])
          if d.get("lo") is not None and d.get("hi") is not None]
    if not ds:
        return ""
    d = next((d for d in ds if d.get("status") == c["status"]), ds[0])
    many = f" ({sum(x.get('status') == 'pass' for x in ds)} of {len(ds)} decisions pass)" if len(ds) > 1 else ""
    if d.get("margin") is not None and (claimed_relation(d) or ("",))[0] == "=":
        half = (d["hi"] - d["lo"]) / 2 if math.isfinite(d["lo"]) and math.isfinite(d["hi"]) else math.inf
        against = f", against {_short(d['excludes'])}" if d.get("excludes") else ""
        return f"decided: {d['claimed'][2:]}{against}{many}; resolution ± {fmt(half, 2)}"
    claimed = re.sub(r"\s*\(.*\)$", "", str(d.get("claimed", "")))
    return f"decided: {claimed}{many}"


def _headline(rec: dict) -> str:
    if rec["verdict"] == "not checked":
        return rec.get("reason") or "not checked"
    checks = rec.get("checks", [])
    # a violated claim leads with what failed
    ordered = sorted(checks, key=lambda c: c["status"] != "fail") if rec["verdict"] == "violated" else checks
    for c in ordered:
        if c.get("headline"):
            return c["headline"]
    for c in ordered:
        for m in c.get("measurements", []):
            if m.get("lo") is not None and m.get("hi") is not None:
                return _measurement_headline(m)
    for c in ordered:
        for m in c.get("measurements", []):
            return _measurement_headline(m)
    if ordered:
        s = ordered[0].get("summary", "")
        return s if len(s) <= 160 else s[:157] + "…"
    return rec.get("reason", "")


def missing_evidence(rec: dict) -> dict[str, str]:
    """The kinds of evidence a checked lemma or theorem (figures aside) lacks: "symbolic", "numeric" (for the paper:
    implementation checks do not count) or "probe", each with the claim's stated reason (``Claim.without``) or
    "no reason given"."""
    if rec["verdict"] == "not checked" or is_figure(rec):
        return {}
    checks = rec.get("checks", [])
    have = {"numeric" if c["kind"] == "numeric" else c["kind"] for c in checks
            if c["kind"] != "numeric" or c.get("evidence", "paper") == "paper"}
    why = rec["claim"].get("without") or {}
    return {k: why.get(k, "no reason given") for k in KINDS if k not in have}


def evidence(rec: dict) -> list[dict]:
    """Per evidence kind that ran: its worst status and how many checks; a kind a lemma or theorem lacks, with why;
    then the controls."""
    out = []
    missing = missing_evidence(rec)
    for kind in KINDS:
        cs = [c for c in rec.get("checks", []) if c["kind"] == kind]
        if kind in missing and not cs:
            out.append({"kind": kind, "status": "none", "n": 0, "label": "none", "title": missing[kind]})
            continue
        if kind in missing:  # numeric checks that are all implementation checks: no evidence for the paper
            cs_title = "; ".join(f"{c['name']}: {c['status']} (implementation check)" for c in cs)
            out.append({"kind": kind, "status": worst_status(c["status"] for c in cs), "n": len(cs),
                        "label": f"impl. only{' ×%d' % len(cs) if len(cs) > 1 else ''}",
                        "title": f"{cs_title}; no numeric evidence for the paper: {missing[kind]}"})
            continue
        if cs:
            worst = worst_status(c["status"] for c in cs)
            impl = sum(c.get("evidence") == "implementation" for c in cs)
            e = {"kind": kind, "status": worst, "n": len(cs),
                 "title": "; ".join(f"{c['name']}: {c['status']}"
                                    + (" (implementation check)" if c.get("evidence") == "implementation" else "")
                                    for c in cs)}
            if impl:
                e["label"] = f"{len(cs) - impl} paper + {impl} impl." if impl < len(cs) else f"impl.{' ×%d' % impl if impl > 1 else ''}"
            out.append(e)
    ctl = rec.get("controls", [])
    if ctl:
        rej = sum(bool(k["rejected"]) for k in ctl)
        out.append({"kind": "controls", "status": "pass" if rej == len(ctl) else "inconclusive",
                    "n": len(ctl), "label": f"{rej}/{len(ctl)}",
                    "title": "; ".join(f"{k['name']}: {'rejected' if k['rejected'] else 'NOT rejected'}"
                                       for k in ctl)})
    return out


def counterexamples(rec: dict) -> list[dict]:
    """Counterexamples found by the claim's own checks (a control's counterexample is its rejection)."""
    out = []
    for c in rec.get("checks", []):
        d = c.get("details") or {}
        n_cell = (d.get("cells") or {}).get(COUNTEREXAMPLE, 0)
        if d.get("counterexample") or n_cell:
            out.append({"check": c["name"], "counterexample": d.get("counterexample")
                        or (d.get("cell_examples") or {}).get(COUNTEREXAMPLE), "n": n_cell,
                        "summary": c.get("summary", "")})
    return out


def four_cells(details: dict) -> dict | None:
    """The probe's 2x2 table (assumptions hold/fail x conclusion holds/fails), if it used the four cells."""
    cells = details.get("cells") or {}
    if not cells or not set(cells) <= set(FOUR_CELLS):
        return None
    ex = details.get("cell_examples") or {}
    keys = {HOLD_HOLD: "hold_hold", FAIL_FAIL: "fail_fail", FAIL_HOLD: "fail_hold", COUNTEREXAMPLE: "counter"}
    return {keys[lab]: {"label": lab, "n": cells.get(lab, 0), "example": ex.get(lab)} for lab in FOUR_CELLS}


def is_figure(rec: dict) -> bool:
    return ".Fig" in rec["claim"]["id"]


# ---------------------------------------------------------------------------
# view model
# ---------------------------------------------------------------------------

def _anchor(claim_id: str) -> str:
    return claim_id  # claim ids are already valid, readable fragment ids (A.T1.1, B.Fig2)


def _check_view(c: dict, rec: dict, prefix: str) -> dict:
    per = (rec.get("timing") or {}).get("per_check") or {}
    secs = per.get(("control: " if c["kind"] == "control" else "") + c["name"])
    d = c.get("details") or {}
    return c | {
        "seconds": secs,
        "figures_html": [{"title": f["title"], "caption": f.get("caption", ""),
                          "svg": scoped_svg(f["svg"], f"{prefix}-f{i}", f["title"])}
                         for i, f in enumerate(c.get("figures", []))],
        "steps_html": [{"text": s.get("text", ""), "math": step_mathml(s)} for s in c.get("steps", [])],
        "measurements_view": [m | {"shown": fmt_interval(m.get("value"), m.get("lo"), m.get("hi")),
                                   "glyph": interval_glyph(m.get("value"), m.get("lo"), m.get("hi"),
                                                           claimed_relation(m, d.get("decisions") or []),
                                                           _measurement_headline(m))}
                              for m in c.get("measurements", [])],
        "four": four_cells(d) if c["kind"] != "control" else None,
        "constants": d.get("constants") if isinstance(d.get("constants"), dict) else None,
    }


def probe_views(views: list[dict]) -> list[dict]:
    """Every probe that used the four cells, for the report's assumption-probes section; its plots stay in the claim's
    section (linked by ``check_anchor``), not inlined twice."""
    return [{"claim": v, "check": c, "check_anchor": f"{v['anchor']}-check-{ci + 1}", "plots": len(c["figures_html"])}
            for v in views for ci, c in enumerate(v["checks"]) if c["kind"] == "probe" and c["four"]]


def _expectation(rec: dict) -> dict:
    """The reviewed expectation (verify/expectations.toml) next to what came back."""
    from verify import expectations

    try:
        exp = expectations.expected(rec["claim"]["id"], rec["budget"], rec["seed"])
    except KeyError:
        return {"verdict": "—", "diagnosis": "no reviewed expectation", "matches": False, "unstable": ""}
    return {"verdict": exp.verdict, "diagnosis": exp.diagnosis, "matches": exp.verdict == rec["verdict"],
            "unstable": exp.unstable}


def calibration_view(summary: dict | None) -> dict | None:
    """The operating characteristics table (``verify calibrate``'s summary): per paper, and per claim its row."""
    if not summary:
        return None
    rows = {}
    for c in summary["claims"]:
        if not c["checks"]:
            continue
        counts = Counter(c["verdicts"].values())
        checks = [{"name": k, **row["pass_rate"]} for k, row in c["checks"].items()]
        controls = [{"name": k, **row["rejection_rate"]} for k, row in c["controls"].items()]
        detection = [{"check": k, **d} for k, row in c["checks"].items() for d in row.get("detection", [])]
        rows[c["id"]] = {"id": c["id"], "anchor": _anchor(c["id"]), "stable": c["stable"], "stale": c.get("stale", False),
                         "confirmed": c.get("confirmed", False), "runs_before": c.get("runs_at_earlier_code"),
                         "verdicts": ", ".join(f"{k} {v}" for v, k in sorted(counts.items(), key=lambda kv: kv[0])),
                         "weakest_check": min(checks, key=lambda r: r["k"]),
                         "weakest_control": min(controls, key=lambda r: r["k"]) if controls else None,
                         "checks": checks, "controls": controls, "detection": detection,
                         "exponent_limit": calibrate.loosest_limit(detection)}
    papers = {p: {**row, "exponent_limits": _limit_range([rows[c["id"]]["exponent_limit"] for c in summary["claims"]
                                                          if c["id"] in rows and c["paper"] == p])}
              for p, row in summary["papers"].items()}
    return {"budget": summary["budget"], "seeds": calibrate.describe_seeds(summary), "mode": summary.get("mode"),
            "confidence": summary["confidence"],
            "power": summary.get("power", 0.95), "papers": papers, "rows": rows,
            "published": summary.get("published", False), "written": summary.get("written", "")}


def _limit_range(limits: list[float | None]) -> dict | None:
    v = sorted(x for x in limits if x is not None)
    return {"n": len(v), "min": v[0], "median": v[len(v) // 2], "max": v[-1]} if v else None


def _ledger(rec: dict) -> list[dict]:
    """The claim's decision ledger as its record carries it (records before the ledger carry none)."""
    return rec["claim"].get("ledger") or []


def ledger_tallies(records: list[dict]) -> dict:
    """The ledger's tallies over the report's claims, and per paper (each module.NAME once)."""
    out = {"all": ledger.tally([c for r in records for c in _ledger(r)])}
    for p in sorted({r["claim"]["paper"] for r in records}):
        out[p] = ledger.tally([c for r in records if r["claim"]["paper"] == p for c in _ledger(r)])
    return out


def sensitivity_view(smap: dict | None, code_hash: str = "") -> dict | None:
    """A claim's sensitivity map for the report: one row per setting (the changed choices' values, the verdict);
    ``older``: the map is of other code than the record's (``code_hash``)."""
    if not smap:
        return None
    names = [c["name"] for c in smap["choices"]]
    rows = [{"values": [s["values"].get(n) for n in names], "changed": s["changed"], "verdict": s["verdict"],
             "checks": s.get("checks", {}), "checks_status": s.get("checks_status", ""),
             "unrejected": [n for n, rejected in (s.get("controls_rerun") or {}).items() if not rejected],
             "same_as_check": s.get("controls_same_as_check") or []} for s in smap["settings"]]
    return {"headline": smap["headline"], "names": names, "rows": rows, "robust": smap["robust"],
            "budget": smap["budget"], "seed": smap["seed"], "points": smap["points"],
            "depends_on": list(smap.get("depends_on") or []), "published": bool(smap.get("published")),
            "verdict": smap.get("verdict"), "controls_rerun_at": smap.get("controls_rerun_at"),
            "older": smap.get("code_hash") != code_hash if code_hash else False}


def claim_view(rec: dict, index: int, calibration: dict | None = None, sensitivity: dict | None = None,
               standing: dict | None = None) -> dict:
    """``standing``: the claim's verdict of record and class (``verify.record.standing``)."""
    prefix = f"c{index}"
    checks = [_check_view(c, rec, f"{prefix}-k{i}") for i, c in enumerate(rec.get("checks", []))]
    controls = [_check_view(k, rec, f"{prefix}-n{i}") for i, k in enumerate(rec.get("controls", []))]
    constants = [(c["name"], c["constants"]) for c in checks if c["constants"]]
    return {"r": rec, "id": rec["claim"]["id"], "anchor": _anchor(rec["claim"]["id"]),
            "expectation": _expectation(rec), "findings": rec["claim"].get("findings", []),
            "ledger": _ledger(rec), "ledger_tally": ledger.tally(_ledger(rec)),
            "headline": headline(rec), "evidence": evidence(rec), "counterexamples": counterexamples(rec),
            "figure": is_figure(rec), "checks": checks, "controls": controls, "constants": constants,
            "verdict_class": rec["verdict"].replace(" ", "-"),
            "calibration": (calibration or {}).get("rows", {}).get(rec["claim"]["id"]),
            "calibrated": calibration is not None,
            "free_choices": rec["claim"].get("free_choices") or [],
            "no_free_choice": rec["claim"].get("no_free_choice") or "",
            "sensitivity": sensitivity_view((sensitivity or {}).get(rec["claim"]["id"]), rec["code_hash"]),
            "standing": standing or record.standing(rec, None, sensitivity or {}),
            "statement": statement_mathml(rec["claim"]["statement"])}


def _cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.lower().startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def _device(device: str) -> str:
    s = f"{device}; CPU {_cpu_model()}, {os.cpu_count()} logical cores"
    if device.startswith("cuda"):
        try:
            import torch

            if torch.cuda.is_available():
                s += f"; GPU {torch.cuda.get_device_name(0)}"
        except Exception:  # noqa: BLE001 -- metadata only
            pass
    return s


def git_state() -> dict:
    """The commit the report's code is at and whether the tree has uncommitted changes (``None`` outside git)."""
    import subprocess

    root = Path(__file__).resolve().parent.parent
    try:
        commit = subprocess.run(["git", "rev-parse", "HEAD"], cwd=root, capture_output=True, text=True, timeout=10)
        dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"], cwd=root,
                               capture_output=True, text=True, timeout=10)
    except (OSError, subprocess.SubprocessError):
        return {"commit": None, "dirty": None}
    if commit.returncode != 0:
        return {"commit": None, "dirty": None}
    return {"commit": commit.stdout.strip(), "dirty": bool(dirty.stdout.strip())}


def installed() -> dict[str, str]:
    """Every installed distribution's version (the environment the records were rendered in; each record carries the
    versions of the libraries it ran on)."""
    from importlib import metadata as md

    out = {}
    for d in md.distributions():
        name = d.metadata.get("Name")
        if name:
            out[name] = d.version
    return dict(sorted(out.items(), key=lambda kv: kv[0].lower()))


def metadata(records: list[dict], ctx: Context, command: str, development: bool = False) -> dict:
    """The run's metadata; ``seeds`` says which seeds the claims ran at: each claim's first confirmation seed
    (derived from its code) or one development seed for all."""
    versions = records[0]["versions"] if records else results.library_versions()
    seeds = (f"development seed {ctx.seed} (every claim at the same seed; not a confirmation seed)" if development
             else "each claim at its first confirmation seed (derived from its code)")
    return {"seed": ctx.seed if development else "confirmation", "seeds": seeds, "development": development,
            "budget": ctx.budget, "device": ctx.device, "device_info": _device(ctx.device),
            "command": command, "created": results.now_utc(), "platform": platform.platform(),
            "versions": versions, "installed": installed(), **git_state(), "alpha": ctx.alpha,
            "family_alpha": FAMILY_ALPHA,
            "max_decisions": MAX_DECISIONS,
            "total_seconds": round(sum((r.get("timing") or {}).get("total_seconds", 0) for r in records), 1)}


def _env() -> jinja2.Environment:
    env = jinja2.Environment(loader=jinja2.PackageLoader("verify", "templates"),
                             autoescape=jinja2.select_autoescape(["html"]), trim_blocks=True, lstrip_blocks=True,
                             undefined=jinja2.StrictUndefined, finalize=prose)
    env.filters["fmt"] = fmt
    env.filters["fmt_value"] = fmt_value
    env.filters["source"] = source
    env.filters["plain"] = escape  # an attribute's text (a tooltip): escaped only, tags would show literally
    env.filters["cls"] = lambda s: str(s).replace(" ", "-")
    return env


def standings(records: list[dict], calibration: dict | None, sensitivity: dict | None,
              development: bool = False) -> dict[str, dict]:
    """Claim id -> its verdict of record and class (``verify.record``) from the run's records, the calibration of
    their budget and the maps shown."""
    seeds = {r["claim"]["id"]: (None if development else r["seed"]) for r in records}
    budgets = {r["budget"] for r in records}
    return {s["id"]: s for s in record.standings(records, {b: calibration for b in budgets}, sensitivity or {},
                                                 first_seeds=seeds)}


#: where a claim's own page is, relative to the index (``write_report``): ``<stem>-claims/<ID>.html``
def claims_dir(out: Path) -> Path:
    return Path(out).with_name(f"{Path(out).stem}-claims")


def _views(records, ctx, command, meta, calibration, sensitivity, development, pages: str | None):
    """The view model: the claims' views (each with ``href``: its section on the single page, or its own page under
    ``pages``), the papers, and everything the templates read."""
    meta = meta or metadata(records, ctx, command, development)
    standing = standings(records, calibration, sensitivity, development)
    calibration = calibration_view(calibration)
    views = [claim_view(r, i, calibration, sensitivity, standing[r["claim"]["id"]]) for i, r in enumerate(records)]
    for v in views:
        v["page"] = f"{pages}/{v['id']}.html" if pages else ""
        v["href"] = v["page"] if pages else f"#{v['anchor']}"
    papers, titles = [], registry.papers()
    for p in sorted({r["claim"]["paper"] for r in records}):
        vs = [v for v in views if v["r"]["claim"]["paper"] == p]
        papers.append({"id": p, "anchor": f"paper-{p}", "title": titles.get(p, {}).get("title", ""),
                       "counts": Counter(v["r"]["verdict"] for v in vs), "claims": vs,
                       "classes": record.class_counts([v["standing"]["class"] for v in vs]),
                       "body": [v for v in vs if not v["figure"]]})
    return dict(
        views=views, papers=papers, figures=[v for v in views if v["figure"]],
        counts=Counter(r["verdict"] for r in records), verdicts=VERDICTS, meta=meta,
        classes=record.class_counts([v["standing"]["class"] for v in views]), class_meaning=record.MEANING,
        alerts=[v for v in views if v["counterexamples"]], fidelity=FIDELITY, probes=probe_views(views),
        violations=[v for v in views if v["standing"]["class"] == "violated over the range"],
        not_reproduced=[v for v in views if v["standing"]["class"] == "depends on a choice"],
        calibration=calibration, ledger_tallies=ledger_tallies(records), hrefs={v["id"]: v["href"] for v in views})


def render(records: list[dict], ctx: Context, command: str, bundle: str = "report.json",
           meta: dict | None = None, calibration: dict | None = None, sensitivity: dict | None = None,
           development: bool = False, pages: str | None = None, single: str = "") -> str:
    """The report page: with ``pages`` (the folder of the claims' own pages, relative to it) the index (counts,
    classes, the papers' tables, the findings and where each claim's page is), else every claim on one page.
    ``sensitivity``: claim id -> its map (``verify.sensitivity``), for the claims that have one; ``development``: the
    records are at one development seed, not at each claim's first confirmation seed; ``single``: the one-page
    version's file name, which the index links to."""
    model = _views(records, ctx, command, meta, calibration, sensitivity, development, pages)
    return _env().get_template("report.html").render(**model, bundle=bundle, mode="index" if pages else "all",
                                                     single=single)


def render_claim_pages(records: list[dict], ctx: Context, command: str, index: str, meta: dict | None = None,
                       calibration: dict | None = None, sensitivity: dict | None = None,
                       development: bool = False) -> dict[str, str]:
    """Claim id -> its own page (its section, with links back to the index ``index`` and to its neighbours)."""
    model = _views(records, ctx, command, meta, calibration, sensitivity, development, None)
    views, tpl = model["views"], _env().get_template("claim_page.html")
    out = {}
    for i, v in enumerate(views):
        nb = lambda j: {"id": views[j]["id"], "file": f"{views[j]['id']}.html"} if 0 <= j < len(views) else None  # noqa: E731
        out[v["id"]] = tpl.render(v=v, fidelity=FIDELITY, index=index, prev=nb(i - 1), next=nb(i + 1))
    return out


def write_report(out: Path, records: list[dict], ctx: Context, command: str, calibration: dict | None = None,
                 sensitivity: dict | None = None, development: bool = False) -> None:
    """Write the report: ``out`` is the index (classes, the papers' tables, findings) linking to one page per claim
    in ``<stem>-claims/``, ``<stem>-all.html`` every claim on one page (to print or search), and the JSON bundle
    (same stem, ``.json``); ``calibration``: the stored operating characteristics of this budget
    (``verify.calibrate.load_summary``), if any; ``sensitivity``: claim id -> its sensitivity map, for the claims that
    have one; ``development``: the records are at a development seed.  All offline: no script, no network."""
    out = Path(out)
    bundle_path = out.with_suffix(".json")
    if bundle_path == out:  # --out report.json: keep the HTML, put the bundle beside it
        bundle_path = out.with_suffix(".bundle.json")
    meta = metadata(records, ctx, command, development)
    pages, single = claims_dir(out), out.with_name(f"{out.stem}-all.html")
    kw = dict(meta=meta, calibration=calibration, sensitivity=sensitivity, development=development)
    results.atomic_write_text(single, render(records, ctx, command, bundle=bundle_path.name, **kw))
    for cid, html_text in render_claim_pages(records, ctx, command, f"../{out.name}", **kw).items():
        results.atomic_write_text(pages / f"{cid}.html", html_text)
    results.atomic_write_text(out, render(records, ctx, command, bundle=bundle_path.name, pages=pages.name,
                                          single=single.name, **kw))
    bundle = {"schema_version": results.SCHEMA_VERSION, "report": meta, "records": records,
              "standings": standings(records, calibration, sensitivity, development),
              "calibration": calibration, "sensitivity": sensitivity or {}}
    results.atomic_write_text(bundle_path, json.dumps(bundle, indent=1, sort_keys=True))


def write_figures(directory: Path, records: list[dict]) -> list[Path]:
    """Every check's figures as SVG files, ``<directory>/<claim>/<check>-<i>.svg`` (the drawing matplotlib made, for
    a paper or a slide); returns the paths written."""
    out = []
    for rec in records:
        for c in rec.get("checks", []):
            for i, f in enumerate(c.get("figures", [])):
                slug = re.sub(r"[^A-Za-z0-9]+", "-", c["name"]).strip("-") or "check"
                path = Path(directory) / rec["claim"]["id"] / f"{slug}-{i + 1}.svg"
                svg = f["svg"][f["svg"].find("<svg"):] if "<svg" in f["svg"] else f["svg"]
                results.atomic_write_text(path, svg)
                out.append(path)
    return out
