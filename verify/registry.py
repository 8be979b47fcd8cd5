"""Find every claim: each module under ``theorems/`` that defines ``CLAIM`` or ``CLAIMS``."""
from __future__ import annotations

import ast
import fnmatch
import functools
import hashlib
import importlib
import pkgutil
import tomllib
import re
from collections.abc import Sequence
from pathlib import Path

import theorems
from theorems import fixture
from theorems.claim import Claim


class UnknownClaimError(LookupError):
    pass


def _natural_key(claim: Claim):
    return [int(p) if p.isdigit() else p for p in re.split(r"(\d+)", claim.id)]


#: the equality rules of ``numerics.stats`` and the evidence method that calls one: each call must pass ``margin=``
EQUALITY_CALLS = frozenset({"decide_interval", "decide_equal", "decide_close", "decide_exponent", "exponent"})


def equality_calls_without_margin(source: str, filename: str) -> list[str]:
    """``file:line: rule`` for every call of an equality rule that passes no ``margin=`` (or still passes the retired
    ``max_width=`` / ``resolution=``): refused when the claims are imported, before any data is drawn."""
    bad = []
    for node in ast.walk(ast.parse(source, filename)):
        if not isinstance(node, ast.Call):
            continue
        f = node.func
        name = f.id if isinstance(f, ast.Name) else f.attr if isinstance(f, ast.Attribute) else None
        if name not in EQUALITY_CALLS or (name == "exponent" and not isinstance(f, ast.Attribute)):
            continue
        kws = {k.arg for k in node.keywords}
        if name == "exponent" and "target" not in kws:  # some other object's .exponent(), not Evidence's
            continue
        if None in kws:  # **kwargs: the margin may be inside; the rule refuses a missing one when it runs
            continue
        if "margin" not in kws or kws & {"max_width", "resolution"}:
            bad.append(f"{filename}:{node.lineno}: {name}(...) without a margin (a numerics.stats.Margin naming the "
                       "alternative it excludes)")
    return bad


def _refuse_undeclared_margins(mod) -> None:
    file = getattr(mod, "__file__", None)
    if file and file.endswith(".py"):
        root = Path(theorems.__file__).parent.parent
        rel = Path(file).relative_to(root) if Path(file).is_relative_to(root) else Path(file)
        bad = equality_calls_without_margin(Path(file).read_text(), str(rel))
        if bad:
            raise ValueError(bad[0] + (f" (and {len(bad) - 1} more)" if len(bad) > 1 else ""))


def _refuse_checks_without_controls(claim: Claim) -> None:
    """A registered claim's every check, of every kind, names a negative control: a check that no mutant is shown to
    fail could not fail.  (``Claim`` itself refuses a numeric check without one; a test's toy claims may leave a
    symbolic check or a probe without.)"""
    if claim.not_checked is None:
        bare = [c for c in claim.checks if not any(k.target == c.name for k in claim.controls)]
        if bare:
            raise ValueError(f"{claim.id}: {bare[0].kind} check {bare[0].name!r} has no negative control")


@functools.cache
def all_claims() -> tuple[Claim, ...]:
    found: dict[str, Claim] = {}
    for info in pkgutil.walk_packages(theorems.__path__, prefix="theorems."):
        mod = importlib.import_module(info.name)
        _refuse_undeclared_margins(mod)
        claims = list(getattr(mod, "CLAIMS", ())) + ([mod.CLAIM] if hasattr(mod, "CLAIM") else [])
        for c in claims:
            if c.id in found:
                raise ValueError(f"claim id {c.id} defined twice ({found[c.id].module} and {info.name})")
            _refuse_checks_without_controls(c)
            object.__setattr__(c, "module", info.name)
            found[c.id] = c
    return tuple(sorted(found.values(), key=_natural_key))


