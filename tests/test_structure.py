"""The tree's structure: claims import no other claim; a record goes stale exactly when code it depends on changes.

The code hash of a claim covers its module and the transitive closure of the project modules it imports
(``verify.registry.import_closure``, from the import statements).  The staleness test edits one module in a
scratch copy of the tree and checks that exactly the claims that import it, directly or through other modules,
get a new hash: found here independently, by reading the import lines as text.
"""
import ast
import functools
import re
import shutil
from pathlib import Path

import pytest

from verify import registry

ROOT = Path(__file__).resolve().parent.parent
CLAIM_RE = re.compile(r"^CLAIMS?\s*=", re.M)


def _modules(root: Path) -> dict[str, Path]:
    out = {}
    for pkg in ("theorems", "numerics"):
        for f in (root / pkg).rglob("*.py"):
            parts = f.relative_to(root).with_suffix("").parts
            out[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = f
    return out


def _claim_modules(root: Path) -> dict[str, Path]:
    return {n: f for n, f in _modules(root).items() if CLAIM_RE.search(f.read_text())}


def _direct_imports(name: str, f: Path, known: set[str]) -> set[str]:
    """Project modules that ``f`` imports (absolute or relative), by the import statements."""
    return set(_parse_direct_imports(name, f.name == "__init__.py", f.read_text(), frozenset(known)))


@functools.cache  # by content: every test's scratch tree is a copy, and only its edited file differs
def _parse_direct_imports(name: str, is_pkg: bool, source: str, known: frozenset[str]) -> frozenset[str]:
    out = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            cands = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                pkg = name.split(".")[: len(name.split(".")) - node.level + is_pkg]
                base = ".".join(pkg + ([node.module] if node.module else []))
            cands = [base] + [f"{base}.{a.name}" for a in node.names]
        else:
            continue
        out |= {c for c in cands if c in known}
    return frozenset(out)


def test_no_claim_module_imports_another_claim_module():
    claims = _claim_modules(ROOT)
    known = set(_modules(ROOT))
    bad = [f"{n} imports {m}" for n, f in claims.items()
           for m in _direct_imports(n, f, known) if m in claims and m != n]
    assert not bad, "shared set-ups belong in fixture modules:\n" + "\n".join(sorted(bad))


def _import_graph(root: Path) -> dict[str, set[str]]:
    """Each module of theorems/ and numerics/ -> the project modules its import statements name (inside functions
    too)."""
    mods = _modules(root)
    known = set(mods)
    return {n: _direct_imports(n, f, known) - {n} for n, f in mods.items()}


def _circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan): each holds at least one circle."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    out: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        for w in graph[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while not comp or comp[-1] != v:
                comp.append(stack.pop())
            if len(comp) > 1:
                out.append(sorted(comp))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return out


def test_no_import_circles():
    """No module reaches, through its imports (inside functions included), a module that imports it: the modules
    stack in floors and every arrow points down (a circle is the only way an arrow can point up)."""
    circles = _circles(_import_graph(ROOT))
    assert not circles, "import circles:\n" + "\n".join(" <-> ".join(c) for c in circles)


def test_lower_floors_import_nothing_above_them():
    """numerics/ imports nothing of theorems/; the core modules theorems/*.py import no paper's module; neither
    paper's modules import the other's."""
    def floor(n: str) -> str:
        parts = n.split(".")
        return parts[0] if parts[0] == "numerics" or len(parts) < 2 or not parts[1].startswith("paper_") else parts[1]

    allowed = {"numerics": {"numerics"}, "theorems": {"numerics", "theorems"},
               "paper_a": {"numerics", "theorems", "paper_a"}, "paper_b": {"numerics", "theorems", "paper_b"}}
    bad = [f"{n} imports {m}" for n, deps in _import_graph(ROOT).items() for m in deps
           if floor(m) not in allowed[floor(n)]]
    assert not bad, "\n".join(sorted(bad))


