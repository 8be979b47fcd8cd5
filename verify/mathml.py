"""Mathematics and prose as the report shows them: claim statements and derivation steps from LaTeX to MathML
(latex2mathml; LaTeX it cannot parse is shown as code, never a crash), and TeX-style scripts in printed text as
superscripts and subscripts."""
from __future__ import annotations

import re

from latex2mathml.converter import convert as latex_to_mathml
from markupsafe import Markup, escape

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
    """A derivation step's MathML, from its LaTeX by the same converter as the statements: sympy's own MathML printer
    lowercases function names (``L(W)`` as "l"), spells Greek function names ("delta") and drops accents ("Wbar"),
    which its LaTeX printer gets right.  sympy's MathML only where the converter does not understand the LaTeX."""
    ml, tex = step.get("mathml") or "", step.get("latex") or ""
    if tex:
        rendered, unknown = _one_mathml(tex)
        if not unknown or not ml or _LEAKED_TEX.search(ml):
            return statement_mathml(tex)
    return Markup(ml)
