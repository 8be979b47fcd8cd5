"""``verify new ID``: a new claim, with everything CI holds a claim to, written in one step.

Adding a claim takes its module and its notes file (docs/adding-a-claim.md); this writes both, so that the new claim
runs through ``verify list``, ``verify run``, ``verify report`` and its tests before anything is edited by
hand (``tests/test_add_a_claim.py`` proves it in a scratch copy of the project):

* ``theorems/paper_x/<module>.py``: the claim, a worked template in the house order (statement, derivation, free
  choices, checks, controls, ``CLAIM``): a small true lemma (scaled dot products have unit variance) with a sympy
  derivation, a Monte Carlo check decided by ``numerics.stats`` with a stated margin, a free choice, and negative
  controls that pass a wrong scale as a value.  It is verified as written; its mathematics is then replaced by the
  claim's;
* ``theorems/paper_x/<module>.notes.toml``: its notes, beginning with one ledger entry per decision constant
  (docs/ledger.md), drafted from the module by ``verify.ledger``, ``fixed_at = "<uncommitted>"`` until the commit
  exists (its expected verdict is derived: verified, unless a diagnosed finding is added here);
* for a new paper, ``theorems/paper_x/__init__.py`` (the registry walks packages only) and ``paper.toml``, with
  placeholders for the paper's ``title`` (its citation, the report's heading) and ``short`` (the claims table's
  heading).

What it cannot do in one step is printed as the next steps: the generated claims table (``docs/claims.md``) and the
README's results at a glance need a record of every claim (``./suite report``, then ``verify readme``), and the
calibration runs 20 seeds (``verify calibrate``).
Bad input (a malformed id, an id or module that exists) is refused before anything is written.
"""
from __future__ import annotations

import importlib
import re
from dataclasses import dataclass, field
from pathlib import Path

import theorems

#: a claim id: the paper's capital letter, a dot, a kind (L, T, Fig, ...) and its number, parts after dots (A.T1.3)
ID_RE = re.compile(r"^([A-Z])\.([A-Z][A-Za-z]*\d+(?:\.\d+)*)$")
DEFAULT_TITLE = "Scaled dot products have unit variance"
#: what a ledger entry's commit says until the module is committed (docs/ledger.md: then write the hash)
UNCOMMITTED = "<uncommitted>"


class ScaffoldError(ValueError):
    """Bad input for ``verify new``: one line, nothing written."""


@dataclass
class Plan:
    """What ``verify new`` writes: each file's new text (``None`` in ``before``: the file is new)."""

    claim_id: str
    title: str
    module: str  # dotted: theorems.paper_x.l1_scaled_dot_products
    root: Path
    new_paper: bool
    files: dict[Path, str] = field(default_factory=dict)
    before: dict[Path, str | None] = field(default_factory=dict)

    def path(self) -> Path:
        return self.root.joinpath(*self.module.split(".")).with_suffix(".py")


def _root() -> Path:
    return Path(theorems.__file__).resolve().parent.parent


def module_stem(claim_id: str, title: str) -> str:
    """``A.T1.3`` and "Scaled dot products have unit variance" -> ``t1_3_scaled_dot_products``."""
    number = ID_RE.match(claim_id).group(2).lower().replace(".", "_")
    words = re.findall(r"[a-z0-9]+", title.lower())[:3]
    return "_".join([number] + words)


def _check_title(title: str) -> str:
    title = title.strip()
    if not title or "\n" in title or len(title) > 120 or '"""' in title or "\\" in title:
        raise ScaffoldError("--title: give one line of at most 120 characters, without backslashes or triple quotes")
    return title