def papers() -> dict[str, dict[str, str]]:
    """Paper letter -> ``{"title": ..., "short": ...}``: the ``title`` (its citation, the report's heading) and
    ``short`` (the claims table's heading) in each package's ``theorems/paper_x/paper.toml``, metadata beside the
    claims that no code hash reads; a package without it gets no title and "Paper X"."""
    out = {}
    for info in pkgutil.iter_modules(theorems.__path__, prefix="theorems."):
        leaf = info.name.rpartition(".")[2]
        if info.ispkg and leaf.startswith("paper_"):
            letter = leaf.removeprefix("paper_").upper()
            f = Path(theorems.__path__[0]) / leaf / "paper.toml"
            data = tomllib.loads(f.read_text()) if f.exists() else {}
            out[letter] = {"title": data.get("title", ""), "short": data.get("short", f"Paper {letter}")}
    return out


_CLAIMS: dict[tuple[str, str], Claim] = {}  # claims by (module, id): a Dask worker imports only the modules it needs


def claim_from_module(module: str, claim_id: str) -> Claim:
    """The claim ``claim_id`` defined in ``module``."""
    key = (module, claim_id)
    if key not in _CLAIMS:
        mod = importlib.import_module(module)
        found = list(getattr(mod, "CLAIMS", ())) + ([mod.CLAIM] if hasattr(mod, "CLAIM") else [])
        claim = next((c for c in found if c.id == claim_id), None)
        if claim is None:
            raise LookupError(f"{module} defines no claim {claim_id} (in CLAIM or CLAIMS)")
        object.__setattr__(claim, "module", module)
        _CLAIMS[key] = claim
    return _CLAIMS[key]


def canonical_id(claim_id: str) -> str:
    """The registered id that ``claim_id`` names (case-insensitive), from the index; ``UnknownClaimError`` if none."""
    return _entry(claim_id)["id"]


def get(claim_id: str) -> Claim:
    """The claim ``claim_id`` (case-insensitive), importing only its module (the :func:`index` finds it)."""
    e = _entry(claim_id)
    return claim_from_module(e["module"], e["id"])


def select(patterns: str | Sequence[str] | None) -> list[Claim]:
    """Claims whose id or title matches any of ``patterns`` (substring or shell glob, case-insensitive).

    One pattern or several (``-k A.T4 -k B.L11``); each must match some claim, so a typo is an
    error rather than a silently smaller run.  A pattern that is a claim's id exactly selects that claim only
    (``-k B.L1`` is B.L1, not also B.L10-B.L13; ``-k 'B.L1*'`` is all five).
    """
    if not patterns:
        return list(all_claims())
    entries = index()  # matched on the index, so only the chosen claims' modules are imported
    chosen = set(select_ids(patterns))
    return [claim_from_module(e["module"], e["id"]) for e in entries if e["id"] in chosen]


def select_ids(patterns: str | Sequence[str]) -> list[str]:
    """The ids :func:`select` chooses, from the :func:`index` alone (no claim module imported): a pattern that
    matches nothing is an error (``UnknownClaimError``)."""
    if isinstance(patterns, str):
        patterns = [patterns]
    entries = index()
    chosen: set[str] = set()
    for pattern in patterns:
        p = pattern.lower()
        hit = ([e["id"] for e in entries if e["id"].lower() == p]
               or [e["id"] for e in entries
                   if p in e["id"].lower() or p in e["title"].lower() or fnmatch.fnmatch(e["id"].lower(), p)])
        if not hit:
            raise UnknownClaimError(f"no claim matches {pattern!r} (known: {', '.join(e['id'] for e in entries)})")
        chosen.update(hit)
    return [e["id"] for e in entries if e["id"] in chosen]


#: the project's own packages: a claim's result depends on the modules of these it imports, transitively
PROJECT_PACKAGES = ("theorems", "numerics")


def _module_file(root: Path, name: str) -> Path | None:
    base = root.joinpath(*name.split("."))
    for f in (base.with_suffix(".py"), base / "__init__.py"):
        if f.is_file():
            return f
    return None


def _imported_names(name: str, file: Path) -> frozenset[str]:
    """Every module name an ``import`` statement in ``file`` may refer to (anywhere in it, functions too)."""
    return _parse_imports(name, file.name == "__init__.py", file.read_bytes())


