"""The decision ledger: every decision constant of a claim, its value, why, when it was fixed and whether after the data.

A claim module (and each fixture module of ``theorems/`` it imports) declares what its decisions depend on as
module-level constants in capitals (thresholds, margins, windows, horizons, instance families and filters, draw / run
/ example counts, step sizes), each with a one-line reason in a comment — on the line above (``#: ...`` or ``# ...``)
or at the end of the line::

    #: an exponent interval wider than 0.1 cannot tell -1/2 from -0.4 or -0.6
    MAX_WIDTH = 0.1

The history of each constant lives in the module's notes file beside the code, ``theorems/paper_X/<module>.notes.toml``, one
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
data; against git (``history_problems``), that each commit the ledger names set the value it records, and that no
value changed while its claim's outcome was published is labelled "before".  ``python -m verify.ledger --draft``
prints the entries a module is missing, ready to paste.
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
#: "power": only more draws/runs/steps; "redefinition": changes what is decided; "removal": removes evidence;
#: "refactor": the expression changed but not what it decides (the same numbers: a rewrite, a memory chunk, a text)
KINDS = ("power", "redefinition", "removal", "refactor")
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


def _segment(lines: list[str], node: ast.AST) -> str:
    """``ast.get_source_segment`` over lines split once: it splits the whole text again for each node, quadratic in
    a file's length, and the git check reads every committed version of every module."""
    if getattr(node, "end_lineno", None) is None:
        return ""
    first, last = node.lineno - 1, node.end_lineno - 1
    if first == last:
        return lines[first].encode()[node.col_offset:node.end_col_offset].decode()
    return (lines[first].encode()[node.col_offset:].decode() + "".join(lines[first + 1:last])
            + lines[last].encode()[:node.end_col_offset].decode())


def source_constants(source: str, reasons: bool = True) -> list[dict]:
    """The capitalised module constants of a source text, in order: name, source expression (whitespace collapsed),
    reason (the comment above or at the end of the line; empty with ``reasons=False``, which skips tokenizing) and
    line.  Reads the text only (any commit's version)."""
    lines = source.splitlines()
    segment_lines = re.findall(r"[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+\Z", source)  # ast's line breaks only
    comments = _comments(source) if reasons else {}
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
        sources = [_segment(segment_lines, node.value)]
        if isinstance(node, ast.Assign) and isinstance(node.targets[0], ast.Tuple) and isinstance(node.value, ast.Tuple) \
                and len(node.targets[0].elts) == len(node.value.elts):
            sources = [_segment(segment_lines, v) for v in node.value.elts]
            names_all = [t.id if isinstance(t, ast.Name) else "" for t in node.targets[0].elts]
        else:
            names_all = names
        for i, name in enumerate(names_all):
            if name in names:
                expr = sources[i] if len(sources) == len(names_all) else sources[0]
                out.append({"name": name, "expr": normalize(expr), "reason": reason, "line": node.lineno,
                            "end": node.end_lineno})
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
    """Where a module's ledger lives: its notes file, ``<module>.notes.toml`` beside it (docs/concepts.md#claim-notes),
    whose capitalised tables are the ledger (its ``findings`` and ``unstable`` tables are read by
    ``verify.expectations``)."""
    return path.with_name(path.stem + ".notes.toml")


def load(path: Path) -> dict[str, dict]:
    """A module's ledger (by the module's file): the capitalised tables of its notes file, ``{}`` when it has none."""
    f = ledger_path(path)
    data = tomllib.loads(f.read_text()) if f.exists() else {}
    return {k: v for k, v in data.items() if CONSTANT.match(k)}


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


# ---------------------------------------------------------------------------
# the ledger against git
# ---------------------------------------------------------------------------

