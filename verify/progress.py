"""Progress over units while a command runs: tqdm's bar on a terminal, a line at most once a minute into a log."""
from __future__ import annotations

import sys
import time

#: how often a run whose stderr is not a terminal (a background calibration's log) says how far it is, in seconds
LOG_PROGRESS_EVERY = 60.0


class LogProgress:
    """Progress for a log (stderr not a terminal), where tqdm's in-place bar would be carriage returns: one line at
    most every ``every`` seconds and one at the end, ``<desc>: k of N units, <elapsed>[, running units]``."""

    def __init__(self, total: int, desc: str, every: float = LOG_PROGRESS_EVERY, file=None):
        self.total, self.desc, self.every, self.file = total, desc, every, file or sys.stderr
        self.n, self.postfix, self.start = 0, "", time.monotonic()
        self.last = self.start
        self.leave = True  # as tqdm's: False (an interrupted run) closes without the last line

    def _line(self) -> None:
        minutes, seconds = divmod(int(time.monotonic() - self.start), 60)
        running = f", {self.postfix}" if self.postfix and self.n < self.total else ""
        print(f"{self.desc}: {self.n} of {self.total} units, {minutes}:{seconds:02d} elapsed{running}", file=self.file,
              flush=True)
        self.last = time.monotonic()

    def update(self, n: int = 1) -> None:
        self.n += n
        if time.monotonic() - self.last >= self.every:
            self._line()

    def set_postfix_str(self, s: str) -> None:
        self.postfix = s

    def close(self) -> None:
        if self.leave:
            self._line()


def progress_bar(total: int, desc: str):
    """Progress over units, naming the claims still running: tqdm's bar, redrawn in place, on a terminal; a
    :class:`LogProgress` line (as units finish, at most one a minute) into a log, so an hours-long calibration or map
    run in the background says how far it is."""
    from tqdm import tqdm

    if not total:
        return tqdm(total=0, disable=True)
    if getattr(sys.stderr, "isatty", lambda: False)():
        return tqdm(total=total, desc=desc, unit="unit", file=sys.stderr, dynamic_ncols=True)
    return LogProgress(total, desc)
