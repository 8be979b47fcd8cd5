"""Render results records into one self-contained HTML file (no scripts, no network).

Math is MathML (claim statements converted from LaTeX by latex2mathml, derivation
steps printed by sympy), plots are inline SVG, styling is inline CSS; templating
is Jinja2 (``verify/templates``).  The JSON bundle of the records (plus the
report's run metadata) is written beside the HTML.

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
* an **interval glyph** per measurement (interval, point, claimed value or envelope).

How it is shown: every printed value goes through :func:`prose` (TeX-style ``^{…}``/``_{…}`` as superscripts and
subscripts), every plot through :func:`compact_svg` (the same drawing in about half the bytes, sized to be legible);
each claim carries a contents bar and folds what a reader rarely needs (``verify/templates/_claim.html``).
"""
from __future__ import annotations

import html
import json
import math
import os
import platform
import re
from collections import Counter
from pathlib import Path

import jinja2
from latex2mathml.converter import convert as latex_to_mathml
from markupsafe import Markup, escape

from theorems.claim import FAMILY_ALPHA, MAX_DECISIONS, Context, worst_status
from theorems.probe import COUNTEREXAMPLE, FAIL_FAIL, FAIL_HOLD, HOLD_HOLD
from verify import calibrate, ledger, record, results

VERDICTS = ("verified", "violated", "inconclusive", "not checked")
KINDS = ("symbolic", "numeric", "probe")
FOUR_CELLS = (HOLD_HOLD, FAIL_FAIL, FAIL_HOLD, COUNTEREXAMPLE)
PAPERS = {
    "A": "Goel, Soltanolkotabi, Bartlett (2026), Training Dynamics of Softmax Self-Attention: "
         "Fast Global Convergence via Preconditioning",
    "B": "Vasudeva, Deora, Thrampoulidis (TMLR 2025), Implicit Bias and Fast Convergence Rates for Self-attention",
}
FIDELITY = {
    "exact": "the seed's words pin the statement down (up to notation); a verdict is about the paper's statement",
    "reconstructed": "the formula was rebuilt from the seed's prose and the proofs' structure; "
                     "a verdict is about our reconstruction",
    "qualitative": "only the shape of the claim survives; constants or exponents are measured and reported",
}


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
        if math.isnan(v):
            return "nan"
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


# TeX-style exponents and indices in prose (titles, summaries, findings, headlines, plot labels) are shown as
# superscripts and subscripts, not as "t^{1−b}".  A braced group may hold one level of braces; an unbraced exponent is
# a parenthesized group, one number, one letter, ½ or a ceiling ("Σ^(1/2)", "n^-1", "e^q", "t^0.668", "n^-⌈k/2⌉"),
# the ways the checks write them.  An unbraced "_" is left alone: prose also names code (max_width, hold_hold).
_SCRIPT_GROUP = re.compile(r"([\^_])\{((?:[^{}]|\{[^{}]*\})*)\}")
_SCRIPT_TOKEN = re.compile(r"\^(?:\(([^()<>]*)\)|([-−+]?(?:\d+(?:\.\d+)?|[^\W\d_]|½|⌈[^⌉<>]*⌉)))")


def scripts(text: str, sup: tuple[str, str] = ("<sup>", "</sup>"), sub: tuple[str, str] = ("<sub>", "</sub>")) -> str:
    """``text`` (escaped markup) with ``^{…}``, ``_{…}`` and ``^token`` wrapped in the ``sup`` and ``sub`` tags."""
    def group(m):
        open_, close = sup if m.group(1) == "^" else sub
        return open_ + scripts(m.group(2), sup, sub) + close

    text = _SCRIPT_GROUP.sub(group, text)
    return _SCRIPT_TOKEN.sub(lambda m: sup[0] + (m.group(1) if m.group(1) is not None else m.group(2)) + sup[1], text)


def prose(value):
    """Every value the templates print: text is escaped and its TeX-style scripts become ``<sup>``/``<sub>``;
    markup (MathML, SVG, macros' output) and non-text pass unchanged."""
    if isinstance(value, Markup) or not isinstance(value, str):
        return value
    return Markup(scripts(str(escape(value))))


def source(value) -> Markup:
    """Program text (a ledger constant's source, a control's overrides): escaped, never rewritten."""
    return escape(value if isinstance(value, str) else fmt_value(value))