UNCOMMITTED = "<uncommitted>"
#: the claims page, whose generated block (between these markers) publishes each claim's verdict
CLAIMS_PAGE = "docs/claims.md"
CLAIMS_BLOCK = re.compile(r"<!-- BEGIN claims table.*?<!-- END claims table -->", re.S)
#: the directories whose JSON files published calibrations and sensitivity maps before the one store, and the store
PUBLISHED_DIRS = ("verify/calibration/", "verify/sensitivity/")
PUBLISHED_STORE = "verify/published.json"
#: what a change's ``was`` says when the constant did not exist before it
NEW_MARKERS = ("(none)", "(new)")
#: an unindented line that assigns a capitalised name (the start of a module constant's statement)
CONSTANT_START = re.compile(r"([A-Z][A-Z0-9_]*)\s*(?:,[^=]*)?(?::[^=]*)?=(?!=)")
#: the modules under theorems/ (a git pathspec; the ledger TOMLs beside them quote their lines)
MODULES = "theorems/*.py"
#: a commit line of ``git log --format=@%H`` (a hunk header reads "@@ -1,2 +1,3 @@")
HASH_LINE = re.compile(r"@[0-9a-f]{40}")


def _code(line: str) -> str:
    """A source line without its end-of-line comment (as the ledger's drafts read an assignment line)."""
    return line.split("  #")[0].strip()


def _constant_lines(text: str) -> tuple[str, set[int]]:
    """The lines of a module's text that can hold its decision constants (each unindented assignment to a
    capitalised name that is not the claim's text, with its indented or bracket-closing continuation lines), and
    their numbers.  Two versions that agree on them have the same constants when each constant of the parsed one
    lies within them, so only one of the two is parsed: parsing every committed version is the git check's cost."""
    out, numbers, inside = [], set(), False
    for i, line in enumerate(text.splitlines(), 1):
        if line[:1] not in (" ", "\t", "") and not line.startswith((")", "]", "}")):
            m = CONSTANT_START.match(line)
            inside = m is not None and not NOT_DECISIONS.match(m.group(1))
        if inside:
            out.append(line)
            numbers.add(i)
    return "\n".join(out), numbers


class GitUnavailable(RuntimeError):
    """The ledger cannot be checked against git here: no git, not a repository, no commit, or a shallow clone."""


