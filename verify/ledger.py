"""The decision ledger: every decision constant of a claim, its value, why, when it was fixed and whether after the data.

A claim module (and each fixture module of ``theorems/`` it imports) declares what its decisions depend on as
module-level constants in capitals (thresholds, margins, windows, horizons, instance families and filters, draw / run
/ example counts, step sizes), each with a one-line reason in a comment — on the line above (``#: ...`` or ``# ...``)
or at the end of the line::

    #: an exponent interval wider than 0.1 cannot tell -1/2 from -0.4 or -0.6
    MAX_WIDTH = 0.1

The history of each constant lives in a data file beside the code, ``theorems/paper_X/ledger/<module>.toml``, one
table per constant (``docs/ledger.md``)::

    [MAX_WIDTH]
    value = "0.1"              # the source expression, whitespace collapsed; must equal the code's
    fixed_at = "84b046b"       # the commit that set this value
    seen = "before"            # was the value fixed before or after seeing the data it decides?

    [[MAX_WIDTH.changes]]      # one per change; those made after seeing data say what prompted them
    commit = "84b046b"
    was = "0.5"
    seen = "after"
    seed = "quick 105"         # the seed (and budget) whose result prompted the change, or "not recorded"
    result = "..."             # what was seen there
    verdict_before = "inconclusive"   # the check's (or claim's) verdict at that seed before and after the change
    verdict_after = "verified"
    direction = "toward verified"     # | "toward violated" | "neutral"
    kind = "power"                    # | "redefinition" | "removal"
    note = "..."

``tests/test_ledger.py`` requires a reason comment for every constant, a ledger entry whose value equals the code's
for every constant, no entry for a constant that is gone, and the fields above for every change made after seeing
data.  ``python -m verify.ledger --draft`` prints the entries a module is missing, ready to paste.
"""
from __future__ import annotations

import argparse
import ast
import functools
import importlib
import io
import json
import re
import subprocess
import sys
import tokenize
import tomllib
from pathlib import Path

from theorems.claim import Assumption, Claim
from verify.results import stable_repr

#: module constants that are the claim's text, not a decision
NOT_DECISIONS = re.compile(r"^(ID|ID_\w+|STATEMENT\w*|TITLE\w*|FIDELITY_NOTE\w*|FINDINGS\w*|CLAIMS?|PREREGISTERED|__\w+__)$")
CONSTANT = re.compile(r"^[A-Z][A-Z0-9_]*$")
SEEN = ("before", "after")
DIRECTIONS = ("toward verified", "toward violated", "neutral")
KINDS = ("power", "redefinition", "removal")
#: what a change made after seeing data must say ("not recorded" where the history is silent)
AFTER_FIELDS = ("commit", "seed", "result", "verdict_before", "verdict_after", "direction", "kind")
NOT_RECORDED = "not recorded"
ROOT = Path(__file__).resolve().parent.parent


def normalize(expr: str) -> str:
    """A source expression with its whitespace collapsed (reformatting is not a change of value)."""
    return " ".join(expr.split())


def _comments(source: str) -> dict[int, str]:
    out = {}
    for tok in tokenize.generate_tokens(io.StringIO(source).readline):
        if tok.type == tokenize.COMMENT:
            out[tok.start[0]] = tok.string.lstrip("#:").strip()
    return out


def _names(node: ast.AST) -> list[str]:
    targets = node.targets if isinstance(node, ast.Assign) else [node.target]
    out = []
    for t in targets:
        for n in ast.walk(t):
            if isinstance(n, ast.Name):
                out.append(n.id)
    return out


