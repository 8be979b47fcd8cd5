"""The report as a person sees it: opened in headless Chromium (Debian's ``chromium`` + ``chromium-driver``).

Generated once per session from real records (A.T1.1's derivation and probe with a negative control, A.L5's
distance check, run in-process) plus the synthetic claims of ``test_report.py`` (a figure with constants, a
counterexample in the four-cell probe table, an inconclusive and a not-checked claim).  Checks that the math
is laid out as MathML, every plot is visible and its labels legible, every internal link resolves, the console has no
errors and nothing is fetched, no raw LaTeX shows, folded sections open on a click, and each claim's contents bar
stays in view and leads back; saves screenshots to ``reports/screenshots/``.  Skipped, with the reason, when Chromium,
its driver or selenium is missing (``.ci/run`` installs them).
"""
import base64
import dataclasses
import re
import shutil
import tempfile
import time
from pathlib import Path

import pytest

from theorems.claim import Context
from verify import calibrate, registry, report, runner

ROOT = Path(__file__).resolve().parents[1]
SCREENSHOTS = ROOT / "reports" / "screenshots"
CHROMIUM = next((p for p in ("/usr/bin/chromium", shutil.which("chromium") or "") if p and Path(p).exists()), None)
CHROMEDRIVER = next((p for p in ("/usr/bin/chromedriver", shutil.which("chromedriver") or "")
                     if p and Path(p).exists()), None)

pytestmark = pytest.mark.skipif(CHROMIUM is None or CHROMEDRIVER is None,
                                reason="headless browser test needs Debian's chromium and chromium-driver "
                                       "(apt-get install chromium chromium-driver; .ci/run does this)")
webdriver = pytest.importorskip("selenium.webdriver", reason="selenium not installed (pip install -e .[test])")

# Real records, cheap ones: A.T1.1's derivation (MathML steps with fractions) and probe (four-cell table) with a
# symbolic control, and A.L5's distance check (a plot, intervals, exponent decisions: the detection-limit table).
# (Until issue 13's test-time trim this used A.T1.1's n-law, 60-100 s of Monte Carlo for one plot.)
REAL = {"A.T1.1": (("derivation", "probe"), ("symbolic: dropped Σ",)),
        "A.L5": (("distance",), ("spectral init without Σ̂^{1/2}",))}


def _real_records(ctx: Context) -> list[dict]:
    out = []
    for cid, (checks, controls) in REAL.items():
        claim = registry.get(cid)
        claim = dataclasses.replace(claim, checks=tuple(c for c in claim.checks if c.name in checks),
                                    controls=tuple(k for k in claim.controls if k.name in controls),
                                    free_choices=tuple(f for f in claim.free_choices if set(f.sets) <= set(checks)))
        out.append(runner.run_claim(claim, ctx))
    return out


@pytest.fixture(scope="session")
def report_file(tmp_path_factory):
    from test_report import synthetic_records

    from test_report import synthetic_claims

    ctx = Context(seed=0, budget="quick", device="cpu")
    records = _real_records(ctx) + synthetic_records(ctx)
    # an operating-characteristics section from these records read as four calibration seeds (the section's layout
    # and links are what is tested here; its numbers are tested in test_calibrate.py)
    claims = [*(registry.get(cid) for cid in REAL), *synthetic_claims()]
    summary = calibrate.summarize(claims, {c.id: {s: r for s in range(100, 104)} for c, r in zip(claims, records)},
                                  "quick", "development")
    out = tmp_path_factory.mktemp("browser") / "report.html"
    report.write_report(out, records, ctx, command="verify report (browser test)", calibration=summary)
    return out.with_name("report-all.html"), records  # the one-page version: every claim's section


