"""The HTML report (without a browser): headline, probe table, counterexample flag, figures, environment,
self-containment, the JSON bundle, and `verify report` reusing stored results."""
import json
import re
from html.parser import HTMLParser

import pytest
from hypothesis import strategies as st

from theorems.claim import Check, Claim, Context, Control, Figure, Measurement, Outcome
from theorems.plots import new_figure, to_svg
from theorems.probe import COUNTEREXAMPLE, FAIL_FAIL, FAIL_HOLD, HOLD_HOLD, run_probe
from verify import cli, mathml, registry, report, results, runner
from verify.svg import scoped_svg

# ---------------------------------------------------------------------------
# synthetic claims exercising every part of the report (also used by test_report_browser.py)
# ---------------------------------------------------------------------------


def _figure_check(ctx, flat: bool = False):
    import numpy as np

    if flat:  # the control's variant
        return Outcome("fail", "rejected")

    t = np.arange(1, 200)
    fig, ax = new_figure()
    ax.loglog(t, 3 / t, label="train loss")
    ax.loglog(t, 4 / t, "--", label="claimed envelope 4/t")
    ax.set_xlabel("iteration t")
    ax.legend()
    return Outcome("pass", "loss stays under the envelope",
                   [Measurement("fitted exponent", -1.02, -1.05, -0.99, "<= -1", level=0.99995)],
                   [Figure("Train loss of GD and NGD", to_svg(fig), "log-log; dashed: the claimed envelope")],
                   details={"constants": {"n": 6, "T": 8, "d": 10, "step size": 0.05, "seeds": [0, 1, 2]}},
                   headline="fitted exponent -1.02 [-1.05, -0.99], claimed <= -1")


def _four_cell_probe(ctx):
    return run_probe(ctx, st.integers(0, 100), lambda x, a: (x % 7 != 3, "", f"x={x} is 3 mod 7"), 60,
                     describe=lambda x: {"x": x},
                     assumptions=lambda x: {"x < 50": x < 50, "x even": x % 2 == 0})


def synthetic_claims():
    claims = [
        Claim("Z.T1", "A violated theorem", r"\forall x:\ x \bmod 7 \neq 3", "reconstructed",
              "Made up: a probe that finds a counterexample.",
              assumptions=(),
              checks=(Check("probe", "probe", "four-cell probe", _four_cell_probe),
                      Check("derivation", "symbolic", "nothing to derive", lambda: Outcome("pass", "trivially"),
                            stochastic=False))),
        Claim("Z.L2", "An inconclusive lemma", r"\alpha \le \frac{1}{2}", "qualitative", "Made up.",
              checks=(Check("rate", "numeric", "a rate", lambda ctx, wrong=False: Outcome(
                  "pass", "not rejected" if wrong else "ok", [Measurement("alpha", 0.72, 0.70, 0.74, "= 0.09 (derived)")])),),
              controls=(Control("wrong", "rate", "a wrong variant", {"wrong": True}),)),
        Claim("Z.Fig1", "Loss curves",
              r"\text{GD, NGD and the Polyak step: train loss against iteration; NGD beats GD}", "qualitative",
              "The seed describes the figure in words only.",
              checks=(Check("curves", "numeric", "draw the figure", _figure_check),),
              controls=(Control("flat", "curves", "a flat curve", {"flat": True}),)),
        Claim("Z.Fig4", "BERT on MNLI", r"\text{BERT fine-tuned on MNLI: attention sparsifies}", "qualitative",
              "Seed text only.", not_checked="needs pretrained BERT and MNLI; not reproducible offline"),
    ]
    for c in claims:
        object.__setattr__(c, "module", __name__)
    return claims


def synthetic_records(ctx=Context()):
    return [runner.run_claim(c, ctx) for c in synthetic_claims()]


@pytest.fixture(scope="module")
def synth():
    return synthetic_records()


@pytest.fixture(scope="module")
def html_and_bundle(synth, tmp_path_factory):
    out = tmp_path_factory.mktemp("rep") / "report.html"
    report.write_report(out, synth, Context(), command="verify report -k Z")
    return out.with_name("report-all.html").read_text(), json.loads(out.with_suffix(".json").read_text())