def source_constants(source: str) -> list[dict]:
    """The capitalised module constants of a source text, in order: name, source expression (whitespace collapsed),
    reason (the comment above or at the end of the line) and line.  Reads the text only (any commit's version)."""
    lines = source.splitlines()
    comments = _comments(source)
    out = []
    group_reason, prev_end = "", -10
    for node in ast.parse(source).body:
        if not isinstance(node, (ast.Assign, ast.AnnAssign)) or node.value is None:
            prev_end = node.end_lineno
            group_reason = ""
            continue
        names = [n for n in _names(node) if CONSTANT.match(n) and not NOT_DECISIONS.match(n)]
        above, k = [], node.lineno - 1  # a comment block directly above names a group of consecutive constants
        while k >= 1 and lines[k - 1].lstrip().startswith("#"):
            above.insert(0, comments.get(k, ""))
            k -= 1
        if above:
            group_reason = " ".join(a for a in above if a)
        elif node.lineno != prev_end + 1:  # a blank line ends the group
            group_reason = ""
        prev_end = node.end_lineno
        if not names:
            continue
        reason = comments.get(node.end_lineno) or comments.get(node.lineno) or group_reason
        sources = [ast.get_source_segment(source, node.value) or ""]
        if isinstance(node, ast.Assign) and isinstance(node.targets[0], ast.Tuple) and isinstance(node.value, ast.Tuple) \
                and len(node.targets[0].elts) == len(node.value.elts):
            sources = [ast.get_source_segment(source, v) or "" for v in node.value.elts]
            names_all = [t.id if isinstance(t, ast.Name) else "" for t in node.targets[0].elts]
        else:
            names_all = names
        for i, name in enumerate(names_all):
            if name in names:
                expr = sources[i] if len(sources) == len(names_all) else sources[0]
                out.append({"name": name, "expr": normalize(expr), "reason": reason, "line": node.lineno})
    return out


def module_constants(module: str, root: Path | None = None) -> list[dict]:
    """The decision constants of one module: name, value (repr), source expression, reason, and its ledger entry
    (``fixed_at``, ``seen``, ``changes``; empty when the ledger has none)."""
    mod = importlib.import_module(module)
    path = Path(mod.__file__) if root is None else root.joinpath(*module.split(".")).with_suffix(".py")
    stat = path.stat()
    return [dict(c) for c in _module_constants(module, path, stat.st_mtime_ns, stat.st_size)]


@functools.lru_cache(maxsize=None)
def _module_constants(module: str, path: Path, mtime_ns: int, size: int) -> tuple[dict, ...]:
    """Each file version parsed once per process: every record of its claims carries the constants, and re-parsing
    for each record would take most of the client's time in a parallel run."""
    mod = importlib.import_module(module)
    entries = load(path)
    out = []
    for c in source_constants(path.read_text()):
        value = getattr(mod, c["name"], None)
        if isinstance(value, (Assumption, Claim)):  # a hypothesis or the claim itself, not a decision
            continue
        e = entries.get(c["name"], {})
        out.append({"module": module, "name": c["name"], "value": _short(stable_repr(value)),
                    "source": _short(c["expr"]), "expr": c["expr"], "reason": c["reason"],
                    "fixed_at": e.get("fixed_at", ""), "seen": e.get("seen", ""), "ledger_value": e.get("value"),
                    "changes": [dict(ch) for ch in e.get("changes", [])]})
    return tuple(out)


def _short(text: str, n: int = 160) -> str:
    return text if len(text) <= n else text[: n - 3] + "..."


def ledger_path(path: Path) -> Path:
    """Where a module's ledger lives: ``ledger/<module>.toml`` in the module's package."""
    return path.parent / "ledger" / (path.stem + ".toml")


def load(path: Path) -> dict[str, dict]:
    """A module's ledger (by the module's file), ``{}`` when it has none."""
    f = ledger_path(path)
    return tomllib.loads(f.read_text()) if f.exists() else {}


def claim_modules(claim) -> list[str]:
    """The claim module, then the ``theorems`` fixture modules it imports (its set-ups)."""
    from verify.registry import import_closure

    root = Path(importlib.import_module("theorems").__file__).parent.parent
    fixtures = []
    for f in import_closure(claim.module, root):
        rel = f.relative_to(root).with_suffix("")
        name = ".".join(rel.parts)
        if name.startswith("theorems.paper_") and name != claim.module and rel.parts[-1] != "__init__":
            fixtures.append(name)
    return [claim.module] + sorted(fixtures)


def claim_constants(claim) -> list[dict]:
    """The claim's decision constants with their ledger entries (the record's ``ledger``)."""
    return [{k: v for k, v in c.items() if k not in ("expr", "ledger_value")}
            for m in claim_modules(claim) for c in module_constants(m)]


