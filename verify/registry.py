"""Find every claim: each module under ``theorems/`` that defines ``CLAIM`` or ``CLAIMS``."""
from __future__ import annotations

import fnmatch
import functools
import hashlib
import importlib
import pkgutil
import re
from pathlib import Path

import theorems
from theorems.claim import Claim


class UnknownClaimError(LookupError):
    pass


def _natural_key(claim: Claim):
    return [int(p) if p.isdigit() else p for p in re.split(r"(\d+)", claim.id)]


@functools.cache
def all_claims() -> tuple[Claim, ...]:
    found: dict[str, Claim] = {}
    for info in pkgutil.walk_packages(theorems.__path__, prefix="theorems."):
        mod = importlib.import_module(info.name)
        claims = list(getattr(mod, "CLAIMS", ())) + ([mod.CLAIM] if hasattr(mod, "CLAIM") else [])
        for c in claims:
            if c.id in found:
                raise ValueError(f"claim id {c.id} defined twice ({found[c.id].module} and {info.name})")
            object.__setattr__(c, "module", info.name)
            found[c.id] = c
    return tuple(sorted(found.values(), key=_natural_key))


def get(claim_id: str) -> Claim:
    for c in all_claims():
        if c.id.lower() == claim_id.lower():
            return c
    known = ", ".join(c.id for c in all_claims())
    raise UnknownClaimError(f"unknown claim id {claim_id!r} (known: {known})")


def select(pattern: str | None) -> list[Claim]:
    """Claims whose id or title matches ``pattern`` (substring or shell glob, case-insensitive)."""
    claims = list(all_claims())
    if not pattern:
        return claims
    p = pattern.lower()
    hit = [c for c in claims if p in c.id.lower() or p in c.title.lower()
           or fnmatch.fnmatch(c.id.lower(), p)]
    if not hit:
        raise UnknownClaimError(f"no claim matches {pattern!r} (known: {', '.join(c.id for c in claims)})")
    return hit


_SUPPORT = ("claim.py", "probe.py", "symbolic.py", "plots.py")


@functools.cache
def _shared_code_digest() -> bytes:
    """Digest of the code every claim depends on (theorems' support modules, numerics/), read once per process."""
    root = Path(theorems.__file__).parent
    h = hashlib.sha256()
    for f in [root / f for f in _SUPPORT] + sorted((root.parent / "numerics").rglob("*.py")):
        h.update(f.read_bytes())
    return h.digest()


def code_hash(claim: Claim) -> str:
    """Content hash of what decides the claim's result: its module, theorems' support code, numerics/."""
    h = hashlib.sha256(Path(importlib.import_module(claim.module).__file__).read_bytes())
    h.update(_shared_code_digest())
    return h.hexdigest()[:16]