def _dependents(root: Path, edited: str) -> set[str]:
    """Claim modules whose imports reach ``edited`` (reverse closure over the direct-import graph)."""
    mods = _modules(root)
    known = set(mods)
    graph = {n: _direct_imports(n, f, known) for n, f in mods.items()}
    # importing a.b.c runs a/__init__ and a/b/__init__ too
    for n in list(graph):
        parts = n.split(".")
        graph[n] |= {".".join(parts[:i]) for i in range(1, len(parts))} & known
    reach = {edited}
    changed = True
    while changed:
        changed = False
        for n, deps in graph.items():
            if n not in reach and deps & reach:
                reach.add(n)
                changed = True
    return reach & set(_claim_modules(root))


def _hashes(root: Path) -> dict[str, str]:
    return {c.module: registry.code_hash(c, root) for c in registry.all_claims()}


def _scratch_tree(tmp_path: Path) -> Path:
    for pkg in ("theorems", "numerics"):
        shutil.copytree(ROOT / pkg, tmp_path / pkg, ignore=shutil.ignore_patterns("__pycache__"))
    return tmp_path


def _editable_modules():
    """Every non-claim module of theorems/ (the fixtures and support code) and two numerics modules."""
    claims = set(_claim_modules(ROOT))
    out = sorted(n for n in _modules(ROOT) if n.startswith("theorems") and n not in claims and n != "theorems")
    return out + ["numerics.paper_a.geometry", "numerics.paper_b.model"]


@pytest.mark.parametrize("edited", _editable_modules())
def test_editing_a_module_makes_exactly_its_dependents_stale(tmp_path, edited):
    root = _scratch_tree(tmp_path)
    before = _hashes(root)
    f = _modules(root)[edited]
    f.write_text(f.read_text() + "\n# edited by test_structure\n")
    after = _hashes(root)
    stale = {m for m in before if before[m] != after[m]}
    assert stale == _dependents(root, edited)


def test_editing_a_claim_module_makes_only_that_claim_stale(tmp_path):
    root = _scratch_tree(tmp_path)
    before = _hashes(root)
    target = registry.get("A.L5").module
    f = _modules(root)[target]
    f.write_text(f.read_text() + "\n# edited\n")
    after = _hashes(root)
    assert {m for m in before if before[m] != after[m]} == {target}


def test_hash_ignores_modules_outside_the_closure(tmp_path):
    root = _scratch_tree(tmp_path)
    before = _hashes(root)
    (root / "numerics" / "unrelated_scratch.py").write_text("X = 1\n")
    assert _hashes(root) == before


#: pyflakes' checks (run by ruff) for code that does not do what it reads as: a name redefined before its first use
#: (F811: an import shadowed by another of the same name), undefined names (F821, F822, F823), an import shadowed by a
#: loop variable (F402), identity comparisons with literals (F632); and unused imports and variables (F401, F841): an
#: unused import widens a claim's import closure, hence its code hash, so edits to a module it never uses would make
#: its published measurements stale; an unused variable is often a value the code meant to use.
NAME_SLIPS = "F811,F821,F822,F823,F402,F632,F401,F841"


def test_no_name_is_shadowed_or_undefined():
    """A probe once raised at every seed because ``scipy.stats.norm`` was shadowed by a display helper of the same
    name imported after it (its claim's measured seed dependence absorbed the outcome): such slips fail here."""
    import subprocess
    import sys

    ruff = shutil.which("ruff", path=str(Path(sys.executable).parent)) or shutil.which("ruff")
    if ruff is None:
        pytest.skip("ruff is not installed (./suite test installs it with the test extras)")
    root = Path(__file__).resolve().parent.parent
    out = subprocess.run([ruff, "check", "--no-cache", "--select", NAME_SLIPS, "--output-format", "concise",
                          "verify", "theorems", "numerics", "benchmarks", "tests"], cwd=root, capture_output=True,
                         text=True, timeout=120)
    assert out.returncode == 0, out.stdout + out.stderr