class Repo:
    """Cached reads of one repository's history, so checking every ledger costs a few git processes per file: the
    commits of HEAD's ancestry and their parents (one ``git log``), each file's versions (one ``git log --follow``
    per file), file texts (one ``git cat-file --batch`` per batch of reads, each blob read and parsed once)."""

    def __init__(self, root: Path):
        self.root = Path(root)
        try:
            shallow = self._git("rev-parse", "--is-shallow-repository").strip()
        except FileNotFoundError:
            raise GitUnavailable("git is not installed") from None
        except subprocess.CalledProcessError:
            raise GitUnavailable(f"{self.root} is not a git repository") from None
        if shallow == "true":
            raise GitUnavailable("a shallow clone: the commits the ledger names may be missing (git fetch --unshallow)")
        try:
            log = self._git("log", "--format=%H %h %P", "HEAD")
        except subprocess.CalledProcessError:
            raise GitUnavailable(f"{self.root} has no commit") from None
        rows = [line.split() for line in log.splitlines() if line.strip()]
        self.head = rows[0][0]
        self.short = {r[0]: r[1] for r in rows}
        self.parents = {r[0]: r[2:] for r in rows}
        self._resolved: dict[str, str | None] = {}
        self._ancestors: dict[str, frozenset[str]] = {}
        self._blobs: dict[tuple[str, str], str | None] = {}
        self._by_text: dict[str, dict | None] = {}
        self._by_lines: dict[str, dict] = {}
        self._versions: dict[str, list[dict]] = {}
        self._dirty: set[str] | None = None
        self._published: dict[str, dict[str, str]] = {}
        self._publishing: dict[tuple[str, str], list[str]] = {}
        self._files_with: dict[tuple[str, str | None], set[str]] = {}
        self._oldest: dict[tuple, str | None] = {}
        self._added: list[tuple[str, set[str]]] | None = None

    def _git(self, *args: str) -> str:
        return subprocess.run(["git", *args], cwd=self.root, capture_output=True, text=True, check=True).stdout

    def rel(self, path: Path) -> str:
        return Path(path).resolve().relative_to(self.root.resolve()).as_posix()

    def resolve(self, ref: str) -> str | None:
        """The full hash of the commit of HEAD's ancestry that ``ref`` (a hash or a prefix of 4+ digits) names."""
        ref = str(ref).strip().lower()
        if ref not in self._resolved:
            hits = [c for c in self.short if c.startswith(ref)] if re.fullmatch(r"[0-9a-f]{4,40}", ref) else []
            self._resolved[ref] = hits[0] if len(hits) == 1 else None
        return self._resolved[ref]

    def ancestors(self, commit: str) -> frozenset[str]:
        """The commits of a commit's history, itself included (from the parents read once); the working tree's
        (``UNCOMMITTED``) is HEAD's and itself."""
        if commit == UNCOMMITTED:
            return self.ancestors(self.head) | {UNCOMMITTED}
        stack = [commit]
        while stack:  # depth first: a commit is done once each of its parents is
            c = stack[-1]
            todo = [p for p in self.parents.get(c, []) if p not in self._ancestors]
            if c in self._ancestors or not todo:
                stack.pop()
                if c not in self._ancestors:
                    self._ancestors[c] = frozenset({c}).union(*(self._ancestors[p] for p in self.parents.get(c, [])))
            else:
                stack.extend(todo)
        return self._ancestors[commit]

    def read(self, pairs: list[tuple[str, str]]) -> list[str | None]:
        """The text of each (commit, path), None where the path is no file at the commit; the uncached ones in one
        ``git cat-file --batch``."""
        todo = [p for p in dict.fromkeys(pairs) if p not in self._blobs]
        if todo:
            out = subprocess.run(["git", "cat-file", "--batch"], cwd=self.root, capture_output=True, check=True,
                                 input="".join(f"{c}:{p}\n" for c, p in todo).encode()).stdout
            pos = 0
            for key in todo:
                end = out.index(b"\n", pos)
                header, pos = out[pos:end], end + 1
                m = re.fullmatch(rb"[0-9a-f]+ (\w+) (\d+)", header)
                if m is None:  # "<name> missing": no such file at that commit
                    self._blobs[key] = None
                    continue
                size = int(m.group(2))
                self._blobs[key] = out[pos:pos + size].decode("utf-8", "replace") if m.group(1) == b"blob" else None
                pos += size + 1
        return [self._blobs[p] for p in pairs]

    def constants(self, text: str | None) -> dict[str, dict] | None:
        """{NAME: constant} of a module's text, each constant as ``source_constants`` reads it plus its assignment
        line (``text``); {} for no file, None when the text does not parse.  Texts that agree on their constant
        lines (``_constant_lines``) are parsed once."""
        if text is None:
            return {}
        if text not in self._by_text:
            key, numbers = _constant_lines(text)
            found = self._by_lines.get(key)
            if found is None:
                try:
                    consts = source_constants(text, reasons=False)
                except SyntaxError:
                    consts = None
                if consts is not None:
                    lines = text.splitlines()
                    found = {c["name"]: {**c, "text": _code(lines[c["line"] - 1])} for c in consts}
                    if all(set(range(c["line"], c["end"] + 1)) <= numbers for c in consts):
                        self._by_lines[key] = found
            self._by_text[text] = found
        return self._by_text[text]

    def versions(self, rel: str) -> list[dict]:
        """Each committed version of a file, following renames (``git log --follow``, newest last): ``commit`` (full
        hash), ``path`` (the file's path then), ``consts`` ({NAME: constant}) and ``parents`` (the constants of the
        file at each parent commit, {} where it did not exist).  Unparsable versions are left out."""
        if rel not in self._versions:
            commit, found = "", []
            for line in self._git("log", "--follow", "--format=@%H", "--name-only", "HEAD", "--", rel).splitlines():
                if line.startswith("@"):
                    commit = line[1:]
                elif line.strip() and commit:
                    found.append((commit, line.strip()))
                    commit = ""
            found = found[::-1]
            # the file at each parent: under its path at the commit, else under the path before a rename
            older = {c: (found[i - 1][1] if i else p) for i, (c, p) in enumerate(found)}
            wanted = [(q, p) for c, p in found for q in self.parents.get(c, [])]
            wanted += [(q, older[c]) for c, _ in found for q in self.parents.get(c, [])]
            self.read(found + wanted)
            out = []
            for c, p in found:
                text = self.read([(c, p)])[0]
                consts = self.constants(text) if text is not None else None
                if consts is None:  # the commit deleted the file, or left it unparsable
                    continue
                parents = []
                for q in self.parents.get(c, []):
                    text = self.read([(q, p)])[0]
                    text = text if text is not None else self.read([(q, older[c])])[0]
                    parents.append(self.constants(text) or {})
                out.append({"commit": c, "path": p, "consts": consts, "parents": parents})
            self._versions[rel] = out
        return self._versions[rel]

    def at_head(self, rel: str) -> dict[str, dict]:
        """The constants of the file as HEAD has it ({} when HEAD has no such file)."""
        return self.constants(self.read([(self.head, rel)])[0]) or {}

    def dirty(self, rel: str) -> bool:
        """Whether the file has uncommitted changes (modified, staged or untracked; one ``git status`` for all)."""
        if self._dirty is None:
            tokens = iter(self._git("status", "--porcelain", "-z", "--untracked-files=all").split("\0"))
            self._dirty = set()
            for token in tokens:
                if len(token) > 3:
                    self._dirty.add(token[3:])
                    if "R" in token[:2] or "C" in token[:2]:  # a rename or copy: its source path follows
                        next(tokens, None)
        return rel in self._dirty

    def added(self) -> list[tuple[str, set[str]]]:
        """For each commit of HEAD's ancestry that touched a module under theorems/, oldest first, the unindented
        lines it added there, without their comments (one ``git log -p``, read once)."""
        if self._added is None:
            self._added, commit, lines = [], "", set()
            for line in self._git("log", "-p", "--reverse", "--format=@%H", "HEAD", "--", MODULES).splitlines():
                if HASH_LINE.fullmatch(line):
                    if commit:
                        self._added.append((commit, lines))
                    commit, lines = line[1:], set()
                elif line.startswith("+") and not line.startswith("+++") and line[1:2] not in (" ", "\t", ""):
                    lines.add(_code(line[1:]))
            if commit:
                self._added.append((commit, lines))
        return self._added

    def files_with(self, lines: list[str], at: str | None) -> list[set[str]]:
        """For each (unindented, comment-free) line, the modules under theorems/ that have it as a line (at commit
        ``at``; in the working tree when None); the uncached ones in one ``git grep``."""
        todo = [line for line in dict.fromkeys(lines) if (line, at) not in self._files_with]
        if todo:
            args = [a for line in todo for a in ("-e", line)]
            hits = subprocess.run(["git", "grep", "-F", *args, *([at] if at else ["--untracked"]), "--", MODULES],
                                  cwd=self.root, capture_output=True, text=True).stdout.splitlines()
            rows = [r.split(":", 1) for r in (h[len(at) + 1:] if at else h for h in hits) if ":" in r]
            for line in todo:
                self._files_with[(line, at)] = {path for path, text in rows if _code(text) == line}
        return [self._files_with[(line, at)] for line in lines]

    def oldest_adding(self, line: str, at: str | None, before: str, batch: tuple[str, ...] = ()) -> str | None:
        """The oldest commit that added ``line`` (an unindented line without its comment) to a module under
        theorems/, when that line is in one module only there (at commit ``at``; in the working tree when None), so
        another module's equal line is not taken for it, and the commit is an ancestor of ``before`` other than it;
        else None.  ``batch``: other lines likely asked next at ``at``, searched in the same ``git grep``."""
        key = (line, at, before)
        if key not in self._oldest:
            found = None
            if len(self.files_with([line, *batch], at)[0]) == 1:
                first = next((c for c, lines in self.added() if line in lines), None)
                if first and first != before and first in self.ancestors(before):
                    found = first
            self._oldest[key] = found
        return self._oldest[key]

    def published(self, commit: str) -> dict[str, str]:
        """What was published at a commit, by path: the generated block of the claims page, and each calibration
        and sensitivity JSON file."""
        if commit not in self._published:
            names = self._git("ls-tree", "-r", "--name-only", commit, "--", CLAIMS_PAGE, PUBLISHED_STORE,
                              *PUBLISHED_DIRS).split("\n")
            paths = [p for p in names if p in (CLAIMS_PAGE, PUBLISHED_STORE)
                     or (p[:p.rfind("/") + 1] in PUBLISHED_DIRS and p.endswith(".json"))]
            out = {}
            for p, text in zip(paths, self.read([(commit, p) for p in paths])):
                if text is not None and p == CLAIMS_PAGE:
                    m = CLAIMS_BLOCK.search(text)
                    text = m.group(0) if m else None
                if text is not None:
                    out[p] = text
            self._published[commit] = out
        return self._published[commit]

    def publishing(self, commit: str, claim_id: str) -> list[str]:
        """The publications at a commit that carry the claim's outcome (name its id)."""
        key = (commit, claim_id)
        if key not in self._publishing:
            self._publishing[key] = [p for p, text in self.published(commit).items() if mentions(text, claim_id)]
        return self._publishing[key]