def after_change(entry: dict) -> dict | None:
    """The last change after seeing data of a constant whose current value was fixed after seeing data."""
    if entry.get("seen") != "after":
        return None
    return next((ch for ch in reversed(entry.get("changes", [])) if ch.get("seen") == "after"), None)


def tally(constants: list[dict]) -> dict:
    """n decisions, k of them fixed after seeing data, j of those toward ``verified`` (each module.NAME once)."""
    unique = {(c["module"], c["name"]): c for c in constants}
    after = [c for c in unique.values() if c.get("seen") == "after"]
    toward = [c for c in after if (after_change(c) or {}).get("direction") == "toward verified"]
    kinds = {k: sum(1 for c in after if (after_change(c) or {}).get("kind") == k) for k in KINDS}
    return {"n": len(unique), "after": len(after), "toward_verified": len(toward), "kinds": kinds}


def problems(module: str) -> list[str]:
    """One line per way the module's ledger disagrees with its code: what to add, update or remove."""
    mod = importlib.import_module(module)
    path = Path(mod.__file__)
    where = ledger_path(path).relative_to(ROOT) if ledger_path(path).is_relative_to(ROOT) else ledger_path(path)
    out = []
    entries = load(path)
    current = {c["name"]: c for c in module_constants(module)}
    for name, c in current.items():
        e = entries.get(name)
        if e is None:
            out.append(f"{module}.{name}: no ledger entry; add to {where}:\n{draft_entry(c)}")
            continue
        if e.get("value") != c["expr"]:
            out.append(f"{module}.{name}: the code says {c['expr']!r}, the ledger {e.get('value')!r}; in {where} set "
                       f"value = {_toml_str(c['expr'])}, fixed_at = \"<commit>\", seen, and append:\n"
                       + _change_block(name, e.get("value", ""), c["expr"]))
        if e.get("seen") not in SEEN:
            out.append(f"{module}.{name}: seen must be one of {SEEN} (got {e.get('seen')!r}) in {where}")
        if not e.get("fixed_at"):
            out.append(f"{module}.{name}: fixed_at (the commit that set the value) is missing in {where}")
        changes = e.get("changes", [])
        if e.get("seen") == "after" and not any(ch.get("seen") == "after" for ch in changes):
            out.append(f"{module}.{name}: seen = \"after\" needs a [[{name}.changes]] entry with seen = \"after\" "
                       f"(commit, seed, result, verdict_before, verdict_after, direction, kind) in {where}")
        for i, ch in enumerate(changes):
            if ch.get("seen") not in SEEN:
                out.append(f"{module}.{name}.changes[{i}]: seen must be one of {SEEN} in {where}")
            if ch.get("seen") != "after":
                continue
            missing = [f for f in AFTER_FIELDS if not str(ch.get(f, "")).strip()]
            if missing:
                out.append(f"{module}.{name}.changes[{i}] (after seeing data): add {', '.join(missing)} "
                           f"(\"{NOT_RECORDED}\" where the history is silent) in {where}")
            if ch.get("direction") not in DIRECTIONS + (NOT_RECORDED,):
                out.append(f"{module}.{name}.changes[{i}]: direction must be one of {DIRECTIONS} in {where}")
            if ch.get("kind") not in KINDS:
                out.append(f"{module}.{name}.changes[{i}]: kind must be one of {KINDS} in {where}")
    for name in entries:
        if name not in current:
            out.append(f"{module}.{name}: the ledger has an entry but the code has no such constant; "
                       f"remove [{name}] from {where} (or rename it to the constant that replaced it)")
    return out


# ---------------------------------------------------------------------------
# drafting entries
# ---------------------------------------------------------------------------

def _toml_str(s: str) -> str:
    return json.dumps(s, ensure_ascii=False)


def draft_entry(c: dict, fixed_at: str = "<commit>", seen: str = "before") -> str:
    return f"[{c['name']}]\nvalue = {_toml_str(c['expr'])}\nfixed_at = \"{fixed_at}\"\nseen = \"{seen}\"\n"


def _change_block(name: str, was: str, now: str) -> str:
    return (f"[[{name}.changes]]\ncommit = \"<commit>\"\nwas = {_toml_str(was)}\nseen = \"before\"  # or \"after\": "
            f"then also seed, result, verdict_before, verdict_after, direction, kind\nnote = \"why\"\n")