def plan(claim_id: str, title: str | None = None, root: Path | None = None) -> Plan:
    """Everything ``verify new`` would write, computed and checked before anything is written."""
    from verify import registry

    root = _root() if root is None else Path(root)
    m = ID_RE.match(claim_id)
    if not m:
        raise ScaffoldError(f"malformed claim id {claim_id!r}: the paper's capital letter, a dot, a kind and a number "
                            "(A.L24, B.T8, C.Fig1, A.T1.4)")
    title = _check_title(DEFAULT_TITLE if title is None else title)
    taken = next((c for c in registry.all_claims() if c.id.lower() == claim_id.lower()), None)
    if taken is not None:
        raise ScaffoldError(f"claim {taken.id} exists already ({taken.module}); `verify list` shows the ids in use")
    letter = m.group(1)
    package = root / "theorems" / f"paper_{letter.lower()}"
    module = f"theorems.paper_{letter.lower()}.{module_stem(claim_id, title)}"
    p = Plan(claim_id, title, module, root, new_paper=not (package / "__init__.py").exists())
    target = p.path()
    if target.exists():
        raise ScaffoldError(f"{target.relative_to(root)} exists already; give another --title")
    source = render_module(claim_id, title)
    if p.new_paper:
        p.files[package / "__init__.py"] = f'"""Paper {letter}\'s claims, one module each (its headings: paper.toml)."""\n'
        p.files[package / "paper.toml"] = render_paper(letter)
    p.files[target] = source
    p.files[target.with_name(target.stem + ".notes.toml")] = render_notes(module, source)
    return p


def render_paper(letter: str) -> str:
    """A new paper's ``paper.toml``: its headings (``verify.registry.papers``), placeholders until they are edited."""
    return (f"# Paper {letter}: its citation heads its claims in the report, its short name its section of the claims "
            "table\n# (verify.registry.papers; written by `verify new`: replace both).\n"
            'title = "Authors (year), Title, venue, arXiv id"\n'
            f'short = "Paper {letter} (authors)"\n')


def write(p: Plan) -> list[Path]:
    """Write the plan's files; check that the claim registers and its ledger agrees with it; undo everything if not."""
    for f in p.files:
        p.before[f] = f.read_text() if f.exists() else None
    made_dirs = [d for d in {f.parent for f in p.files} if not d.exists()]
    try:
        for f, text in p.files.items():
            f.parent.mkdir(parents=True, exist_ok=True)
            f.write_text(text)
        refresh()
        _validate(p)
    except Exception as e:
        undo(p, made_dirs)
        refresh()
        if isinstance(e, ScaffoldError):
            raise
        raise ScaffoldError(f"the new claim did not register ({type(e).__name__}: {e}); nothing was kept") from None
    return list(p.files)


def undo(p: Plan, made_dirs: list[Path] = ()) -> None:
    for f, old in p.before.items():
        if old is None:
            f.unlink(missing_ok=True)
        else:
            f.write_text(old)
    for d in sorted(made_dirs, key=lambda d: len(d.parts), reverse=True):
        if d.exists() and not any(d.iterdir()):
            d.rmdir()


def refresh() -> None:
    """Forget what this process cached about the tree, so the new files are seen (``verify new`` followed by other
    commands in one process, as the test does)."""
    from verify import expectations, registry

    importlib.invalidate_caches()
    registry.all_claims.cache_clear()
    expectations.load.cache_clear()


def _validate(p: Plan) -> None:
    from verify import ledger, registry

    claim = registry.get(p.claim_id)
    if claim.module != p.module:
        raise ScaffoldError(f"{p.claim_id} registered from {claim.module}, not from {p.module}")
    bad = ledger.problems(p.module)
    if bad:
        raise ScaffoldError(f"the drafted ledger disagrees with the module: {bad[0].splitlines()[0]}")


def create(claim_id: str, title: str | None = None, root: Path | None = None) -> Plan:
    p = plan(claim_id, title, root)
    write(p)
    return p


# ---------------------------------------------------------------------------
# the files
# ---------------------------------------------------------------------------

def render_module(claim_id: str, title: str) -> str:
    return (TEMPLATE.replace("__ID__", claim_id).replace("__TITLE_REPR__", repr(title))
            .replace("__TITLE__", title))