@pytest.fixture(scope="session")
def browser(report_file):
    """One headless Chromium with the report loaded; yields (driver, console log captured at load)."""
    opts = webdriver.ChromeOptions()
    opts.binary_location = CHROMIUM
    profile = tempfile.mkdtemp(prefix="chromium-profile-")
    for flag in ("--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync",
                 "--disable-dev-shm-usage", "--hide-scrollbars", f"--user-data-dir={profile}"):
        opts.add_argument(flag)
    opts.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    # an explicit driver path: selenium-manager is never asked to download anything
    driver = webdriver.Chrome(options=opts, service=webdriver.ChromeService(executable_path=CHROMEDRIVER))
    try:
        driver.set_page_load_timeout(60)
        driver.set_window_size(1280, 900)  # a laptop screen
        driver.get(report_file[0].as_uri())
        driver.execute_script("return document.fonts.ready")
        log = driver.get_log("browser")
        yield driver, log
    finally:
        driver.quit()
        shutil.rmtree(profile, ignore_errors=True)


def test_math_is_mathml_laid_out_with_size(browser, report_file):
    driver, _ = browser
    boxes = driver.execute_script(
        "return [...document.querySelectorAll('math')].map(m => {const r = m.getBoundingClientRect();"
        " return [r.width, r.height, m.namespaceURI]})")
    n_steps = sum(1 for r in report_file[1] for c in r["checks"] for s in c["steps"] if s["mathml"])
    assert len(boxes) >= n_steps + 1, "statements and derivation steps must be MathML"
    empty = [i for i, (w, h, ns) in enumerate(boxes) if not (w > 0 and h > 0)]
    assert not empty, f"{len(empty)} <math> elements have zero size (first: #{empty[0]})"
    assert {ns for *_, ns in boxes} == {"http://www.w3.org/1998/Math/MathML"}
    # laid out as math, not as a run of text: a fraction stacks its numerator above its denominator
    stacked = driver.execute_script(
        "return [...document.querySelectorAll('mfrac')].map(f => {"
        " const [a, b] = [f.children[0].getBoundingClientRect(), f.children[1].getBoundingClientRect()];"
        " return a.bottom <= b.top + 1 && a.height > 0 && b.height > 0})")
    assert stacked and all(stacked), "MathML fractions are not laid out (no native MathML rendering?)"


def test_every_plot_is_visible(browser, report_file):
    driver, _ = browser
    svgs = driver.find_elements("css selector", "svg")
    n_figures = sum(len(c["figures"]) for r in report_file[1] for c in r["checks"])
    plots = driver.find_elements("css selector", "svg.plot")
    assert len(plots) == n_figures >= 2
    for el in svgs:
        r = el.rect
        assert el.is_displayed() and r["width"] > 0 and r["height"] > 0, el.get_attribute("aria-label")
    # the plots are drawn, not empty boxes: each has path or line content with extent
    drawn = driver.execute_script(
        "return [...document.querySelectorAll('svg.plot')].map(s => {const b = s.getBBox();"
        " return s.querySelectorAll('path, line, use').length > 0 && b.width > 50 && b.height > 50})")
    assert all(drawn)


def test_internal_links_resolve_and_navigate(browser):
    driver, _ = browser
    hrefs = driver.execute_script(
        "return [...document.querySelectorAll('a[href^=\"#\"]')].map(a => a.getAttribute('href'))")
    assert len(hrefs) > 10
    missing = driver.execute_script(
        "return arguments[0].filter(h => !document.getElementById(decodeURIComponent(h.slice(1))))", hrefs)
    assert not missing, f"internal links without a target: {missing}"
    assert {"#overview", "#environment", "#figures", "#A.T1.1", "#paper-A"} <= set(hrefs)
    # following an overview link brings the claim to the top of the window
    driver.execute_script("window.scrollTo(0, 0)")
    driver.find_element("css selector", "table.overview a[href='#Z.Fig1']").click()
    top = driver.execute_script("return document.getElementById('Z.Fig1').getBoundingClientRect().top")
    assert abs(top) < 40 and driver.execute_script("return location.hash") == "#Z.Fig1"
    driver.execute_script("window.scrollTo(0, 0)")


def test_console_has_no_errors_and_nothing_is_fetched(browser):
    driver, log = browser
    severe = [e for e in log + driver.get_log("browser") if e.get("level") == "SEVERE"]
    assert not severe, severe
    fetched = driver.execute_script("return performance.getEntriesByType('resource').map(e => e.name)")
    assert fetched == [], f"the report fetched {fetched}"


