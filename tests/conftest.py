import os

import pytest
import torch

# Small tensor ops are slower with intra-op threads fighting over 2 cores; checks are batched anyway.
torch.set_num_threads(int(os.environ.get("VERIFY_TORCH_THREADS", "1")))


@pytest.fixture
def gen():
    return torch.Generator().manual_seed(1234)