@functools.lru_cache(maxsize=None)
def repository(root: Path = ROOT) -> Repo:
    """The repository's history reader, one per process (raises GitUnavailable when there is none to read)."""
    return Repo(root)


def history(path: Path, repo: Repo | None = None) -> list[tuple[str, dict[str, str]]]:
    """Each committed version of a file (oldest first, following renames): (short hash, {NAME: expression})."""
    repo = repo or repository()
    return [(repo.short[v["commit"]], {n: k["expr"] for n, k in v["consts"].items()})
            for v in repo.versions(repo.rel(path))]


class Timeline:
    """A module file's versions as the ledger reads them: the committed ones (``Repo.versions``) and, while the file
    has uncommitted changes, the working tree's (commit ``UNCOMMITTED``, HEAD's version its parent); which versions
    set a constant to a value, and what set it before a version brought it into the file."""

    def __init__(self, repo: Repo, path: Path):
        self.repo, self.path = repo, Path(path)
        self.rel = repo.rel(path)
        self.versions = list(repo.versions(self.rel))
        if repo.dirty(self.rel) and self.path.exists():
            self.versions.append({"commit": UNCOMMITTED, "path": self.rel, "parents": [repo.at_head(self.rel)],
                                  "consts": repo.constants(self.path.read_text()) or {}})
        self.by_commit = {v["commit"]: v for v in self.versions}

    def short(self, commit: str) -> str:
        return self.repo.short.get(commit, commit if commit == UNCOMMITTED else commit[:7])

    @staticmethod
    def expr(consts: dict, name: str) -> str | None:
        return consts[name]["expr"] if name in consts else None

    def sets(self, name: str, value: str) -> list[dict]:
        """The versions that set the constant to the value (it had another value, or none, at every parent)."""
        return [v for v in self.versions if self.expr(v["consts"], name) == value
                and all(self.expr(p, name) != value for p in v["parents"])]

    def stands_from(self, name: str, value: str) -> dict | None:
        """The version from which the value stands: the last that set it (no later one, by ancestry, set it again)."""
        found = self.sets(name, value)
        last = [s for s in found if not any(d is not s and s["commit"] in self.repo.ancestors(d["commit"])
                                            for d in found)]
        return last[-1] if last else None

    def origins(self, name: str, v: dict) -> list[str]:
        """For a version that brought the constant into the file, the commits that set its value before: the oldest
        that added its assignment line to a module under theorems/ (it moved in), the one that set it under its old
        name (it was renamed: the parent had a constant of that value which this version lacks)."""
        if any(self.expr(p, name) is not None for p in v["parents"]):
            return []
        k, out = v["consts"][name], []
        if k["text"].startswith(name) and "=" in k["text"]:
            at = None if v["commit"] == UNCOMMITTED else v["commit"]  # None: grep the working tree
            out += [c for c in [self.repo.oldest_adding(k["text"], at, v["commit"],
                                                        tuple(x["text"] for x in v["consts"].values()))] if c]
        parent = v["parents"][0] if v["parents"] else {}
        for old in parent:
            if old != name and old not in v["consts"] and parent[old]["expr"] == k["expr"]:
                out += [u["commit"] for u in self.sets(old, k["expr"])
                        if u["commit"] in self.repo.ancestors(v["commit"])][-1:]
        return out