def render_notes(module: str, source: str) -> str:
    """The module's notes file: its decision ledger, one entry per decision constant, drafted as ``verify.ledger
    --draft`` does (a finding or a measured seed dependence is added there when one is diagnosed)."""
    from verify import ledger

    path = module.replace(".", "/") + ".py"
    head = (f"# Notes of {path}: everything a person writes about its claims (docs/concepts.md#claim-notes).\n"
            "# - [[findings.\"ID\"]]: a diagnosed verdict other than the derived expectation (verified, or not checked);\n"
            "#   [[unstable.\"ID\"]]: a measured seed dependence, with the outcomes it was measured to take\n"
            "#   (verify/expectations.py);\n"
            "# - one table per decision constant, its value and history (the decision ledger, docs/ledger.md;\n"
            f"#   fixed_at \"{UNCOMMITTED}\": write the commit once committed).\n")
    return head + "".join("\n" + ledger.draft_entry(c, UNCOMMITTED) for c in ledger.source_constants(source))


def summary(p: Plan) -> str:
    """What was written and what is left, in the order docs/adding-a-claim.md gives."""
    rel = lambda f: f.relative_to(p.root).as_posix()  # noqa: E731
    what = {p.path(): "the claim: a worked template lemma, verified as written; replace its mathematics",
            p.path().with_name(f"{p.path().stem}.notes.toml"):
                f"its notes: the decision ledger (fixed_at = \"{UNCOMMITTED}\": write the commit once committed), "
                "and later any diagnosed finding",
            p.path().parent / "__init__.py": "the new paper's package (the registry walks packages)",
            p.path().parent / "paper.toml": "the new paper's headings: title and short placeholders"}
    w = max(len(rel(f)) for f in p.files)
    k, stem = p.claim_id, p.path().stem
    lines = [f"verify new: {k} ({p.title}) written:"]
    lines += [f"  {rel(f):<{w}}  {what.get(f, '')}" for f in p.files]
    lines += ["next steps (docs/adding-a-claim.md):",
              f"  1. replace the template's statement, derivation, checks and controls with the claim's; "
              f"./suite verify list -k {k}",
              f"  2. ./suite verify run -k {k} --workers 1",
              f"  3. the ledger of constants you add or change: PYTHONPATH=. .venv/bin/python -m verify.ledger --draft "
              f"-k {k}",
              "  4. a verdict other than verified: its diagnosed finding in the claim's notes file",
              f"  5. ./suite test tests/test_claims.py tests/test_ledger.py -k '{k} or {stem}'",
              "  6. the claims table and its results at a glance, docs/claims.md (CI runs `verify readme --check`): "
              "./suite report (every claim at its first confirmation seed), then ./suite verify readme",
              f"  7. publishing: ./suite verify calibrate --budget quick -k {k} --publish (and --budget standard); "
              f"with free choices, ./suite verify sensitivity -k {k} --budget standard --publish"]
    if p.new_paper:
        lines.append(f"  new paper {k.split('.')[0]}: its citation (title) and short name (short) in "
                     f"theorems/paper_{k[0].lower()}/paper.toml")
    return "\n".join(lines)