def test_operating_characteristics_section_with_detection_limits(browser):
    """The calibration section shows per paper and per claim rates and exponent detection limits; a claim's row
    links to its section, whose detection-limit table opens on a click."""
    driver, _ = browser
    section = driver.find_element("id", "operating-characteristics")
    driver.execute_script("arguments[0].scrollIntoView()", section)
    assert section.is_displayed()
    text = section.text
    assert "Detection limits" in text and "exponent detection limits" in text and "A.L5" in text
    link = section.find_element("css selector", "a[href='#" + report._anchor("A.L5") + "']")
    link.click()
    time.sleep(0.2)
    claim = driver.find_element("id", report._anchor("A.L5"))
    details = claim.find_element("css selector", "details.oc")
    rows = details.find_elements("css selector", ".detection tbody tr")
    assert rows and not any(r.is_displayed() for r in rows)  # folded
    details.find_element("tag name", "summary").click()
    assert all(r.is_displayed() for r in rows)
    assert any("exponent" in r.text for r in rows)
    details.find_element("tag name", "summary").click()


def test_folded_sections_open_on_a_click_and_the_verdict_needs_none(browser):
    """Derivation steps, probe cells, constants, the ledger and the operating characteristics are folded; the
    verdict, the headline and the findings are not; a summary's click unfolds its section (no script involved)."""
    driver, _ = browser
    claim = driver.find_element("id", "A.T1.1")
    for sel in ("details.steps", "details.probe-cells", "details.ledger", "details.oc"):
        for d in claim.find_elements("css selector", sel):
            assert d.get_attribute("open") is None, sel
    steps = claim.find_element("css selector", "details.steps")
    items = steps.find_elements("css selector", "ol.steps li")
    assert items and not any(li.is_displayed() for li in items)
    summary = steps.find_element("tag name", "summary")
    driver.execute_script("arguments[0].scrollIntoView({block: 'center'})", summary)
    summary.click()
    assert all(li.is_displayed() for li in items)
    summary.click()
    assert not any(li.is_displayed() for li in items)
    for cid in ("A.T1.1", "A.L5", "Z.T1", "Z.L2"):
        block = driver.find_element("id", f"{cid}-verdict")
        assert block.is_displayed() and "Verdict of record:" in block.text and "Headline." in block.text
    # a counterexample is never folded away
    cells = driver.find_element("css selector", "#Z\\.T1 details.probe-cells")
    assert cells.get_attribute("open") is not None
    assert cells.find_element("css selector", "td.counter.hit").is_displayed()


def _top(driver, element_id):
    return driver.execute_script("return document.getElementById(arguments[0]).getBoundingClientRect().top", element_id)


def test_claim_contents_stay_in_view_and_lead_back(browser):
    """Each claim's contents bar jumps within the claim, stays at the top of the window while the claim is read
    (without hiding what it jumped to), and leads back to the paper's table and the top of the report."""
    driver, _ = browser
    driver.execute_script("window.scrollTo(0, 0)")
    toc = driver.find_element("css selector", "#A\\.L5 nav.claim-toc")
    labels = [a.text for a in toc.find_elements("tag name", "a")]
    assert labels[:2] == ["statement", "verdict"] and "checks (1)" in labels and "↑ top" in labels
    toc.find_element("css selector", "a[href='#A.L5-checks']").click()
    time.sleep(0.2)
    bar = driver.execute_script("return arguments[0].getBoundingClientRect()", toc)
    assert abs(bar["top"]) < 2, "the claim's contents bar is not held at the top of the window"
    assert bar["bottom"] - 2 <= _top(driver, "A.L5-checks") < 200, "the target is hidden under the bar or not shown"
    driver.execute_script("window.scrollBy(0, 400)")  # reading on: the bar stays
    assert abs(driver.execute_script("return arguments[0].getBoundingClientRect().top", toc)) < 2
    toc.find_element("css selector", "a[href='#paper-A']").click()
    time.sleep(0.2)
    assert abs(_top(driver, "paper-A")) < 40 and driver.execute_script("return location.hash") == "#paper-A"
    driver.find_element("css selector", "table.overview a[href='#A.L5']").click()
    time.sleep(0.2)
    back = driver.find_element("css selector", "a.to-top")  # fixed in the corner, from anywhere
    assert back.is_displayed()
    back.click()
    time.sleep(0.2)
    assert driver.execute_script("return window.scrollY") < 40