@functools.cache
def _parse_imports(name: str, is_pkg: bool, source: bytes) -> frozenset[str]:  # each content parsed once per process
    out: set[str] = set()
    for node in ast.walk(ast.parse(source, name)):
        if isinstance(node, ast.Import):
            out.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                parts = name.split(".")
                keep = len(parts) - node.level + (1 if is_pkg else 0)
                base = ".".join(parts[:keep] + ([node.module] if node.module else []))
            else:
                base = node.module or ""
            out.add(base)
            out.update(f"{base}.{a.name}" for a in node.names)  # ``from pkg import module``
    return frozenset(out)


def import_closure(module: str, root: Path | None = None) -> list[Path]:
    """The files of ``module`` and of every project module it imports, transitively, with their packages'
    ``__init__`` files; found from the import statements, not from a list (sorted, each once)."""
    root = Path(theorems.__file__).parent.parent if root is None else root
    seen: dict[str, Path] = {}
    todo = [module]
    while todo:
        name = todo.pop()
        if name in seen or name.split(".")[0] not in PROJECT_PACKAGES:
            continue
        f = _module_file(root, name)
        if f is None:
            continue  # an attribute imported from a module, not a module
        seen[name] = f
        parts = name.split(".")
        todo += [".".join(parts[:i]) for i in range(1, len(parts))]  # importing a.b.c runs a and a.b
        todo += sorted(_imported_names(name, f))
    return sorted(set(seen.values()))


def _file_digest(path: Path) -> bytes:
    st = path.stat()
    return _digest(path, st.st_mtime_ns, st.st_size)


@functools.cache
def _digest(path: Path, mtime_ns: int, size: int) -> bytes:  # each file version read once per process
    return hashlib.sha256(path.read_bytes()).digest()


def claim_requests(claim: Claim) -> list[fixture.Request]:
    """Every fixture the claim's checks and controls receive, and those they are computed from."""
    reqs = [r for c in claim.checks for r in c.requests().values()]
    reqs += [r for k in claim.controls for r in claim.check(k.target).requests(k.overrides).values()]
    return fixture.closure(reqs)


def fixture_modules(claim: Claim) -> set[str]:
    """The modules that define the fixtures the claim uses."""
    return {r.fixture.fn.__module__ for r in claim_requests(claim)}


def code_hash(claim: Claim, root: Path | None = None) -> str:
    """Content hash of the code that decides the claim's result: its module, the modules of the fixtures its checks
    use, and the transitive closure of the project modules these import (:func:`import_closure`)."""
    return modules_code_hash({claim.module} | fixture_modules(claim), root)


def code_hash_by_id(claim_id: str) -> str:
    """:func:`code_hash` of a claim from the :func:`index` (its files, listed there), without importing its module
    or parsing the imports of its code."""
    return _hash_entry(_entry(claim_id))


def code_hashes() -> dict[str, str]:
    """:func:`code_hash_by_id` of every registered claim, from one reading of the index."""
    return {e["id"]: _hash_entry(e) for e in index()}


def _hash_entry(e: dict) -> str:
    root = Path(theorems.__file__).parent.parent
    if "closure" in e:
        return _hash_files([root / p for p in e["closure"]], root)
    return modules_code_hash({e["module"], *e["fixture_modules"]})


def _closure_files(modules: set[str], root: Path) -> list[Path]:
    files = set()
    for module in modules:
        files.update(import_closure(module, root))
    return sorted(files)


def modules_code_hash(modules: set[str], root: Path | None = None) -> str:
    """Content hash of ``modules`` and the project modules they import (:func:`import_closure`): :func:`code_hash`
    for any set of modules (a fixture module's own, for values kept across a map's phases)."""
    root = Path(theorems.__file__).parent.parent if root is None else root
    return _hash_files(_closure_files(modules, root), root)


def _hash_files(files: list[Path], root: Path) -> str:
    h = hashlib.sha256()
    for f in files:
        h.update(f.relative_to(root).as_posix().encode())
        h.update(_file_digest(f))
    return h.hexdigest()[:16]


