"""A claim's pre-registered decisions, read off its code: thresholds, windows, instances and tolerances.

A claim module (and each fixture module of ``theorems/`` it imports) declares what its decisions depend on as
module-level constants in capitals, each with a one-line reason in a comment — on the line above (``#: ...`` or
``# ...``) or at the end of the line::

    #: an exponent interval wider than 0.1 cannot tell -1/2 from -0.4 or -0.6
    MAX_WIDTH = 0.1
    NS = np.logspace(3, 6, 7).round().astype(int).tolist()  # from 1e3: the O(1/n) correction moves the slope < 0.01

The constants are fixed before the data they decide.  A constant changed after seeing results is listed in the
module's ``PREREGISTERED`` block, ``{"NAME": "what it was, what it is, and why it changed"}``; the git history keeps
the rest.  The report shows every constant with its value, reason and change note, so a reader sees how each
decision was set up; ``tests/test_preregistration.py`` refuses a constant without a reason.
"""
from __future__ import annotations

import ast
import functools
import importlib
import io
import re
import tokenize
from pathlib import Path

from theorems.claim import Assumption
from verify.results import stable_repr

#: module constants that are the claim's text, not a decision
NOT_DECISIONS = re.compile(r"^(ID|ID_\w+|STATEMENT\w*|TITLE\w*|FIDELITY_NOTE\w*|FINDINGS\w*|CLAIMS?|PREREGISTERED|__\w+__)$")
CONSTANT = re.compile(r"^[A-Z][A-Z0-9_]*$")


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


def module_constants(module: str, root: Path | None = None) -> list[dict]:
    """The pre-registered constants of one module: name, value (repr), source expression, reason, change note."""
    mod = importlib.import_module(module)
    path = Path(mod.__file__) if root is None else root.joinpath(*module.split(".")).with_suffix(".py")
    stat = path.stat()
    return [dict(c) for c in _module_constants(module, path, stat.st_mtime_ns, stat.st_size)]


@functools.lru_cache(maxsize=None)
def _module_constants(module: str, path: Path, mtime_ns: int, size: int) -> tuple[dict, ...]:
    """Each file version parsed once per process (every record of its claims carries them: re-parsing took most of
    the client's time in a parallel run, beside the workers, session 12)."""
    mod = importlib.import_module(module)
    source = path.read_text()
    lines = source.splitlines()
    comments = _comments(source)
    changes = getattr(mod, "PREREGISTERED", {}) or {}
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
            if name not in names:
                continue
            expr = sources[i] if len(sources) == len(names_all) else sources[0]
            value = getattr(mod, name, None)
            if isinstance(value, Assumption):  # an assumption is the claim's hypothesis, not a decision
                continue
            text = stable_repr(value)
            out.append({"module": module, "name": name, "value": _short(text), "source": _short(expr),
                        "reason": reason, "changed": changes.get(name, "")})
    return tuple(out)


def _short(text: str, n: int = 160) -> str:
    return text if len(text) <= n else text[: n - 3] + "..."


def claim_constants(claim) -> list[dict]:
    """The claim module's constants, then those of the ``theorems`` fixture modules it imports (its set-ups)."""
    from verify.registry import import_closure

    root = Path(importlib.import_module("theorems").__file__).parent.parent
    fixtures = []
    for f in import_closure(claim.module, root):
        rel = f.relative_to(root).with_suffix("")
        name = ".".join(rel.parts)
        if name.startswith("theorems.paper_") and name != claim.module and rel.parts[-1] != "__init__":
            fixtures.append(name)
    out = module_constants(claim.module)
    for name in sorted(fixtures):
        out += module_constants(name)
    return out