class _Ids(HTMLParser):
    def __init__(self):
        super().__init__()
        self.ids, self.hrefs, self.tags = [], [], []

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        self.tags.append((tag, a))
        if "id" in a:
            self.ids.append(a["id"])
        if tag == "a" and "href" in a:
            self.hrefs.append(a["href"])


def _parse(html):
    p = _Ids()
    p.feed(html)
    return p


def _section(html, sid):
    """The HTML of the <section> with id ``sid`` (sections are not nested in the report)."""
    start = html.rindex("<section", 0, html.index(f'id="{sid}"'))
    depth = 0
    for m in re.finditer(r"<(/?)section\b", html[start:]):
        depth += -1 if m.group(1) else 1
        if depth == 0:
            return html[start:start + m.end()]
    return html[start:]


# ---------------------------------------------------------------------------
# headline
# ---------------------------------------------------------------------------

def test_outcome_headline_is_stored_in_the_record(synth):
    fig = next(r for r in synth if r["claim"]["id"] == "Z.Fig1")
    assert fig["checks"][0]["headline"] == "fitted exponent -1.02 [-1.05, -0.99], claimed <= -1"
    assert Outcome("pass", "x").headline == ""


def test_headline_rules(synth):
    by = {r["claim"]["id"]: r for r in synth}
    assert report.headline(by["Z.Fig1"]) == "fitted exponent -1.02 [-1.05, -0.99], claimed <= -1"  # set by the check
    assert report.headline(by["Z.L2"]) == "alpha 0.72 [0.7, 0.74], claimed = 0.09 (derived)"  # auto from interval
    assert report.headline(by["Z.Fig4"]) == "needs pretrained BERT and MNLI; not reproducible offline"
    assert report.headline(by["Z.T1"]).lower().startswith("counterexample found")  # violated: leads with the failure


def test_headline_digits_tell_value_and_bounds_apart():
    rec = {"verdict": "verified", "checks": [{"status": "pass", "measurements": [
        {"name": "L", "value": 2.35671, "lo": 2.35612, "hi": 2.35733, "claimed": "= 2.3566"}]}]}
    assert report.headline(rec) == "L 2.3567 [2.3561, 2.3573], claimed = 2.3566"


@pytest.mark.parametrize("claimed, parsed", [("= −1", ("=", -1.0)), ("<= 0.5 (derived)", ("<=", 0.5)),
                                             ("≥ 2e-3", (">=", 0.002)), ("= 10.23 (derived)", ("=", 10.23)),
                                             ("monotone", None), (None, None)])
def test_parse_claimed(claimed, parsed):
    assert report.parse_claimed(claimed) == parsed


def test_the_claim_a_glyph_draws_is_the_band_of_the_measurement_s_decision():
    """A measurement recorded with a decision is drawn against that decision's band (the region a pass lies inside,
    tolerance included), whatever its claimed text; one recorded without a decision falls back to its text."""
    from numerics import stats
    from theorems.evidence import Evidence

    def check(ctx, wrong: bool = False):
        ev = Evidence(ctx, decisions=3)
        ev.decide("P(hold)", stats.decide_binomial(95, 100, ev.level, at_least=0.8, max_width=1.0))
        ev.decide("slope", stats.decide_interval(-2.1, -1.9, -2.0, margin=stats.Margin(0.5, "exponent −1")))
        ev.decide("gap", stats.decide_upper(0.1, 0.2, 0.25, max_width=1.0,
                                            tolerance=stats.Margin(0.01, "rounding")))
        ev.measure("ratio", 0.4, claimed="<= 0.5 (derived)")
        return ev.outcome()

    c = Claim("Z.T8", "t", "x=1", "exact", "n", checks=(Check("c", "numeric", "d", check),),
              controls=(Control("k", "c", "w", {"wrong": True}),), module=__name__)
    rec = runner.run_claim(c, Context())
    ms, ds = rec["checks"][0]["measurements"], rec["checks"][0]["details"]["decisions"]
    assert report.parse_claimed(ms[0]["claimed"]) is None  # "P ≥ 0.8": its text alone names no relation
    assert [report.claimed_relation(m, ds) for m in ms] == [(">=", 0.8), ("=", -2.0), ("<=", 0.26), ("<=", 0.5)]
    assert report.claimed_relation(ds[1]) == ("=", -2.0)  # a decision reads its own band
    view = report.claim_view(rec, 0)["checks"][0]["measurements_view"]
    assert 'class="g-env"' in view[0]["glyph"] and 'class="g-claim"' in view[1]["glyph"]


