"""Plots as the report inlines them: matplotlib's SVG in about half the bytes (:func:`compact_svg`), its ids scoped
to one plot (:func:`scoped_svg`), and the small interval glyph drawn beside each measurement."""
from __future__ import annotations

import html
import math
import re

from markupsafe import Markup

from verify.mathml import scripts

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


def interval_glyph(v: float | None, lo: float | None, hi: float | None, claim: tuple[str, float] | None, tip: str,
                   width: int = 170, height: int = 22) -> Markup:
    """A small SVG: the interval ``[lo, hi]`` as a bar, the measured value ``v`` as a dot, the claim (its relation and
    value: ``("=", c)``, ``("<=", c)`` or ``(">=", c)``) as a line or region; ``tip``: its text for a tooltip and for
    screen readers."""
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
    tip = html.escape(tip, quote=False)
    return Markup(f'<svg class="glyph" role="img" aria-label="{html.escape(tip, quote=True)}" '
                  f'width="{width}" height="{height}" viewBox="0 0 {width} {height}"><title>{tip}</title>'
                  + "".join(parts) + "</svg>")