def test_plot_text_is_readable(browser):
    """Every plot's labels (the median text: tick labels, axis names) are drawn at 12 px or more, about the page's
    small print; a probe's multi-panel plot squeezed into the default width drew them at 6.5 px."""
    driver, _ = browser
    sizes = driver.execute_script(
        "return [...document.querySelectorAll('svg.plot')].map(s => {"
        " const scale = s.getBoundingClientRect().width / s.viewBox.baseVal.width;"
        " const px = [...s.querySelectorAll('text, tspan')].map(t => parseFloat(getComputedStyle(t).fontSize) * scale)"
        "   .sort((a, b) => a - b);"
        " return [s.getAttribute('aria-label'), px[Math.floor(px.length / 2)]]})")
    assert len(sizes) >= 2 and all(px >= 12 for _, px in sizes), sizes


def test_no_raw_latex_where_the_reader_looks(browser):
    driver, _ = browser
    text = driver.execute_script(
        "const b = document.body.cloneNode(true);"
        " b.querySelectorAll('style, code.src').forEach(e => e.remove());"
        " return b.textContent")
    bad = [text[max(0, m.start() - 40):m.end() + 20]
           for m in re.finditer(r"\^\{|_\{|\\[A-Za-z]+|LaTeX not understood", text)]
    assert not bad, bad[:5]


def test_counterexample_is_a_visible_red_box(browser):
    driver, _ = browser
    box = driver.find_element("id", "counterexamples")
    assert box.is_displayed() and "Z.T1" in box.text
    color = driver.execute_script("return getComputedStyle(arguments[0]).borderTopColor", box)
    r, g, b = (int(x) for x in color[color.index("(") + 1:color.index(")")].split(",")[:3])
    assert r > 150 and g < 100 and b < 100, color


def test_print_layout_and_screenshots(browser):
    driver, _ = browser
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    driver.execute_script("window.scrollTo(0, 0)")
    time.sleep(0.1)
    assert driver.save_screenshot(str(SCREENSHOTS / "report.png"))
    height = driver.execute_script("return document.documentElement.scrollHeight")
    driver.set_window_size(1280, min(height + 50, 16000))
    try:
        assert driver.save_screenshot(str(SCREENSHOTS / "report-full.png"))
    finally:
        driver.set_window_size(1280, 900)
    assert (SCREENSHOTS / "report.png").stat().st_size > 10_000
    pdf = base64.b64decode(driver.print_page())  # the print stylesheet: a multi-page PDF
    assert pdf.startswith(b"%PDF") and len(re.findall(rb"/Type\s*/Page\b", pdf)) >= 3
    (SCREENSHOTS / "report.pdf").write_bytes(pdf)


def test_the_index_leads_to_each_claims_page_and_back_and_no_formula_overflows(browser, report_file):
    """From the index (``report.html``) a claim's link opens its own page; the page's formulas fit their column and
    its way back returns to the index.  The session's browser is borrowed and returned to the one-page report."""
    driver, _ = browser
    index = report_file[0].with_name("report.html")
    try:
        driver.get(index.as_uri())
        link = driver.find_element("css selector", 'a[href="report-claims/A.T1.1.html"]')
        link.click()
        assert driver.current_url.endswith("report-claims/A.T1.1.html")
        assert driver.find_element("id", "A.T1.1").is_displayed()
        overflow = driver.execute_script(
            "return [...document.querySelectorAll('math')].filter(m => {const p = m.closest('div, p, li, td');"
            " return p && m.getBoundingClientRect().width > p.getBoundingClientRect().width + 1}).length")
        assert overflow == 0, f"{overflow} formulas overflow their column"
        driver.find_element("css selector", 'a[href="../report.html"]').click()
        assert driver.current_url.endswith("/report.html")
        assert driver.find_element("id", "overview").is_displayed()
    finally:
        driver.get(report_file[0].as_uri())