# ---------------------------------------------------------------------------
# content of the HTML
# ---------------------------------------------------------------------------

def test_overview_lists_every_claim_with_verdict_fidelity_evidence_and_headline(html_and_bundle, synth):
    html, _ = html_and_bundle
    overview = _section(html, "overview")
    for r in synth:
        assert f'href="#{r["claim"]["id"]}"' in overview
        assert report.headline(r).split(" [")[0] in overview
    assert 'id="paper-Z"' in overview
    for kind in ("symbolic", "numeric", "probe", "controls 0/1", "controls 1/1"):
        assert kind in overview
    counts = re.findall(r'<div class="count ([\w-]+)"[^>]*><b>(\d+)</b>', html)  # the classes, every one shown
    assert dict(counts) == {"verified-over-the-range": "1", "verified-at-our-values-only": "0",
                            "depends-on-a-choice": "0", "violated-over-the-range": "1", "inconclusive": "1",
                            "not-checked": "1"}


def test_counterexample_is_flagged_at_the_top_in_the_overview_and_in_the_claim(html_and_bundle):
    html, _ = html_and_bundle
    top = html[:html.index('id="overview"')]
    assert 'id="counterexamples"' in top and 'href="#Z.T1"' in top
    row = re.search(r'<tr class="has-counterexample">.*?</tr>', html, re.S).group(0)
    assert "Z.T1" in row and "COUNTEREXAMPLE" in row
    claim = _section(html, "Z.T1")
    first_alert = claim.index('class="alert"')
    assert first_alert < claim.index('class="statement"')  # the red box comes before everything else
    assert "x=10 is 3 mod 7" in claim[first_alert:]


def test_four_cell_probe_table_with_first_examples(html_and_bundle, synth):
    html, _ = html_and_bundle
    claim = _section(html, "Z.T1")
    probe = next(c for c in synth[0]["checks"] if c["kind"] == "probe")
    cells = probe["details"]["cells"]
    assert set(cells) <= {HOLD_HOLD, FAIL_FAIL, FAIL_HOLD, COUNTEREXAMPLE}
    table = re.search(r'<table class="four">.*?</table>', claim, re.S).group(0)
    nums = [int(n) for n in re.findall(r'<span class="n">(\d+)</span>', table)]
    assert nums == [cells.get(k, 0) for k in (HOLD_HOLD, COUNTEREXAMPLE, FAIL_HOLD, FAIL_FAIL)]
    assert 'class="counter hit"' in table
    for ex in probe["details"]["cell_examples"].values():
        assert ex["detail"] in table


def test_figures_section_shows_figure_next_to_description_and_constants(html_and_bundle):
    html, _ = html_and_bundle
    figs = _section(html, "figures")
    assert 'id="Z.Fig1"' in figs and 'id="Z.Fig4"' in figs
    grid = re.search(r'<div class="figure-grid">.*?<div class="desc">(.*?)</div>\s*</div>', figs, re.S)
    assert "<svg" in grid.group(0) and "NGD beats GD" in grid.group(1)
    assert "step size" in grid.group(1) and "0.05" in grid.group(1) and "[0, 1, 2]" in grid.group(1)
    assert "not reproducible offline" in _section(html, "Z.Fig4")
    # figure claims are not repeated in the per-paper claim list
    assert 'id="Z.Fig1"' not in _section(html, "claims-Z")


