"""Render results records into one self-contained HTML file (no scripts, no network).

Math is MathML (claim statements converted from LaTeX by latex2mathml, derivation
steps printed by sympy), plots are inline SVG, styling is inline CSS.  The JSON
bundle of the records is written beside the HTML.
"""
from __future__ import annotations

import json
import platform
from collections import Counter
from pathlib import Path

import jinja2
from latex2mathml.converter import convert as latex_to_mathml

from theorems.claim import FAMILY_ALPHA, MAX_DECISIONS, Context
from verify import results

VERDICTS = ("verified", "violated", "inconclusive", "not checked")


def _env() -> jinja2.Environment:
    env = jinja2.Environment(loader=jinja2.PackageLoader("verify", "templates"),
                             autoescape=jinja2.select_autoescape(["html"]), trim_blocks=True, lstrip_blocks=True)
    env.filters["mathml"] = lambda tex: jinja2.filters.Markup(latex_to_mathml(tex, display="block"))
    env.filters["fmt"] = lambda v: "—" if v is None else f"{v:.4g}"
    return env


def render(records: list[dict], ctx: Context, command: str) -> str:
    counts = Counter(r["verdict"] for r in records)
    versions = records[0]["versions"] if records else results.library_versions()
    meta = {"seed": ctx.seed, "budget": ctx.budget, "device": ctx.device, "command": command,
            "created": results.now_utc(), "platform": platform.platform(), "versions": versions,
            "alpha": ctx.alpha, "family_alpha": FAMILY_ALPHA, "max_decisions": MAX_DECISIONS}
    papers = sorted({r["claim"]["paper"] for r in records})
    return _env().get_template("report.html").render(
        records=records, counts=counts, verdicts=VERDICTS, meta=meta, papers=papers)


def write_report(out: Path, records: list[dict], ctx: Context, command: str) -> None:
    out = Path(out)
    results.atomic_write_text(out, render(records, ctx, command))
    bundle = {"schema_version": results.SCHEMA_VERSION, "records": records}
    results.atomic_write_text(out.with_suffix(".json"), json.dumps(bundle, indent=1, sort_keys=True))