_CLAIMED = re.compile(r"^\s*(==|=|≈|~|<=|≤|<|>=|≥|>)?\s*([-−+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-−+]?\d+)?)")


def parse_claimed(claimed: str | None) -> tuple[str, float] | None:
    """``"= −1"`` -> ``("=", -1.0)``, ``"<= 0.5 (derived)"`` -> ``("<=", 0.5)``; None if not numeric."""
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
    if d.get("margin") is not None and str(d.get("claimed", "")).startswith("="):
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


def evidence(rec: dict) -> list[dict]:
    """Per evidence kind that ran: its worst status and how many checks; then the controls."""
    out = []
    for kind in KINDS:
        cs = [c for c in rec.get("checks", []) if c["kind"] == kind]
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
# markup helpers
# ---------------------------------------------------------------------------

_UNKNOWN_COMMAND = re.compile(r"<m(?:i|o|text)[^>]*>(\\[A-Za-z]+)")
_TEXT_ONLY = re.compile(r"\s*\\text\{([^{}\\$]*)\}\s*")


_BREAK = re.compile(r"\\(?:qquad|quad)(?![A-Za-z])|\\\\")
_DEPTH = re.compile(r"\\begin\{[^}]*\}|\\end\{[^}]*\}|\\left(?![A-Za-z])|\\right(?![A-Za-z])|\\[{}]|[{}]")


def split_top_level(tex: str) -> list[str]:
    r"""Split a statement at its top-level ``\quad``, ``\qquad`` and ``\\`` (outside braces,
    ``\left..\right`` and environments): the parts of a conjunction, which the report may lay out
    on separate lines."""
    depth_after = []  # (end position of a grouping token, depth after it)
    depth = 0
    for m in _DEPTH.finditer(tex):
        tok = m.group(0)
        if tok == "{" or tok == "\\left" or tok.startswith("\\begin{"):
            depth += 1
        elif tok == "}" or tok == "\\right" or tok.startswith("\\end{"):
            depth -= 1
        depth_after.append((m.end(), depth))
    parts, last = [], 0
    for m in _BREAK.finditer(tex):
        d = next((dd for pos, dd in reversed(depth_after) if pos <= m.start()), 0)
        if d == 0:
            parts.append(tex[last:m.start()])
            last = m.end()
    parts.append(tex[last:])
    parts = [p.strip() for p in parts if p.strip()]
    return parts or [tex]


#: standard LaTeX operator names latex2mathml does not know (it keeps them as literal "\\arg")
_OPERATORS = re.compile(r"\\(arg)(?![A-Za-z])")


def _one_mathml(tex: str) -> tuple[Markup, list[str]]:
    tex = _OPERATORS.sub(r"\\operatorname{\1}", tex)
    try:
        ml = Markup(latex_to_mathml(tex, display="block"))
    except Exception:  # noqa: BLE001 -- third-party parser, any error means "show the source"
        return Markup('<pre class="latex">') + tex + Markup("</pre>"), ["(cannot parse)"]
    return ml, _UNKNOWN_COMMAND.findall(ml)


def statement_mathml(tex: str) -> Markup:
    r"""LaTeX -> display MathML; LaTeX latex2mathml cannot parse is shown as code, never a crash.

    A statement that is only ``\text{...}`` (a figure's description in words) becomes a
    paragraph, so it wraps like prose instead of overflowing as one long math token.  A
    statement whose parts are separated by a top-level ``\quad`` becomes one math element
    per part in a wrapping row: side by side where they fit, stacked where they do not.
    """
    m = _TEXT_ONLY.fullmatch(tex)
    if m:
        return Markup('<p class="prose-statement">') + m.group(1) + Markup("</p>")
    parts = split_top_level(tex)
    rendered = [_one_mathml(p) for p in parts]
    unknown = sorted({u for _, us in rendered for u in us})
    ml = Markup("").join(r for r, _ in rendered)
    if len(parts) > 1:
        ml = Markup('<div class="math-lines">') + ml + Markup("</div>")
    if unknown:  # e.g. a typo like \quadZ: latex2mathml keeps it as a literal identifier
        ml += Markup('<p class="note latex-warning">LaTeX not understood (shown literally): ') \
            + ", ".join(unknown) + Markup("</p>")
    return ml