def test_constants_table_in_an_ordinary_claim(tmp_path):
    c = Claim("Z.T9", "t", "x=1", "exact", "n", checks=(Check(
        "s", "symbolic", "d", lambda: Outcome("pass", "ok", details={"constants": {"eta": 0.25}})),),
              module=__name__)
    html = report.render([runner.run_claim(c, Context())], Context(), "verify report")
    assert re.search(r"<th>eta</th><td[^>]*>0.25</td>", html)


def test_self_contained_valid_links_unique_ids(html_and_bundle):
    html, _ = html_and_bundle
    p = _parse(html)
    assert "<script" not in html
    assert not re.search(r"""(src|href)=["']?(https?:)?//""", html)  # no network fetches
    assert not re.search(r"https?://(?!www\.w3\.org/)", html)
    assert not [a for t, a in p.tags if t == "link" and a.get("rel") == "stylesheet"]
    assert len(p.ids) == len(set(p.ids)), "duplicate element ids (SVG ids must be scoped)"
    internal = [h[1:] for h in p.hrefs if h.startswith("#")]
    assert internal and not set(internal) - set(p.ids)
    assert "report.json" in p.hrefs  # the machine-readable bundle, linked


def test_svg_references_stay_inside_their_own_plot(synth):
    svg = synth[2]["checks"][0]["figures"][0]["svg"]
    scoped = scoped_svg(svg, "p7", "t")
    ids = set(re.findall(r'id="([^"]+)"', scoped))
    refs = set(re.findall(r'(?:url\(#|href="#)([^")]+)', scoped))
    assert ids and all(i.startswith("p7-") for i in ids) and refs <= ids


def test_environment_section_and_bundle(html_and_bundle, synth):
    html, bundle = html_and_bundle
    env = _section(html, "environment")
    for key in ("verify report -k Z", "torch", "sympy", "logical cores", "Bonferroni"):
        assert key in env
    for r in synth:
        assert r["code_hash"] in env and r["claim"]["id"] in env
    assert bundle["schema_version"] == results.SCHEMA_VERSION
    assert [r["claim"]["id"] for r in bundle["records"]] == [r["claim"]["id"] for r in synth]
    assert bundle["report"]["command"] == "verify report -k Z" and bundle["report"]["seed"] == "confirmation"
    assert set(bundle["standings"]) == {r["claim"]["id"] for r in synth}


def test_bad_latex_and_leaked_latex_do_not_break_the_report():
    assert "<pre" in mathml.statement_mathml(r"\frac{1}{")
    step = {"text": "t", "latex": r"\mathbb{E}\|x\|^2 = 1",
            "mathml": r'<math display="block"><msup><mi>\mathbb{E}\|x\|</mi><mi>2</mi></msup></math>'}
    out = str(mathml.step_mathml(step))
    assert "<math" in out and "\\mathbb" not in out


def test_derivation_steps_render_from_their_latex_as_the_statements_do():
    """sympy's MathML printer lowercases function names and spells Greek ones; the step is rendered from its LaTeX."""
    import sympy as sp

    W = sp.Symbol("W")
    expr = sp.Eq(sp.Function("L")(W), sp.Function("Delta")(W), evaluate=False)
    step = {"text": "t", "latex": sp.latex(expr), "mathml": sp.mathml(expr, printer="presentation")}
    assert "<mi>l</mi>" in step["mathml"]  # the printer's slip this guards against
    out = str(mathml.step_mathml(step))
    assert "<mi>L</mi>" in out and "&#x00394;" in out and "<mi>l</mi>" not in out and "delta" not in out
    odd = {"text": "t", "latex": r"\quadZ", "mathml": "<math><mi>Z</mi></math>"}  # LaTeX the converter cannot read
    assert str(mathml.step_mathml(odd)) == odd["mathml"]