def _git(*args: str) -> str:
    return subprocess.run(["git", *args], cwd=ROOT, capture_output=True, text=True, check=True).stdout


def history(path: Path) -> list[tuple[str, dict[str, str]]]:
    """Each committed version of a file (oldest first, following renames): (short hash, {NAME: expression})."""
    rel = path.resolve().relative_to(ROOT).as_posix()
    commit, out = "", []
    for line in _git("log", "--follow", "--format=@%h", "--name-only", "--", rel).splitlines():
        if line.startswith("@"):
            commit = line[1:]
        elif line.strip() and commit:
            try:
                text = _git("show", f"{commit}:{line.strip()}")
                out.append((commit, {c["name"]: c["expr"] for c in source_constants(text)}))
            except (subprocess.CalledProcessError, SyntaxError):
                pass
            commit = ""
    return out[::-1]


def fixed_at(hist: list[tuple[str, dict[str, str]]], name: str, expr: str) -> str:
    """The commit from which the constant has had its current expression without a break."""
    found = ""
    for commit, consts in reversed(hist):
        if consts.get(name) != expr:
            break
        found = commit
    return found


def introduced(path: Path, name: str, hist: list[tuple[str, dict[str, str]]]) -> str:
    """The commit that set a constant's current value: from the file's own history, or, when the value is as old as
    the file (a constant moved in from another module), the oldest commit that added its assignment line anywhere
    under theorems/ (only when that line is unique there, so another module's equal line is not taken for it)."""
    consts = {c["name"]: c for c in source_constants(path.read_text())}
    commit = fixed_at(hist, name, consts[name]["expr"])
    if not hist or commit != hist[0][0]:
        return commit
    line = path.read_text().splitlines()[consts[name]["line"] - 1].split("  #")[0].strip()
    if not line.startswith(name) or "=" not in line:
        return commit
    if subprocess.run(["git", "grep", "-c", "-F", line, "--", "theorems/"], cwd=ROOT, capture_output=True,
                      text=True).stdout.count("\n") != 1:
        return commit
    hits = _git("log", "-S", line, "--format=%h", "--reverse", "--", "theorems/").split()
    if hits and hits[0] != commit and subprocess.run(["git", "merge-base", "--is-ancestor", hits[0], commit],
                                                     cwd=ROOT).returncode == 0:
        return hits[0]
    return commit


def draft(module: str) -> str:
    """TOML entries for the module's constants the ledger lacks (fixed_at from the file's git history), ready to
    paste; constants whose value differs from the ledger's get a change block to fill in."""
    mod = importlib.import_module(module)
    path = Path(mod.__file__)
    entries = load(path)
    hist = None
    out = []
    for c in module_constants(module):
        e = entries.get(c["name"])
        if e is not None and e.get("value") == c["expr"]:
            continue
        hist = hist if hist is not None else history(path)
        commit = introduced(path, c["name"], hist) or "<uncommitted>"
        if e is None:
            out.append(draft_entry(c, commit))
        else:
            out.append(f"# {c['name']}: update value = {_toml_str(c['expr'])} and fixed_at = \"{commit}\", then:\n"
                       + _change_block(c["name"], e.get("value", ""), c["expr"]).replace("<commit>", commit))
    return "\n".join(out)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m verify.ledger", description=__doc__.split("\n")[0])
    p.add_argument("--draft", action="store_true", help="print the ledger entries missing or out of date")
    p.add_argument("-k", action="append", default=[], help="claim id pattern (default: every claim)")
    a = p.parse_args(argv)
    from verify import registry

    modules = sorted({m for c in registry.all_claims() if not c.not_checked and c.module.startswith("theorems.")
                      and (not a.k or any(k in c.id for k in a.k)) for m in claim_modules(c)})
    bad = 0
    for m in modules:
        if a.draft:
            text = draft(m)
            if text:
                print(f"# --- {ledger_path(Path(importlib.import_module(m).__file__)).relative_to(ROOT)}\n{text}")
        else:
            for line in problems(m):
                bad += 1
                print(line)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