_LEAKED_TEX = re.compile(r"<(mi|mo|mtext)[^>]*>[^<]*\\[A-Za-z|{]")


def step_mathml(step: dict) -> Markup:
    """A derivation step's MathML; when sympy leaked raw LaTeX into a token, re-render from the LaTeX."""
    ml = step.get("mathml") or ""
    if ml and step.get("latex") and _LEAKED_TEX.search(ml):
        return statement_mathml(step["latex"])
    if ml:
        return Markup(ml)
    if step.get("latex"):
        return statement_mathml(step["latex"])
    return Markup("")


_SVG_METADATA = re.compile(r"<metadata>.*?</metadata>\s*", re.S)
_SVG_ID = re.compile(r'\sid="([^"]+)"')
_SVG_REF = re.compile(r'(url\(#|href="#)([^")]+)')
_SVG_GEOMETRY = re.compile(r'\s(?:d|x|y|x1|x2|y1|y2|cx|cy|r|width|height|points|transform|viewBox)="[^"]*"')
_SVG_DIGITS = re.compile(r"(\d\.\d)\d+")
_SVG_COMMENT = re.compile(r"<!--.*?-->", re.S)
_SVG_PATH = re.compile(r'\sd="([^"]*)"')
_SVG_IDENTITY = re.compile(r'\stransform="rotate\(-?0 [^")]*\)"')
_SVG_FONTS = re.compile(r"font-family: ('[^']*'),[^;\"]*?(sans-serif|serif|monospace)")
_SVG_USES = re.compile(r'(<g\b(?![^>]*\bstyle=)[^>]*)>((?:\s*<use\b[^>]*/>)+)(\s*</g>)')
_SVG_USE_STYLE = re.compile(r'\sstyle="([^"]*)"')
_SVG_TEXT = re.compile(r"(<text\b[^>]*>)([^<]*)(</text>)")
_SVG_SIZE = re.compile(r'<svg\b[^>]*?\swidth="([\d.]+)pt"')

#: the quick report's declared weight (bytes): the HTML of every claim at seed 0, measured 4.4 MB on the stored
#: records (docs/report.md); a test renders stored records, when there are some, and holds it to this
SIZE_BUDGET = 6_000_000

#: a plot's width in the report relative to its natural size (matplotlib's points at 96 dpi); max-width caps it at
#: the column, so a wide multi-panel figure (a probe's parameter plot) is shown as large as the page allows
PLOT_SCALE = 1.15


def _hoist_use_style(m: re.Match) -> str:
    """Markers of one scatter series repeat one style per point: move it to their group, which they inherit from."""
    uses = m.group(2)
    styles = set(_SVG_USE_STYLE.findall(uses))
    if len(styles) != 1 or _SVG_USE_STYLE.sub("", uses).count("<use") != uses.count("<use"):
        return m.group(0)
    return f'{m.group(1)} style="{styles.pop()}">{_SVG_USE_STYLE.sub("", uses)}{m.group(3)}'


def _implicit_lines(d: str) -> str:
    """A path's ``L`` after an ``M`` or ``L`` is implied by the SVG path grammar: ``M 1 2 L 3 4 L 5 6`` is
    ``M 1 2 3 4 5 6``."""
    out, last = [], ""
    for tok in d.split():
        if tok.isalpha():
            if tok == "L" and last in ("M", "L"):
                continue
            last = tok
        out.append(tok)
    return " ".join(out)


def compact_svg(svg: str) -> str:
    """A matplotlib SVG with the same drawing in fewer bytes: coordinates to 0.1 pt (a tenth of a pixel at the
    report's scale), no unreferenced ids or identity transforms, one font list per text, one style per marker series,
    and no indentation; TeX-style scripts in its labels become raised or lowered text."""
    svg = svg[svg.find("<svg"):] if "<svg" in svg else svg
    svg = _SVG_METADATA.sub("", svg)  # matplotlib's RDF block: creator URLs, no content
    svg = _SVG_COMMENT.sub("", svg)  # mathtext's TeX source of each label
    svg = re.sub(r">\s+<", "><", svg)
    svg = _SVG_GEOMETRY.sub(lambda m: _SVG_DIGITS.sub(r"\1", re.sub(r"\s+", " ", m.group(0)).replace(" \"", '"')),
                            svg)
    svg = _SVG_PATH.sub(lambda m: f' d="{_implicit_lines(m.group(1))}"', svg)
    svg = _SVG_IDENTITY.sub("", svg)
    svg = _SVG_FONTS.sub(r"font-family: \1, \2", svg)
    svg = svg.replace("xlink:href=", "href=")
    svg = _SVG_USES.sub(_hoist_use_style, svg)
    return _SVG_TEXT.sub(lambda m: m.group(1) + scripts(
        m.group(2), ('<tspan baseline-shift="super" font-size="75%">', "</tspan>"),
        ('<tspan baseline-shift="sub" font-size="75%">', "</tspan>")) + m.group(3), svg)