def sharing_groups(claims) -> dict[str, str]:
    """Claim id -> a group: claims whose checks use a fixture in common (by fixture, at any parameters), transitively.
    Only for placing tests (``tests/test_claims.py``: one pytest worker per group, so each value is computed once
    there); the executors share by the fixtures' run keys, not by groups."""
    return _groups((c.id, sorted({r.fixture.name for r in claim_requests(c)})) for c in claims)


def _groups(uses) -> dict[str, str]:
    """(claim id, the names of the fixtures it uses) pairs -> claim id -> the group of claims joined by a fixture."""
    uses = list(uses)
    parent: dict[str, str] = {}

    def find(m: str) -> str:
        while parent.setdefault(m, m) != m:
            m = parent[m]
        return m

    for cid, names in uses:
        for name in names:
            parent[find(name)] = find(cid)
    return {cid: find(cid) for cid, _ in uses}


# ---------------------------------------------------------------------------
# The index: what listing, selecting and seeding need, without importing every claim module
# ---------------------------------------------------------------------------

#: where the index is kept (derived from the code, git-ignored; rebuilt whenever a file under theorems/ changes)
INDEX_PATH = Path(theorems.__file__).resolve().parent.parent / ".verify-cache" / "index.json"


def _tree_key() -> str:
    """The state of every file the claim modules and the code they import are found in (each directory of the
    ``theorems`` package's search path and the ``numerics`` package: path, modification time, size): a changed, added
    or removed file, or another directory, changes it (the index lists each claim's files, found from the imports)."""
    h = hashlib.sha256()
    numerics_dir = Path(theorems.__file__).resolve().parent.parent / "numerics"
    for root in [*map(Path, theorems.__path__), numerics_dir]:
        h.update(f"{root.resolve()};".encode())
        for f in sorted(root.rglob("*.py")):
            st = f.stat()
            h.update(f"{f.relative_to(root).as_posix()}:{st.st_mtime_ns}:{st.st_size};".encode())
    return h.hexdigest()[:16]


def index() -> list[dict]:
    """Every claim as data (id, module, fidelity, title, evidence kinds, whether it is checked, the fixtures it uses and
    their modules, the files of its code), from ``INDEX_PATH`` while no file under ``theorems/`` or ``numerics/``
    changed, else built by importing every claim module once and stored (atomically)."""
    import json

    key = _tree_key()
    try:
        data = json.loads(INDEX_PATH.read_text())
        if data.get("key") == key:
            return data["claims"]
    except (OSError, ValueError):
        pass
    root = Path(theorems.__file__).parent.parent
    entries = [{"id": c.id, "module": c.module, "fidelity": c.fidelity, "title": c.title,
                "kinds": sorted({ch.kind for ch in c.checks}), "not_checked": c.not_checked,
                "fixtures": sorted({r.fixture.name for r in claim_requests(c)}),
                "fixture_modules": sorted(fixture_modules(c)),
                "closure": [f.relative_to(root).as_posix()
                            for f in _closure_files({c.module} | fixture_modules(c), root)]} for c in all_claims()]
    try:
        from verify.results import atomic_write_text

        atomic_write_text(INDEX_PATH, json.dumps({"key": key, "claims": entries}, indent=1))
    except OSError:  # a read-only checkout: the index is only a cache
        pass
    return entries


def _entry(claim_id: str) -> dict:
    for e in index():
        if e["id"].lower() == claim_id.lower():
            return e
    raise UnknownClaimError(f"unknown claim id {claim_id!r} (known: {', '.join(e['id'] for e in index())})")


def index_groups(extra: Sequence[Claim] = ()) -> dict[str, str]:
    """:func:`sharing_groups` of every registered claim, from the :func:`index` (no claim module imported), and of
    ``extra`` claims the registry does not know (a test's)."""
    return _groups([*((e["id"], e["fixtures"]) for e in index()),
                    *((c.id, sorted({r.fixture.name for r in claim_requests(c)})) for c in extra)])
