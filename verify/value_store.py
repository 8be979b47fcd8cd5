"""Fixture values kept on disk between the two phases of a sensitivity map.

Why: a map (``verify.sensitivity``) runs in two phases, the settings of its design and then the controls at the
extreme settings that verify, and a control at a setting consumes the same fixture values as the setting's checks
(the vision runs of a setting, a joint run at d = 256: minutes each).  Fixture values live only within one execution
(``verify.execution``), so without a store the second phase trains them again.  The store keeps, in the results
directory, only the values the second phase may need (``keep``: the fixtures of the control units at every extreme
setting), written by whichever process computed them, and read back instead of recomputed.  A map interrupted between
the phases resumes with them too.  The map deletes its store when it finishes.

A value is keyed by its run key (the fixture, its parameters, its dependencies' keys, the seed, budget and device), the
content hash of its fixture's module and the project modules it imports (``registry``'s code hash), and the torch
version: a changed fixture, or a different torch, never reads a stored value.
"""
from __future__ import annotations

import hashlib
import pickle
import shutil
from pathlib import Path
from typing import Any, Iterable

from theorems import fixture as fx
from theorems.claim import Context
from verify import registry, results

MISSING = object()


class ValueStore:
    """Fixture values on disk under ``directory``, one file each; only the run keys in ``keep`` are stored."""

    def __init__(self, directory: Path, keep: Iterable[tuple]):
        self.directory = Path(directory)
        self.keep = set(keep)
        self._module_hashes: dict[str, str] = {}

    def path(self, r: fx.Request, ctx: Context) -> Path | None:
        """Where the value of ``r`` in the run ``ctx`` is kept, or None when it is not one to keep."""
        key = fx.run_key(r, ctx)
        if key not in self.keep:
            return None
        import torch

        module = r.fixture.fn.__module__
        if module not in self._module_hashes:
            self._module_hashes[module] = registry.modules_code_hash({module})
        digest = hashlib.sha256(repr((key, self._module_hashes[module], torch.__version__)).encode()).hexdigest()
        return self.directory / f"{r.fixture.short_name}-{digest[:20]}.pickle"

    def clear(self) -> None:
        shutil.rmtree(self.directory, ignore_errors=True)


def load(path: Path | None) -> Any:
    """The value kept at ``path``, or ``MISSING`` (no path, no file, or a file that cannot be read: it is removed, so
    the value is computed again)."""
    if path is None or not path.exists():
        return MISSING
    try:
        with open(path, "rb") as f:
            return pickle.load(f)
    except Exception:  # noqa: BLE001 -- a value that cannot be read is computed again, never trusted
        path.unlink(missing_ok=True)
        return MISSING


def save(path: Path | None, value: Any) -> None:
    """Keep ``value`` at ``path`` (atomically: a reader sees the whole file or none).  A failure to compute is never
    kept (it is retried), and a value that cannot be pickled or written is simply not kept."""
    if path is None or isinstance(value, fx.FixtureFailure):
        return
    try:
        with results.atomic_file(path, "wb") as f:
            pickle.dump(value, f, protocol=pickle.HIGHEST_PROTOCOL)
    except Exception:  # noqa: BLE001 -- keeping a value is an optimisation; the run goes on without it
        pass


class StoredMemo(fx.Memo):
    """A run's fixture values in one process (``theorems.fixture.Memo``), read from ``store`` when kept there and
    written to it when computed."""

    def __init__(self, ctx: Context, store: ValueStore):
        super().__init__(ctx)
        self.store = store

    def value(self, r: fx.Request) -> Any:
        k = self._key(r)
        if k not in self._values:
            path = self.store.path(r, self.ctx)
            got = load(path)
            if got is not MISSING:
                self._values[k] = got
                self.release(r.dependencies().values())  # this value's own computation no longer consumes them
            else:
                try:
                    return super().value(r)
                finally:
                    save(path, self._values.get(k))
        return super().value(r)
