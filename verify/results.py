"""One versioned JSON record per claim and run, written atomically.

The record holds everything needed to read and replay a verdict: claim identity and
fidelity, verdict and reason, each check's and control's outcome (measurements with
intervals, figures as SVG, derivation steps), seed, budget, device, library versions
and the claim code's content hash.  Wall-clock fields (``timing``, ``created_utc``)
are the only parts that differ between two runs with the same seed on the same
machine; :func:`replay_view` strips them for comparisons.
"""
from __future__ import annotations

import contextlib
import functools
import hashlib
import json
import os
import platform
import re
import tempfile
from dataclasses import asdict
from datetime import datetime, timezone
from importlib import metadata
from pathlib import Path

SCHEMA_VERSION = 2  # 2: claim.findings and claim.preregistered
VOLATILE = ("timing", "created_utc")


def library_versions() -> dict[str, str]:
    """The versions every record carries (and the unit directories are keyed by)."""
    return dict(_library_versions())


@functools.cache
def _library_versions() -> dict[str, str]:  # read once per process: package metadata is slow to parse
    out = {"python": platform.python_version()}
    for pkg in ("attention-verify", "torch", "numpy", "scipy", "sympy", "hypothesis", "jinja2", "matplotlib"):
        try:
            out[pkg] = metadata.version(pkg)
        except metadata.PackageNotFoundError:
            out[pkg] = "absent"
    return out


def outcome_dict(name: str, kind: str, outcome, extra: dict | None = None) -> dict:
    d = {"name": name, "kind": kind, "status": outcome.status, "summary": outcome.summary,
         "measurements": [m.as_dict() for m in outcome.measurements],
         "figures": [asdict(f) for f in outcome.figures],
         "steps": [asdict(s) for s in outcome.steps],
         "details": outcome.details, "headline": getattr(outcome, "headline", "")}
    return d | (extra or {})


def stable_repr(value) -> str:
    """``repr`` without memory addresses (``<function f at 0x7f...>`` -> ``<function f>``): the same on every run and
    in every process, so a record replays."""
    return re.sub(r" at 0x[0-9a-fA-F]+", "", repr(value))


def now_utc() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="seconds")


@contextlib.contextmanager
def atomic_file(path: Path, mode: str = "w"):
    """A file to write ``path`` through: a temporary file in the same directory, ``os.replace``d onto ``path`` when
    the block ends (atomic on POSIX: a reader sees the whole file or the old one); removed if the block raises."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, mode, **({} if "b" in mode else {"encoding": "utf-8"})) as f:
            yield f
            f.flush()
            os.fsync(f.fileno())
        os.chmod(tmp, 0o644)  # mkstemp creates 0600; results and reports are meant to be shared
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


def atomic_write_text(path: Path, text: str) -> None:
    """Write ``text`` to ``path`` atomically (:func:`atomic_file`)."""
    with atomic_file(path) as f:
        f.write(text)


def record_path(results_dir: Path, claim_id: str) -> Path:
    return Path(results_dir) / f"{claim_id}.json"


def write_record(results_dir: Path, record: dict) -> Path:
    path = record_path(results_dir, record["claim"]["id"])
    atomic_write_text(path, json.dumps(record, indent=1, sort_keys=True, default=float))
    return path


def read_records(results_dir: Path) -> list[dict]:
    out = []
    for p in sorted(Path(results_dir).glob("*.json")):
        try:
            rec = json.loads(p.read_text())
        except json.JSONDecodeError as e:
            raise ValueError(f"corrupt results file {p}: {e}") from None
        # other JSON may share the directory (a map or a calibration summary copied beside the records): a record
        # is an object naming its claim
        if isinstance(rec, dict) and rec.get("schema_version") == SCHEMA_VERSION and isinstance(rec.get("claim"), dict):
            out.append(rec)
    return out


def replay_view(record: dict) -> dict:
    """The record without wall-clock fields: equal for equal seeds on the same machine."""
    r = {k: v for k, v in record.items() if k not in VOLATILE}
    return r


# ---------------------------------------------------------------------------
# Finished units (resume)
# ---------------------------------------------------------------------------

UNITS = "units"
#: the environment variable naming a hypothesis example database shared across runs (``theorems.probe``): only
#: ``verify probe`` keeps it; the commands that produce verdicts drop it (``verify.cli``), since a probe replaying
#: other runs' counterexamples makes its record depend on what ran before it
SHARED_EXAMPLES = "VERIFY_HYPOTHESIS_DB"


def _environment_key() -> str:
    """A short digest of what else a unit's outcome may depend on: library versions and the Python."""
    return hashlib.sha256(json.dumps(library_versions(), sort_keys=True).encode()).hexdigest()[:8]


def unit_dir(results_dir: Path, claim, ctx) -> Path:
    """Where a claim's finished units of one run are kept (resume): the code hash and the library versions in the
    name, so changed code or libraries never reuse a unit."""
    from verify.registry import code_hash as _code_hash

    code_hash = _code_hash(claim)
    examples = "" if ctx.max_examples is None else f"-examples{ctx.max_examples}"
    if ctx.budget != "quick" and os.environ.get(SHARED_EXAMPLES):
        examples += "-shared-examples"  # replays of other runs' counterexamples: never reused by a verdict's run
    return (Path(results_dir) / UNITS / claim.id /
            f"{ctx.budget}-seed{ctx.seed}{examples}-{ctx.device}-{code_hash}-{_environment_key()}")


def unit_path(directory: Path, unit) -> Path:
    slug = re.sub(r"[^A-Za-z0-9]+", "-", unit.name).strip("-")[:40]
    digest = hashlib.sha256(unit.name.encode()).hexdigest()[:8]
    return directory / f"{unit.kind}-{slug}-{digest}.json"


def load_unit(path: Path) -> dict | None:
    try:
        return json.loads(path.read_text())
    except (OSError, json.JSONDecodeError):  # absent, or cut short by a crash before the atomic rename: redo it
        return None


def save_unit(path: Path, entry: dict) -> None:
    atomic_write_text(path, json.dumps(entry, sort_keys=True, default=float))
