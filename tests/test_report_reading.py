"""The report as a reader moves through it (without a browser): each claim's contents and the ways back, what is
folded by default and what stays open, no raw LaTeX in any rendered text, and the page's weight (compact plots, a
declared size budget).  ``test_report_browser.py`` checks the same in Chromium."""
import os
import re
from html.parser import HTMLParser
from pathlib import Path

import numpy as np
import pytest
from hypothesis import strategies as st

from theorems.claim import Check, Claim, Context, Figure, Measurement, Outcome, Step
from theorems.plots import new_figure, to_svg
from theorems.probe import run_probe
from verify import calibrate, ledger, mathml, registry, report, results, runner
from verify.svg import _implicit_lines, scoped_svg

from test_report import _section, synthetic_claims

ROOT = Path(__file__).resolve().parents[1]

# ---------------------------------------------------------------------------
# raw LaTeX: what a reader must never see
# ---------------------------------------------------------------------------

#: a TeX group or command left in text a reader sees (``\,`` and friends included), or the renderer's own warning
RAW_TEX = re.compile(r"\^\{|_\{|\\[A-Za-z]+|\\[,;:! ]|LaTeX not understood")


class _Text(HTMLParser):
    """The text of a page as a reader sees it: prose, MathML's tokens (a leaked ``\\mathbb`` shows there) and the
    plots' labels; not the stylesheet, not program source (``<code class="src">``: a ledger constant as written)."""

    SKIP = {"style", "title", "script"}

    def __init__(self):
        super().__init__()
        self.stack, self.chunks = [], []

    def handle_starttag(self, tag, attrs):
        cls = dict(attrs).get("class") or ""
        skip = tag in self.SKIP or (tag == "code" and "src" in cls.split())
        if tag == "pre" and "latex" in cls.split():
            self.chunks.append("LaTeX not understood (a <pre class=latex> block)")
        self.stack.append(skip or bool(self.stack and self.stack[-1]))

    def handle_endtag(self, tag):
        if self.stack:
            self.stack.pop()

    def handle_startendtag(self, tag, attrs):
        pass

    def handle_data(self, data):
        if not (self.stack and self.stack[-1]):
            self.chunks.append(data)


def raw_tex(html: str) -> list[str]:
    """Every raw-LaTeX fragment in the page's rendered text, with a little context."""
    p = _Text()
    p.feed(html)
    text = " ".join(p.chunks)
    return [text[max(0, m.start() - 40):m.end() + 20] for m in RAW_TEX.finditer(text)]


def _tex_check():
    """A check that writes TeX-style notation everywhere a check can: summary, headline, measurement, step, plot."""
    fig, ax = new_figure()
    ax.plot([1, 2, 3], [3, 2, 1])
    ax.set_xlabel("n^{-1/2} over x_{t+1}")  # plain text, not $...$: matplotlib draws it as written
    ax.set_title("paper's envelope n^-1, ours e^{-cT}")
    return Outcome("pass", "the slope of t^{1−b} at x_{i,opt}; Σ^(1/2) whitened",
                   [Measurement("exponent of n^{-1}", -1.0, -1.1, -0.9, "= -1")],
                   [Figure("Decay like n^{-1/2}", to_svg(fig), "E_{N(μ,Σ)} of e^{kq}")],
                   steps=[Step("expand e^{a·x} in x_{j}", r"e^{x} = \sum_k x^k / k!", "")],
                   headline="rate t^{-2} beats t^{-1}")


def _tex_claim():
    return Claim("Z.T7", "Rate exp(−c t^{1−b}) and O(n^{-1/2})", r"u_{mm}=\arg\min\|u\|\ \text{s.t.}\ u^\top x\ge1",
                 "reconstructed", "Rebuilt from Σ^{1/2}-whitened data; the exponent a_{t} is ours.",
                 checks=(Check("tex", "symbolic", "notation in every field", _tex_check),),
                 findings=("the bound is loose by n^{-1}: the squared bias decays like n^-2",), module=__name__)


def test_tex_style_prose_becomes_scripts_and_statements_parse():
    html = report.render([runner.run_claim(_tex_claim(), Context())], Context(), "verify report")
    assert not raw_tex(html), raw_tex(html)
    claim = _section(html, "Z.T7")
    assert "t<sup>1−b</sup>" in claim and "x<sub>i,opt</sub>" in claim and "Σ<sup>1/2</sup>" in claim
    assert "n<sup>-2</sup>" in claim and "t<sup>-2</sup>" in claim  # unbraced exponents too
    assert '<tspan baseline-shift="super"' in claim  # the plot's label
    assert "<mo>arg</mo>" in claim  # \arg, which latex2mathml keeps as a literal "\arg", is an operator