def introduced(path: Path, name: str) -> str:
    """The commit that set a constant's current value (short hash; "" while only the working tree has it): the last
    commit that set it in the file, or, when that commit brought the constant in (moved in from another module, or
    renamed), the commit that set it before (``Timeline.origins``)."""
    repo = repository()
    timeline = Timeline(repo, path)
    value = {c["name"]: c["expr"] for c in source_constants(Path(path).read_text(), reasons=False)}.get(name)
    last = timeline.stands_from(name, value) if value is not None else None
    if last is None:
        return ""
    found = timeline.origins(name, last) or [last["commit"]]
    return "" if found[0] == UNCOMMITTED else repo.short[found[0]]


@functools.lru_cache(maxsize=None)
def _id_pattern(claim_id: str) -> re.Pattern:
    return re.compile(rf"(?<![\w.]){re.escape(claim_id)}(?!\w|\.\w)")


def mentions(text: str, claim_id: str) -> bool:
    """Whether a text names the claim (``A.T1`` is not named by ``A.T1.2`` nor by ``A.T10``)."""
    return _id_pattern(claim_id).search(text) is not None


def is_expression(text: str) -> bool:
    """Whether a ``was`` is a source expression, checked against git, rather than a description of what the constant
    replaced (``"(none)"``, ``"STEPS = (300, 600, 600)"``, ``"6 for the check"``), which git cannot check."""
    if text in NEW_MARKERS or text == NOT_RECORDED:
        return False
    try:
        ast.parse(text, mode="eval")
    except SyntaxError:
        return False
    return True