def test_long_statements_split_at_top_level_quad_and_typos_are_flagged():
    assert mathml.split_top_level(r"a\quad b\qquad c\\ d") == ["a", "b", "c", "d"]
    assert mathml.split_top_level(r"\left(a \quad b\right) \quad {x \quad y}") == [
        r"\left(a \quad b\right)", r"{x \quad y}"]
    cases = r"f=\begin{cases}1 & x>0\\ 0 & x\le 0\end{cases}"
    assert mathml.split_top_level(cases + r"\quad g=1") == [cases, "g=1"]
    html = str(mathml.statement_mathml(r"x \le 1,\quad y \ge 2"))
    assert html.startswith('<div class="math-lines">') and html.count("<math") == 2
    assert "not understood" in mathml.statement_mathml(r"a:\quadZ = 1")  # a typo, shown and flagged


def test_html_output_beside_a_json_named_out(tmp_path, synth):
    report.write_report(tmp_path / "r.json", synth[:1], Context(), "verify report")
    assert (tmp_path / "r.json").read_text().startswith("<!DOCTYPE html>")
    assert json.loads((tmp_path / "r.bundle.json").read_text())["records"]


# ---------------------------------------------------------------------------
# reuse of stored results
# ---------------------------------------------------------------------------

def _counting_claim(calls):
    def check(ctx, wrong: bool = False):
        if wrong:
            return Outcome("fail", "rejected")
        calls.append(ctx.seed)
        return Outcome("pass", "ok", [Measurement("v", 1.0, 0.9, 1.1, "= 1")])

    return Claim(id="Z.R1", title="reuse", statement="x=x", fidelity="exact", fidelity_note="n",
                 checks=(Check("c", "numeric", "d", check),),
                 controls=(Control("k", "c", "w", {"wrong": True}),), module=__name__)


def test_report_reuses_unchanged_records_and_reruns_stale_ones(tmp_path, monkeypatch):
    from verify import execution

    calls, totals = [], []
    real_bar = execution.progress_bar
    monkeypatch.setattr(execution, "progress_bar", lambda total, desc: totals.append(total) or real_bar(total, desc))
    claim = _counting_claim(calls)
    first = cli.run_claims([claim], Context(seed=0), tmp_path, reuse=True)[0]
    stored = json.loads(results.record_path(tmp_path, "Z.R1").read_text())
    again = cli.run_claims([claim], Context(seed=0), tmp_path, reuse=True)[0]
    assert calls == [0] and totals == [2, 0]  # second run: nothing ran, the progress bar had nothing to do
    assert again["created_utc"] == first["created_utc"] == stored["created_utc"]
    assert again["timing"] == stored["timing"]
    assert json.loads(results.record_path(tmp_path, "Z.R1").read_text()) == stored  # not rewritten

    cli.run_claims([claim], Context(seed=1), tmp_path, reuse=True)  # changed seed: stale
    assert calls == [0, 1]
    cli.run_claims([claim], Context(seed=1, budget="standard"), tmp_path, reuse=True)  # changed budget: stale
    assert calls == [0, 1, 1]
    monkeypatch.setattr(registry, "code_hash", lambda c: "changed-code")  # changed claim code: stale
    cli.run_claims([claim], Context(seed=1, budget="standard"), tmp_path, reuse=True)
    assert calls == [0, 1, 1, 1]
    cli.run_claims([claim], Context(seed=1, budget="standard"), tmp_path, reuse=False, rerun=True)  # --rerun
    assert len(calls) == 5


def test_verify_report_command_reuses_a_stored_real_record(tmp_path, monkeypatch, capsys):
    from verify import calibrate

    claim = registry.get("A.T1.1")
    first = calibrate.first_confirmation_seeds([claim], "quick")[claim.id]  # the seed `verify report` runs it at
    rec = runner.run_claim(claim, Context(seed=first), kinds={"symbolic"})
    rec["kinds"] = "all"  # stands in for a full stored run with the same code, seed and budget
    results.write_record(tmp_path / "res", rec)
    ran = []
    real_unit = runner.run_unit

    def fake_unit(c, unit, ctx, fixtures=None):  # nothing real runs: stand-in outcomes for the units the report must redo
        ran.append((c.id, ctx.seed))
        return runner.unit_entry(c, unit, Outcome("fail" if unit.kind == "control" else "pass", "stand-in"), 0.0)

    monkeypatch.setattr(runner, "run_unit", fake_unit)
    args = ["report", "-k", "A.T1.1", "--results", str(tmp_path / "res"), "--out", str(tmp_path / "r.html"),
            "--workers", "1"]
    assert cli.main(args) == 0 and ran == []
    bundle = json.loads((tmp_path / "r.json").read_text())
    assert bundle["records"][0]["created_utc"] == rec["created_utc"]
    assert cli.main(args + ["--seed", "1"]) == 0 and set(ran) == {("A.T1.1", 1)}
    assert len(ran) == len(claim.checks) + len(claim.controls) and real_unit is not fake_unit
    capsys.readouterr()