def test_program_source_and_attributes_are_shown_as_written():
    assert str(report.source('f"run_{i}" + x^{2}')) == 'f&#34;run_{i}&#34; + x^{2}'
    assert str(mathml.prose("<b>max_width</b> a_b")) == "&lt;b&gt;max_width&lt;/b&gt; a_b"  # escaped, "_" kept


def test_unparseable_latex_is_flagged():
    assert raw_tex(str(mathml.statement_mathml(r"\frac{1}{")))
    assert raw_tex(str(mathml.statement_mathml(r"a:\quadZ = 1")))  # a typo like A.L3's former \quadn


def test_every_registered_claims_prose_renders_without_raw_latex(monkeypatch):
    """Titles, statements, fidelity notes, findings, assumptions and free choices of every claim, rendered as records
    that ran nothing (the ledger, read from git, is left out: it is tested with the stored records)."""
    monkeypatch.setattr(ledger, "claim_constants", lambda claim: [])
    records = [runner.assemble(c, Context(), {}, kinds={"none"}) for c in registry.all_claims()]
    bad = raw_tex(report.render(records, Context(), "verify report"))
    assert not bad, f"{len(bad)} raw LaTeX fragments, e.g. {bad[:5]}"


# ---------------------------------------------------------------------------
# navigation and folding
# ---------------------------------------------------------------------------

def _plotted_probe(ctx):
    """No counterexample: the conclusion (x < 60) holds wherever the assumption (x < 50) does; a parameter plot."""
    return run_probe(ctx, st.integers(0, 100), lambda x, a: (x < 60, "", f"x={x}"), 40, describe=lambda x: {"x": x},
                     assumptions=lambda x: {"x < 50": x < 50}, parameters=lambda x: {"x": x})


@pytest.fixture(scope="module")
def html(tmp_path_factory):
    ctx = Context()
    claims = synthetic_claims() + [Claim("Z.T5", "A probed theorem", "x < 60", "exact", "Made up.",
                                         checks=(Check("probe", "probe", "a probe with a plot", _plotted_probe),),
                                         module=__name__)]
    records = [runner.run_claim(c, ctx) for c in claims]
    summary = calibrate.summarize(claims, {c.id: {s: r for s in range(100, 103)} for c, r in zip(claims, records)},
                                  "quick", "development")
    out = tmp_path_factory.mktemp("rep") / "report.html"
    report.write_report(out, records, ctx, command="verify report -k Z", calibration=summary)
    return out.with_name("report-all.html").read_text()


def _details(section: str) -> list[tuple[str, bool, str]]:
    """(class, open, content) of each top-level <details> in ``section``."""
    out = []
    for m in re.finditer(r'<details class="([^"]*)"[^>]*?( open)?>(.*?)</details>', section, re.S):
        out.append((m.group(1), bool(m.group(2)), m.group(3)))
    return out


def test_each_claim_has_contents_and_ways_back(html):
    ids = set(re.findall(r'\sid="([^"]+)"', html))
    for cid in ("Z.T1", "Z.L2", "Z.Fig1", "Z.Fig4"):
        section = _section(html, cid)
        toc = re.search(r'<nav class="claim-toc".*?</nav>', section, re.S).group(0)
        targets = re.findall(r'href="#([^"]+)"', toc)
        assert f"{cid}-statement" in targets and f"{cid}-verdict" in targets
        assert "paper-Z" in targets and "top" in targets  # back to the paper's table and to the top
        own = [t for t in targets if t.startswith(cid + "-")]
        assert all(f'id="{t}"' in section for t in own), own  # each entry lands inside the claim
        assert set(targets) <= ids
    toc = re.search(r'<nav class="claim-toc".*?</nav>', _section(html, "Z.L2"), re.S).group(0)
    for part in ("checks", "controls", "oc", "free-choices" if "free-choices" in toc else "checks"):
        assert f'href="#Z.L2-{part}"' in toc
    assert 'class="to-top" href="#top"' in html  # from anywhere on the page