def scoped_svg(svg: str, prefix: str, label: str) -> Markup:
    """Inline an SVG (:func:`compact_svg`) with the ids it references renamed under ``prefix`` (many matplotlib SVGs
    share ids), labelled for screen readers, and sized relative to its natural width (``PLOT_SCALE``)."""
    svg = compact_svg(svg)
    refs = {m.group(2) for m in _SVG_REF.finditer(svg)}
    names = {old: f"{prefix}-{i}" for i, old in enumerate(sorted(refs))}
    svg = _SVG_ID.sub(lambda m: f' id="{names[m.group(1)]}"' if m.group(1) in names else "", svg)
    svg = _SVG_REF.sub(lambda m: m.group(1) + names[m.group(2)], svg)
    size = _SVG_SIZE.search(svg)
    width = f' style="--w: {float(size.group(1)) * 4 / 3 * PLOT_SCALE / 16:.1f}rem"' if size else ""
    svg = svg.replace("<svg", f'<svg role="img" aria-label="{html.escape(label, quote=True)}" class="plot"{width}', 1)
    return Markup(svg)


def interval_glyph(m: dict, width: int = 170, height: int = 22) -> Markup:
    """A small SVG: the interval as a bar, the measured value as a dot, the claim as a line or region."""
    v, lo, hi = m.get("value"), m.get("lo"), m.get("hi")
    claim = parse_claimed(m.get("claimed"))
    has_ci = lo is not None and hi is not None
    # without an interval a point against "= c" says nothing a number does not (and its scale misleads)
    if v is None or not (has_ci or (claim and claim[0] != "=")):
        return Markup("")
    pts = [v] + ([lo, hi] if has_ci else []) + ([claim[1]] if claim else [])
    if not all(math.isfinite(p) for p in pts):
        return Markup("")
    a, b = min(pts), max(pts)
    span = (b - a) or max(abs(a), 1.0) * 0.1
    a, b = a - 0.12 * span, b + 0.12 * span
    x = lambda t: 4 + (width - 8) * (t - a) / (b - a)  # noqa: E731
    y = height / 2
    parts = [f'<line x1="2" x2="{width - 2}" y1="{y}" y2="{y}" class="g-axis"/>']
    if claim:
        rel, c = claim
        cx = x(c)
        if rel == "<=":
            parts.append(f'<rect x="2" y="3" width="{max(cx - 2, 0):.1f}" height="{height - 6}" class="g-env"/>')
        elif rel == ">=":
            parts.append(f'<rect x="{cx:.1f}" y="3" width="{max(width - 2 - cx, 0):.1f}" height="{height - 6}" '
                         f'class="g-env"/>')
        parts.append(f'<line x1="{cx:.1f}" x2="{cx:.1f}" y1="2" y2="{height - 2}" class="g-claim"/>')
    if has_ci:
        x0, x1 = x(lo), x(hi)
        parts.append(f'<line x1="{x0:.1f}" x2="{x1:.1f}" y1="{y}" y2="{y}" class="g-ci"/>')
        for xx in (x0, x1):
            parts.append(f'<line x1="{xx:.1f}" x2="{xx:.1f}" y1="{y - 5}" y2="{y + 5}" class="g-ci"/>')
    parts.append(f'<circle cx="{x(v):.1f}" cy="{y}" r="3.2" class="g-pt"/>')
    tip = html.escape(_measurement_headline(m), quote=False)
    return Markup(f'<svg class="glyph" role="img" aria-label="{html.escape(tip, quote=True)}" '
                  f'width="{width}" height="{height}" viewBox="0 0 {width} {height}"><title>{tip}</title>'
                  + "".join(parts) + "</svg>")


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
                                   "glyph": interval_glyph(m)} for m in c.get("measurements", [])],
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
             "checks": s.get("checks", {}), "checks_status": s.get("checks_status", "")} for s in smap["settings"]]
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