def test_each_control_shows_the_parameters_it_overrides(html_and_bundle):
    html, _ = html_and_bundle
    section = _section(html, "Z.L2")
    assert '<code class="overrides src">wrong = True</code>' in section and "NOT rejected" in section


def test_each_check_names_the_shared_set_ups_it_uses(tmp_path):
    import toy_claims

    recs = [runner.run_claim(c, Context(seed=1)) for c in toy_claims.SHARING]
    out = tmp_path / "r.html"
    report.write_report(out, recs, Context(seed=1), command="verify report -k T")
    html = out.with_name("r-all.html").read_text()
    assert "Uses the shared set-up <code>doubled()</code> (as <i>values</i>)" in _section(html, "T.203")


def test_a_headline_says_what_was_decided_and_the_resolution_reached():
    """An equality headline shows its band, the alternative the band excludes and the interval's half-width; a bound
    headline leads with the bound it decides, so a measured exponent is not read as the decision."""
    def rec(decision, head):
        return {"verdict": "verified", "claim": {"id": "X.1"}, "checks": [
            {"name": "rate", "status": "pass", "headline": head, "evidence": "paper",
             "details": {"decisions": [decision]}}]}

    eq = {"name": "exponent", "status": "pass", "lo": -2.004, "hi": -1.992, "claimed": "= -2 ± 0.5", "margin": 0.5,
          "excludes": "exponent −1 (Theorem 1's envelope); half the distance from −2"}
    assert report.headline(rec(eq, "exponent -1.998")) == (
        "decided: -2 ± 0.5, against exponent −1; resolution ± 0.006. Measured: exponent -1.998")
    bound = {"name": "exponent", "status": "pass", "lo": -2.0005, "hi": -2.0001, "claimed": "≤ -0.707 (= −1 + 0.293)"}
    assert report.headline(rec(bound, "exponent -2.00")).startswith("decided: ≤ -0.707. Measured: exponent -2.00")


def test_figures_are_written_as_svg_files(tmp_path):
    rec = {"claim": {"id": "X.1"}, "checks": [{"name": "rate fit", "figures": [
        {"title": "t", "svg": '<?xml version="1.0"?>\n<svg xmlns="http://www.w3.org/2000/svg"></svg>', "caption": ""}]}]}
    (path,) = report.write_figures(tmp_path, [rec])
    assert path == tmp_path / "X.1" / "rate-fit-1.svg" and path.read_text().startswith("<svg")


def test_the_report_is_an_index_linking_to_a_page_per_claim(tmp_path, synth):
    """``report.html`` is the index (classes, the papers' tables) with a link per claim to its own page; each claim
    page links back to the index and to its neighbours; ``report-all.html`` holds every claim on one page."""
    out = tmp_path / "report.html"
    report.write_report(out, synth, Context(), command="verify report -k Z")
    index = out.read_text()
    ids = [r["claim"]["id"] for r in synth]
    for cid in ids:
        assert f'href="report-claims/{cid}.html"' in index
        page = (tmp_path / "report-claims" / f"{cid}.html").read_text()
        assert f'id="{cid}"' in page and 'href="../report.html"' in page
    assert 'class="claim ' not in index and 'href="report-all.html"' in index
    first = (tmp_path / "report-claims" / f"{ids[0]}.html").read_text()
    assert f'href="{ids[1]}.html" rel="next"' in first
    assert all(f'id="{cid}"' in (tmp_path / "report-all.html").read_text() for cid in ids)