def history_problems(path: Path, entries: dict, claim_ids, repo: Repo) -> list[str]:
    """One line per way a module's ledger disagrees with the module file's git history (docs/ledger.md).

    Each recorded setting of a value is checked: ``fixed_at`` sets the entry's ``value``; each change's ``commit``
    sets the next change's ``was``, or the entry's ``value`` for the last change.  A commit "sets" a value when the
    module file (``git log --follow``) has the constant at that value there and did not at the commit's parent (by
    ancestry, so a merged branch's commits are read against their own parents).  While the file has uncommitted
    changes, the working tree is one more version (``"<uncommitted>"``), HEAD its parent (``Timeline``).

    (a) The commit must be a commit of HEAD's ancestry that set the value.  A version that brought the constant
        into the file (moved in from another module, or renamed) may instead be named by the commit that set the
        value before (``Timeline.origins``: the oldest commit that added its assignment line to a module under
        theorems/, the commit ``introduced`` drafts; or the one that set it under its old name).  ``fixed_at`` must
        moreover be the last setting (no later commit set the value again).  ``"<uncommitted>"`` passes only while
        the module file has uncommitted changes, so a fresh entry passes before its commit and fails once its
        commit is forgotten.  A change's ``"not recorded"`` passes unless a commit of the file changed the constant
        from its ``was`` to its new value.  Where the new value is a description rather than an expression (the
        next change's ``was`` reads ``"STEPS = (300, 600, 600)"``), the commit need only have touched a module
        under theorems/ (the history may be carried from the module the constant came from); where two consecutive
        changes name one commit, the first one's value was never committed and is not checked either; where a
        change has no ``was`` or its ``was`` equals its new value (a change of meaning, not of expression), the
        commit need only have the value.
    (b) "before", operationally: a value changed (not introduced with its check: the file at the commit's parent
        had the constant with another value) at commit C while a publication at C's parent already carried the
        claim's outcome (the claim id appears in the generated block of docs/claims.md, in the store
        verify/published.json, or in the JSON files of verify/calibration/ and verify/sensitivity/ that preceded it,
        at C^, read as ``git show C^:path``; HEAD for the working tree) was set with that outcome in view and cannot be labelled ``seen = "before"``.  ``claim_ids``
        are the claims whose module is or imports this one.  A "before" that (b) does not refute remains the
        record's word.
    """
    timeline = Timeline(repo, path)
    rel, versions, by_commit = timeline.rel, timeline.versions, timeline.by_commit
    expr, sets, origins, short = timeline.expr, timeline.sets, timeline.origins, timeline.short
    where = ledger_path(Path(path)).name
    out = []

    for name, e in entries.items():
        if not isinstance(e, dict):
            continue

        def hint(value: str | None) -> str:
            if value is None:
                return f"git log --follow -- {rel}"
            found = [short(c) for v in sets(name, value) for c in [v["commit"], *origins(name, v)]]
            return (f"git: {name} = {_short(value, 80)!r} set at {' or '.join(found)}" if found else
                    f"no commit of {rel} sets {name} = {_short(value, 80)!r}")

        changes = e.get("changes") or []
        steps = []
        for i, ch in enumerate(changes):
            new = str(changes[i + 1].get("was", "")) if i + 1 < len(changes) else str(e.get("value", ""))
            intermediate = i + 1 < len(changes) and str(changes[i + 1].get("commit", "")) == str(ch.get("commit", ""))
            steps.append((f"{name}.changes[{i}].commit", f"{name}.changes[{i}].seen", str(ch.get("commit", "")),
                          new if i + 1 == len(changes) or (is_expression(new) and not intermediate) else None,
                          None if "was" not in ch else str(ch["was"]), ch.get("seen")))
        steps.append((f"{name}.fixed_at", f"{name}.seen", str(e.get("fixed_at", "")), str(e.get("value", "")), "",
                      e.get("seen")))
        for field, seen_field, ref, new, was, seen in steps:
            def problem(text: str) -> None:
                out.append(f"{rel}: {field} = {ref!r} {text}; in {where} ({hint(new)})")

            if ref == UNCOMMITTED and UNCOMMITTED not in by_commit:
                problem("but the file has no uncommitted change: name the commit")
                continue
            if ref == NOT_RECORDED and field.endswith(".commit"):
                found = [v for v in versions if new is not None and was is not None and is_expression(was)
                         and expr(v["consts"], name) == new
                         and any(expr(p, name) == normalize(was) for p in v["parents"])]
                if found:
                    problem(f"but git recorded the change from {_short(was, 80)!r}: {short(found[-1]['commit'])}")
                continue
            full = UNCOMMITTED if ref == UNCOMMITTED else repo.resolve(ref)
            if full is None:
                problem("is not a commit of this repository's history")
                continue
            v = by_commit.get(full)
            wrong = None
            if v is None and new is None:  # a description: any commit that touched a module (carried from another)
                if not any(c == full for c, _ in repo.added()):
                    problem("is not a commit that touched a module under theorems/")
                continue
            if v is None:
                wrong = f"is not a commit of {rel} (git log --follow)"
            elif new is not None and expr(v["consts"], name) != new:
                there = expr(v["consts"], name)
                wrong = (f"has {name} = {_short(there, 80)!r} there, not {_short(new, 80)!r}" if there is not None
                         else f"has no {name} there (wanted {_short(new, 80)!r})")
            elif new is not None and was is not None and normalize(was) != new \
                    and any(expr(p, name) == new for p in v["parents"]):
                wrong = f"did not set {name} = {_short(new, 80)!r}: the file at its parent already had it"
            matched = v
            if wrong is not None:  # the commit that set the value before the file's version brought it in?
                matched = next((s for s in sets(name, new) if full in origins(name, s)), None) if new else None
                if matched is None:
                    problem(wrong)
                    continue
            if field.endswith(".fixed_at"):
                later = [d for d in sets(name, new) if matched is not None and d["commit"] != matched["commit"]
                         and matched["commit"] in repo.ancestors(d["commit"]) and full not in origins(name, d)]
                if later:
                    problem(f"but {name} was set to this value again at {short(later[-1]['commit'])}, from which it "
                            f"stands")
                    continue
            if seen != "before" or v is None or v is not matched or not v["parents"]:
                continue
            before, after = expr(v["parents"][0], name), expr(v["consts"], name)
            if before is None or after is None or before == after:
                continue
            parent = repo.head if full == UNCOMMITTED else repo.parents[full][0]
            hits = {cid: repo.publishing(parent, cid) for cid in claim_ids}
            seen_ids = [cid for cid, paths in hits.items() if paths]
            if seen_ids:
                paths = sorted({p for cid in seen_ids for p in hits[cid]})
                at = "HEAD" if full == UNCOMMITTED else f"{short(full)}^"
                out.append(f"{rel}: {seen_field} = \"before\", but {short(full)} changed {name} from "
                           f"{_short(before, 80)!r} to {_short(after, 80)!r} while {', '.join(paths)} at {at} "
                           f"already published {', '.join(seen_ids)}: relabel it seen = \"after\" with the fields a "
                           f"change after the data needs in {where} (docs/ledger.md)")
    return out