TEMPLATE = r'''r"""__ID__ — __TITLE__.

Written by `verify new` as a worked template: a small true lemma with every part a claim needs, verified as written.
Replace the mathematics with the claim's own (statement, derivation, checks, controls) and keep the shape
(docs/adding-a-claim.md).

Statement.  For q, k in R^d with iid N(0, 1) entries, the scaled dot product s = q^T k / sqrt(d) has E s = 0 and
Var s = 1 for every d: why softmax attention divides its logits by sqrt(d) (unscaled, their spread grows like
sqrt(d) and the softmax saturates).

Derivation.  E[q^T k] = sum_i E q_i E k_i = 0, and E[(q^T k)^2] = sum_ij E[q_i q_j] E[k_i k_j] = sum_i 1 = d
(independence, then E[q_i q_j] = delta_ij), so Var s = d / d = 1.  sympy proves it for d = 1..4 by expanding the
polynomial and taking each monomial's Gaussian moments.

Evidence.  The Monte Carlo variance of s at d = 4, 16, 64 against 1: an equivalence decision of numerics.stats with
a margin of half the distance to the nearest mistake the lemma rules out (the 1/d scale, Var s = 1/4 at d = 4).
Negative controls.  The scale 1/d in place of 1/sqrt(d), passed as a value: the derivation and the Monte Carlo check
must both reject it.
"""
from __future__ import annotations

import numpy as np
import sympy as sp
import torch

from numerics import DTYPE
from numerics.stats import Margin, decide_equal, mean_se
from theorems.claim import Assumption, Check, Claim, Context, Control, FreeChoice, Outcome
from theorems.evidence import Evidence
from theorems.plots import new_figure
from theorems.symbolic import Derivation

ID = "__ID__"

# ---------------------------------------------------------------------------
# 1. Statement (LaTeX; the report renders it as MathML, and `\quad` splits it into lines)
# ---------------------------------------------------------------------------

STATEMENT = (
    r"q,k\sim\mathcal{N}(0,I_d)\ \text{iid},\ s=\frac{q^\top k}{\sqrt{d}}\ \Rightarrow\ "
    r"\mathbb{E}\,s=0,\quad\operatorname{Var}s=1\ \text{for every } d\ge1"
)


# ---------------------------------------------------------------------------
# 2. Derivation (symbolic: exact, no seed)
# ---------------------------------------------------------------------------

def sqrt_d_scale(d):
    """The lemma's scale 1/sqrt(d) (a sympy number: exact in the derivation, a float in the Monte Carlo)."""
    return 1 / sp.sqrt(d)


def gaussian_expectation(expr, variables):
    """E[expr] for a polynomial in iid N(0, 1) variables: each monomial's expectation is the product of the moments
    E x^p = (p - 1)!! for even p and 0 for odd p."""
    poly = sp.Poly(sp.expand(expr), *variables)
    return sum(coeff * sp.prod([sp.factorial2(p - 1) if p % 2 == 0 else 0 for p in powers])
               for powers, coeff in poly.terms())


def derivation(scale=sqrt_d_scale) -> Outcome:
    """E s = 0 and E s^2 = 1 for d = 1..4, s = scale(d) q^T k; ``scale``: the lemma's, or a control's mutant."""
    D = Derivation()
    for d in range(1, 5):  # exact for each d; the general d is the sum in the docstring, said below
        q, k = sp.symbols(f"q1:{d + 1}", real=True), sp.symbols(f"k1:{d + 1}", real=True)
        s = scale(d) * sum(qi * ki for qi, ki in zip(q, k))
        D.prove_zero(f"d = {d}: E s = 0", gaussian_expectation(s, q + k))
        D.prove_equal(f"d = {d}: Var s = E s² = 1", gaussian_expectation(s**2, q + k), 1)
    D.say("For every d: E[(qᵀk)²] = Σ_ij E[q_i q_j] E[k_i k_j] = Σ_i 1 = d (independence; E[q_i q_j] = δ_ij), so "
          "Var(qᵀk/√d) = 1.")
    return D.outcome("E s = 0 and Var s = 1 for d = 1..4")


# ---------------------------------------------------------------------------
# 3. Free choices: values the checks need that the statement leaves open (docs/concepts.md, "Free choices")
# ---------------------------------------------------------------------------

#: the largest dimension the Monte Carlo check tests: 64, a common attention head width (the lemma holds for every d)
LARGEST_D = 64
#: the dimensions tested; the smallest, 4, is where the nearest wrong scale (1/d) is closest to the claim
DIMS = (4, 16, LARGEST_D)


def largest_d(v: int) -> dict:
    """What the free choice "largest d" passes the Monte Carlo check: its dimensions with the largest at ``v``."""
    return {"dims": (*DIMS[:-1], v)}


# ---------------------------------------------------------------------------
# 4. Checks (numeric: decided by a rule of numerics.stats at the check's share of the false-alarm budget)
# ---------------------------------------------------------------------------

#: Monte Carlo draws per d at quick / standard / full: Var(s^2) = 2 + 6/d <= 3.5, so the SE of the variance is
#: about 0.03 at quick and the interval (± z SE at the per-decision alpha) about ± 0.13, a third of the margin
DRAWS = (4000, 20000, 50000)
#: Var s = 1; the nearest value a mistake gives is 1/4 (the 1/d scale at the smallest d = 4; no scale gives d >= 4):
#: half the distance
VARIANCE_MARGIN = Margin(0.375, excludes="Var s = 1/4, the 1/d-scaled dot product at d = 4 (the nearest mistake "
                         "the lemma rules out; unscaled gives d >= 4); half the distance from 1")


def check_variance(ctx: Context, scale=sqrt_d_scale, dims=DIMS) -> Outcome:
    """Per d: the Monte Carlo variance of s = scale(d) q^T k equals 1 (± VARIANCE_MARGIN).

    ``scale``: the lemma's 1/sqrt(d), or the control's mutant; ``dims``: the dimensions tested (a free choice)."""
    gen = ctx.generator(ID, "variance")          # its randomness by a name of its own, derived from the run seed
    draws = ctx.pick(*DRAWS)
    ev = Evidence(ctx, decisions=len(dims))     # alpha split over the decisions, declared up front
    points = []
    for d in dims:
        q = torch.randn(draws, d, generator=gen, dtype=DTYPE)
        k = torch.randn(draws, d, generator=gen, dtype=DTYPE)
        s = float(scale(d)) * (q * k).sum(-1)
        var, se = mean_se((s**2).numpy())      # E s = 0 by symmetry, so Var s = E s^2
        ev.decide(f"d = {d}: Var s", decide_equal(var, se, 1.0, ev.z, margin=VARIANCE_MARGIN), value=var)
        points.append((d, var, se))
    if ev.plots:                                 # off when a control re-runs the check
        ev.figure("Variance of the scaled dot product", _plot(points, ev.z),
                  f"{draws} draws per d, ± z SE at the per-decision false-alarm rate; the band is 1 ± the margin.")
    return ev.outcome(draws=draws, dims=list(dims), scale=scale.__name__)


def _plot(points, z):
    fig, ax = new_figure()
    d, var, se = (np.array(x, float) for x in zip(*points))
    ax.errorbar(d, var, yerr=z * se, fmt="o", capsize=3, label="Monte Carlo")
    ax.axhspan(1 - VARIANCE_MARGIN.half_width, 1 + VARIANCE_MARGIN.half_width, color="0.9", label="1 ± margin")
    ax.set_xscale("log", base=2)
    ax.set_xlabel("d")
    ax.set_ylabel("Var(qᵀk) × scale²")
    ax.legend(fontsize=7)
    return fig


# ---------------------------------------------------------------------------
# 5. Controls: mutants of the mathematics, passed as values, that the checks' own decisions must reject
# ---------------------------------------------------------------------------

def inverse_d_scale(d):
    """The mutant: the scale 1/d (Var s = 1/d), a plausible slip for 1/sqrt(d)."""
    return sp.Integer(1) / d


# ---------------------------------------------------------------------------
# 6. The claim
# ---------------------------------------------------------------------------

CLAIM = Claim(
    id=ID,
    title=__TITLE_REPR__,
    statement=STATEMENT,
    fidelity="exact",
    fidelity_note=("Template written by `verify new`: a textbook lemma stated exactly. Replace it with the paper's "
                   "claim, and say here how faithful the checked statement is to the paper's."),
    assumptions=(Assumption("iid Gaussian", "q and k have iid N(0, 1) entries"),),
    checks=(
        Check("derivation", "symbolic", "E s = 0 and Var s = 1 from the Gaussian moments, d = 1..4", derivation),
        Check("variance", "numeric", "Monte Carlo Var s at d = 4, 16, 64 (= 1 ± 0.375: half the distance to the 1/d "
              "scale's 1/4)", check_variance),
    ),
    controls=(
        Control("symbolic: 1/d scale", "derivation", "s = qᵀk/d: Var s = 1/d, not 1", {"scale": inverse_d_scale}),
        Control("1/d scale", "variance", "s = qᵀk/d: the variance is 1/d", {"scale": inverse_d_scale}),
    ),
    free_choices=(
        FreeChoice("largest d", LARGEST_D, "the lemma holds for every d; 16-256 spans common attention head widths",
                   {"variance": largest_d}, low=16, high=256, scale="log", integer=True),
    ),
)
'''
