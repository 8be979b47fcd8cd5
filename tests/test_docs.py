"""The README and docs/ as a reader meets them: every relative link and anchor resolves, the README stays short, its
counts are the reviewed verdicts, and the development history stays in the dated engineering log."""
import ast
import re
import unicodedata
from collections import Counter
from pathlib import Path

import pytest


ROOT = Path(__file__).resolve().parent.parent
#: the generated block's markers, read off verify/readme.py (importing it would load the report and torch: seconds)
MARKERS = {t.id: n.value.value for n in ast.parse((ROOT / "verify" / "readme.py").read_text()).body
           if isinstance(n, ast.Assign) for t in n.targets if isinstance(t, ast.Name) and t.id in ("BEGIN", "END")}
BEGIN, END = MARKERS["BEGIN"], MARKERS["END"]
README = ROOT / "README.md"
DOCS = sorted((ROOT / "docs").glob("*.md"))
PAGES = [README, *DOCS]
#: the README is read in about two screens (the generated claims table is docs/claims.md)
README_MAX_LINES = 200
#: the page that holds the generated claims table (``verify readme``)
CLAIMS_PAGE = ROOT / "docs" / "claims.md"
#: the one page where the project's history, and with it the word "session", belongs
LOG = ROOT / "docs" / "engineering-log.md"

LINK = re.compile(r"(?<!!)\[[^\]]*\]\(([^)\s]+)\)")
FENCE = re.compile(r"^(```|~~~)")
HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$")


def _prose(text: str) -> str:
    """The text without fenced code blocks and inline code spans (links there are not links)."""
    out, fenced = [], False
    for line in text.splitlines():
        if FENCE.match(line.lstrip()):
            fenced = not fenced
            continue
        if not fenced:
            out.append(re.sub(r"`[^`]*`", "", line))
    return "\n".join(out)


def slug(heading: str) -> str:
    """GitHub's anchor for a heading: lower case, markup and punctuation dropped, spaces to hyphens."""
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", heading)  # a link's text
    text = text.replace("`", "").replace("*", "")
    text = unicodedata.normalize("NFC", text).lower()
    text = "".join(ch for ch in text if ch.isalnum() or ch in " -_")
    return text.replace(" ", "-")


def anchors(page: Path) -> set[str]:
    """Every anchor GitHub makes for the page's headings (a repeated heading gets -1, -2, ...)."""
    seen, out, fenced = Counter(), set(), False
    for line in page.read_text().splitlines():
        if FENCE.match(line.lstrip()):
            fenced = not fenced
            continue
        m = None if fenced else HEADING.match(line)
        if m:
            s = slug(m.group(2))
            out.add(s if not seen[s] else f"{s}-{seen[s]}")
            seen[s] += 1
    return out


def test_slugs_follow_github():
    assert slug("Paper B's vision figures (B.Fig5-7) on a scaled-down analog") == \
        "paper-bs-vision-figures-bfig5-7-on-a-scaled-down-analog"
    assert slug("Memory tuning (opt-in): `VERIFY_TUNE_MEMORY=1`") == "memory-tuning-opt-in-verify_tune_memory1"
    assert slug("Paper A (Goel, Soltanolkotabi, Bartlett)") == "paper-a-goel-soltanolkotabi-bartlett"


@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(ROOT)))
def test_relative_links_and_anchors_resolve(page):
    broken = []
    for target in LINK.findall(_prose(page.read_text())):
        if re.match(r"^[a-z][a-z0-9+.-]*:", target):  # https:, mailto:
            continue
        path, _, anchor = target.partition("#")
        dest = (page.parent / path).resolve() if path else page
        if not dest.exists():
            broken.append(f"{target}: no such file")
        elif anchor and dest.suffix == ".md" and anchor not in anchors(dest):
            broken.append(f"{target}: no heading with anchor #{anchor} in {dest.relative_to(ROOT)}")
    assert not broken, f"{page.relative_to(ROOT)}:\n" + "\n".join(broken)


def test_readme_is_short_and_the_generated_table_has_its_own_page():
    n = len(README.read_text().splitlines())
    assert n <= README_MAX_LINES, f"README.md has {n} lines (at most {README_MAX_LINES})"
    text = CLAIMS_PAGE.read_text()
    assert text.count(BEGIN) == 1 and text.count(END) == 1, "docs/claims.md: the generated block's markers"


def _sessions(name: str, text: str) -> list[str]:
    return [f"{name}:{i}" for i, line in enumerate(text.splitlines(), 1) if re.search(r"session", line, re.I)]


