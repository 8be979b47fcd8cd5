"""Every relative link in README.md, CHANGELOG.md and docs/ points at a file that exists."""
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
LINK = re.compile(r"\]\(([^)#\s]+)(?:#[^)]*)?\)")


def test_relative_links_resolve():
    pages = [ROOT / "README.md", ROOT / "CHANGELOG.md", *sorted((ROOT / "docs").glob("*.md"))]
    broken = [f"{page.relative_to(ROOT)}: {target}" for page in pages for target in LINK.findall(page.read_text())
              if "://" not in target and not target.startswith("mailto:") and not (page.parent / target).exists()]
    assert not broken, "broken links:\n" + "\n".join(broken)