def test_rarely_needed_sections_are_folded_and_the_verdict_is_not(html):
    t1 = _section(html, "Z.T1")  # violated: its failing probe's cells (a counterexample) stay open
    assert {cls: is_open for cls, is_open, _ in _details(t1)} == {"probe-cells": True, "calibration oc": False}
    t5 = _section(html, "Z.T5")  # its passing probe's cells are folded
    assert {cls: is_open for cls, is_open, _ in _details(t5)} == {"probe-cells": False, "calibration oc": False}
    fig = _section(html, "Z.Fig1")
    assert all(not is_open for _, is_open, _ in _details(fig))
    for cid in ("Z.T1", "Z.L2", "Z.Fig1"):
        section = _section(html, cid)
        for inner in (c for _, _, c in _details(section)):
            assert "<b>Verdict of record:</b>" not in inner and "<b>Headline.</b>" not in inner \
                and "Findings" not in inner
        assert "<b>Verdict of record:</b>" in section and "<b>Headline.</b>" in section


def test_derivations_and_constants_are_folded_unless_the_check_failed():
    def chosen(bad=False):
        return Outcome("fail" if bad else "pass", "s", steps=[Step("one", "x = 1", ""), Step("two", "y = 2", "")],
                       details={"constants": {"eta": 0.25}})

    c = Claim("Z.T9", "t", "x=1", "exact", "n", checks=(Check("ok", "symbolic", "d", chosen),
                                                         Check("bad", "symbolic", "d", lambda: chosen(True))),
              module=__name__)
    html = report.render([runner.run_claim(c, Context())], Context(), "verify report")
    assert [(cls, is_open) for cls, is_open, _ in _details(_section(html, "Z.T9"))] == [
        ("steps", False), ("constants", False), ("steps", True), ("constants", True)]


def test_probe_plots_are_shown_once_and_linked_from_the_probes_section(html):
    probes = _section(html, "probes")
    assert "<svg" not in probes
    link = re.search(r'href="#(Z\.T5-check-\d+)"', probes).group(1)
    assert f'id="{link}"' in _section(html, "Z.T5") and "<svg" in _section(html, "Z.T5")


# ---------------------------------------------------------------------------
# weight
# ---------------------------------------------------------------------------

def _dense_plot() -> str:
    rng = np.random.default_rng(0)
    fig, ax = new_figure()
    ax.scatter(rng.normal(size=1500), rng.normal(size=1500), s=3, alpha=0.3)
    t = np.linspace(1, 10, 2000)
    ax.plot(t, np.sin(t) / t)
    ax.set_xlabel("n^{-1}")
    return to_svg(fig)


def test_compact_plots_keep_the_drawing_in_under_half_the_bytes():
    svg = _dense_plot()
    small = str(scoped_svg(svg, "p0", "dense"))
    assert len(small) < 0.45 * len(svg), (len(small), len(svg))
    # the same marks: every marker and path is still there, every reference resolves inside the plot
    assert small.count("<use") == svg.count("<use") > 1500 and small.count("<path") == svg.count("<path")
    ids = set(re.findall(r'\sid="([^"]+)"', small))
    refs = set(re.findall(r'(?:url\(#|href="#)([^")]+)', small))
    assert refs and refs <= ids and all(i.startswith("p0-") for i in ids)
    assert not re.search(r"\d\.\d\d", re.sub(r"<text.*?</text>|style=\"[^\"]*\"", "", small))  # 0.1 pt steps
    assert '--w: ' in small  # sized relative to its natural width


def test_implicit_lines_follow_the_path_grammar():
    assert _implicit_lines("M 1 2 L 3 4 L 5 6 C 1 1 2 2 3 3 L 7 8 z") == "M 1 2 3 4 5 6 C 1 1 2 2 3 3 L 7 8 z"


def _stored_results() -> Path | None:
    """A complete quick results directory: ``VERIFY_REPORT_RESULTS``, else ``reports/results`` (where
    ``./suite report`` writes)."""
    d = Path(os.environ.get("VERIFY_REPORT_RESULTS") or ROOT / "reports" / "results")
    recs = [r for r in results.read_records(d) if r["budget"] == "quick"] if d.is_dir() else []
    return d if len({r["claim"]["id"] for r in recs}) >= len(registry.all_claims()) else None


@pytest.mark.skipif(_stored_results() is None, reason="no complete quick results (./suite report writes them "
                                                       "to reports/results; or set VERIFY_REPORT_RESULTS)")
def test_the_quick_report_of_stored_records_is_within_its_budget(tmp_path):
    """Rendered from the stored records (nothing runs): the size stated in docs/report.md holds."""
    d = _stored_results()
    recs = [r for r in results.read_records(d) if r["budget"] == "quick"]
    out = tmp_path / "report.html"
    report.write_report(out, recs, Context(), "verify report", calibration=calibrate.load_summary(d, "quick"))
    size = out.with_name("report-all.html").stat().st_size  # the largest page: every claim on one
    assert size <= report.SIZE_BUDGET, f"the quick report is {size / 1e6:.2f} MB, over its budget"