def metadata(records: list[dict], ctx: Context, command: str, development: bool = False) -> dict:
    """The run's metadata; ``seeds`` says which seeds the claims ran at: each claim's first confirmation seed
    (derived from its code) or one development seed for all."""
    versions = records[0]["versions"] if records else results.library_versions()
    seeds = (f"development seed {ctx.seed} (every claim at the same seed; not a confirmation seed)" if development
             else "each claim at its first confirmation seed (derived from its code)")
    return {"seed": ctx.seed if development else "confirmation", "seeds": seeds, "development": development,
            "budget": ctx.budget, "device": ctx.device, "device_info": _device(ctx.device),
            "command": command, "created": results.now_utc(), "platform": platform.platform(),
            "versions": versions, "alpha": ctx.alpha, "family_alpha": FAMILY_ALPHA,
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


def render(records: list[dict], ctx: Context, command: str, bundle: str = "report.json",
           meta: dict | None = None, calibration: dict | None = None, sensitivity: dict | None = None,
           development: bool = False) -> str:
    """``sensitivity``: claim id -> its map (``verify.sensitivity``), for the claims that have one;
    ``development``: the records are at one development seed, not at each claim's first confirmation seed."""
    meta = meta or metadata(records, ctx, command, development)
    standing = standings(records, calibration, sensitivity, development)
    calibration = calibration_view(calibration)
    views = [claim_view(r, i, calibration, sensitivity, standing[r["claim"]["id"]]) for i, r in enumerate(records)]
    papers = []
    for p in sorted({r["claim"]["paper"] for r in records}):
        vs = [v for v in views if v["r"]["claim"]["paper"] == p]
        papers.append({"id": p, "anchor": f"paper-{p}", "title": PAPERS.get(p, ""),
                       "counts": Counter(v["r"]["verdict"] for v in vs), "claims": vs,
                       "classes": record.class_counts([v["standing"]["class"] for v in vs]),
                       "body": [v for v in vs if not v["figure"]]})
    return _env().get_template("report.html").render(
        views=views, papers=papers, figures=[v for v in views if v["figure"]],
        counts=Counter(r["verdict"] for r in records), verdicts=VERDICTS, meta=meta, bundle=bundle,
        classes=record.class_counts([v["standing"]["class"] for v in views]), class_meaning=record.MEANING,
        alerts=[v for v in views if v["counterexamples"]], fidelity=FIDELITY, probes=probe_views(views),
        violations=[v for v in views if v["standing"]["class"] == "violated over the range"],
        not_reproduced=[v for v in views if v["standing"]["class"] == "depends on a choice"],
        calibration=calibration, ledger_tallies=ledger_tallies(records))


def write_report(out: Path, records: list[dict], ctx: Context, command: str, calibration: dict | None = None,
                 sensitivity: dict | None = None, development: bool = False) -> None:
    """Write the HTML report and, beside it, the JSON bundle (same stem, ``.json``); ``calibration``: the stored
    operating characteristics of this budget (``verify.calibrate.load_summary``), if any; ``sensitivity``: claim id
    -> its sensitivity map, for the claims that have one; ``development``: the records are at a development seed."""
    out = Path(out)
    bundle_path = out.with_suffix(".json")
    if bundle_path == out:  # --out report.json: keep the HTML, put the bundle beside it
        bundle_path = out.with_suffix(".bundle.json")
    meta = metadata(records, ctx, command, development)
    results.atomic_write_text(out, render(records, ctx, command, bundle=bundle_path.name, meta=meta,
                                          calibration=calibration, sensitivity=sensitivity,
                                          development=development))
    bundle = {"schema_version": results.SCHEMA_VERSION, "report": meta, "records": records,
              "standings": standings(records, calibration, sensitivity, development),
              "calibration": calibration, "sensitivity": sensitivity or {}}
    results.atomic_write_text(bundle_path, json.dumps(bundle, indent=1, sort_keys=True))