@functools.lru_cache(maxsize=None)
def claim_ids_by_module() -> dict[str, tuple[str, ...]]:
    """For each theorems module, the ids of the claims whose module is it or imports it."""
    from verify import registry

    out: dict[str, list[str]] = {}
    for c in registry.all_claims():
        if c.module.startswith("theorems."):
            for m in claim_modules(c):
                out.setdefault(m, []).append(c.id)
    return {m: tuple(ids) for m, ids in out.items()}


def git_problems(module: str, repo: Repo | None = None) -> list[str]:
    """The module's ledger against its file's git history (``history_problems``); raises GitUnavailable."""
    path = Path(importlib.import_module(module).__file__)
    return history_problems(path, load(path), claim_ids_by_module().get(module, ()), repo or repository())


# ---------------------------------------------------------------------------
# drafting from git
# ---------------------------------------------------------------------------

def draft(module: str) -> str:
    """TOML entries for the module's constants the ledger lacks (fixed_at from the file's git history), ready to
    paste; constants whose value differs from the ledger's get a change block to fill in."""
    mod = importlib.import_module(module)
    path = Path(mod.__file__)
    entries = load(path)
    out = []
    for c in module_constants(module):
        e = entries.get(c["name"])
        if e is not None and e.get("value") == c["expr"]:
            continue
        commit = introduced(path, c["name"]) or UNCOMMITTED
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
    try:
        repo = None if a.draft else repository()
    except GitUnavailable as e:
        repo = None
        print(f"# the ledger is not checked against git: {e}", file=sys.stderr)
    for m in modules:
        if a.draft:
            text = draft(m)
            if text:
                print(f"# --- {ledger_path(Path(importlib.import_module(m).__file__)).relative_to(ROOT)}\n{text}")
        else:
            for line in problems(m) + (git_problems(m, repo) if repo is not None else []):
                bad += 1
                print(line)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