def test_no_session_history_outside_the_engineering_log():
    found = _sessions("README.md", README.read_text())
    found += [hit for p in DOCS if p != LOG for hit in _sessions(str(p.relative_to(ROOT)), p.read_text())]
    assert not found, "the word 'session' (development history) belongs in docs/engineering-log.md: " + ", ".join(found)


#: the code's comments, docstrings and record strings say why, not when: no development session, no issue number (the
#: history is in the engineering log and the decision ledger, theorems/paper_X/*.notes.toml)
CODE_DIRS = ("numerics", "theorems", "verify")
HISTORY = re.compile(r"session|\bissue\s*#?\d+", re.I)
#: pytest's fixture scope is not history
NOT_HISTORY = re.compile(r"""scope\s*=\s*["']session["']""")


def test_no_history_in_the_code():
    found = [f"{p.relative_to(ROOT)}:{i}: {line.strip()[:100]}"
             for d in CODE_DIRS for p in sorted((ROOT / d).rglob("*.py"))
             for i, line in enumerate(p.read_text().splitlines(), 1) if HISTORY.search(NOT_HISTORY.sub("", line))]
    assert not found, ("development history (a session, an issue number) belongs in docs/engineering-log.md or the "
                       "claim's ledger; say why in the code:\n" + "\n".join(found))


def test_the_ledger_shown_in_the_report_names_no_development_session():
    """The decision ledger is where a decision's history belongs, and the report shows it: that history is told by
    seeds, commits and issues a reader can look up, not by development sessions."""
    found = [f"{p.relative_to(ROOT)}:{i}" for p in sorted(ROOT.glob("theorems/paper_*/**/*.notes.toml"))
             for i, line in enumerate(p.read_text().splitlines(), 1) if re.search(r"session", line, re.I)]
    assert not found, "a development session in the ledger: " + ", ".join(found)


def test_no_history_in_the_generated_findings():
    """The generated findings (from the claims' code and their notes files) state what is found now."""
    block = CLAIMS_PAGE.read_text().split(BEGIN, 1)[1].split(END, 1)[0]
    found = [f"docs/claims.md:{i}" for i, line in enumerate(block.splitlines(), 1) if HISTORY.search(line)]
    assert not found, "development history in the generated block: " + ", ".join(found)


def test_results_at_a_glance_count_the_claims_tables_classes():
    """The counts are generated (`verify readme`), never typed: per paper, the claims in each class are those of the
    claims table's rows (both generated from the same records, calibrations and maps; CI's `verify readme --check`
    holds both to the records), and the README links to them."""
    assert "docs/claims.md#results-at-a-glance" in README.read_text()
    block = CLAIMS_PAGE.read_text().split(BEGIN, 1)[1].split(END, 1)[0]
    glance = block.split("### Results at a glance", 1)[1].split("\n### ", 1)[0]
    lines = [ln for ln in glance.splitlines() if ln.startswith("|")]
    heads = [c.strip() for c in lines[0].strip("|").split("|")][2:]
    rows = {cells[0]: dict(zip(heads, map(int, cells[2:]))) | {"claims": int(cells[1])}
            for ln in lines[2:] for cells in [[c.strip() for c in ln.strip("|").split("|")]]}
    want: dict[str, Counter] = {}
    for ln in block.splitlines():
        m = re.match(r"^\| ([A-Z])\.\S+ \| .*? \| (?:exact|reconstructed|qualitative) \| (?:\*\*([^*]+)\*\*|(not checked))",
                     ln)
        if m:
            want.setdefault(m.group(1), Counter())[m.group(2) or m.group(3)] += 1
    assert set(rows) == set(want)
    for paper, c in want.items():
        assert rows[paper]["claims"] == sum(c.values())
        assert {k: v for k, v in rows[paper].items() if k != "claims" and v} == dict(c), paper


def test_the_claims_page_says_where_the_maps_were_taken():
    """One seed per budget is named; maps taken at each claim's own first confirmation seed say so (not a list of
    every claim's seed), and name seed 0 where older development-seed maps remain."""
    from verify import readme

    assert readme.maps_seeds({"A": {"budget": "standard", "seed": 0}}) == "standard budget, seed 0"
    mixed = {"A": {"budget": "standard", "seed": 0}, "B": {"budget": "standard", "seed": 123},
             "C": {"budget": "standard", "seed": 456}, "D": {"budget": "quick", "seed": 0}}
    assert readme.maps_seeds(mixed) == ("quick budget, seed 0; standard budget, each claim at its first confirmation "
                                        "seed (maps of older code at seed 0)")
