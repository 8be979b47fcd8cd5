import os
import secrets

import pytest
import torch

from verify import memory_tuning
from verify.results import SHARED_EXAMPLES

# Small tensor ops are slower with intra-op threads fighting over 2 cores; checks are batched anyway.
torch.set_num_threads(int(os.environ.get("VERIFY_TORCH_THREADS", "1")))
# the opt-in memory tuning (VERIFY_TUNE_MEMORY), as `verify` and its workers apply it
memory_tuning.tune_process()
# the claims' records here are verdicts, whose probes keep their example databases to themselves (theorems.probe), as
# under every verify command but `verify probe`: a VERIFY_HYPOTHESIS_DB exported for that tool must not reach them
os.environ.pop(SHARED_EXAMPLES, None)

#: Seeds 0-4 chose sizes and thresholds and 100-139 are calibration seeds (README): a fresh test seed is drawn
#: above them, so a run of the tests is one more independent draw of every quick-tier verdict.
FRESH_SEEDS = (1_000, 1_000_000)


def pytest_configure(config):
    """The claims' test seed: ``VERIFY_TEST_SEED`` if set, else a fresh one, chosen once in the controlling process
    and put in the environment, so pytest-xdist's workers (started after this) all use the same seed."""
    if hasattr(config, "workerinput"):  # an xdist worker: the controller has set it
        return
    raw = os.environ.get("VERIFY_TEST_SEED", "").strip()
    if raw and not raw.isdigit():
        raise pytest.UsageError(f"VERIFY_TEST_SEED must be a non-negative integer, not {raw!r}")
    if not raw:
        lo, hi = FRESH_SEEDS
        os.environ["VERIFY_TEST_SEED"] = str(lo + secrets.randbelow(hi - lo))


def pytest_report_header(config):
    seed = os.environ["VERIFY_TEST_SEED"]
    return f"claims tested at seed {seed} (replay: VERIFY_TEST_SEED={seed} ./suite test)"


@pytest.fixture
def gen():
    return torch.Generator().manual_seed(1234)
