"""Paper A's figures: a diverged draw (inf or overflowing loss) is drawn, not raised on; the shared runs are one
fixture value whose methods the checks and controls pick by object."""
import pickle

import numpy as np
import torch

from theorems.paper_a.figure_decisions import PLOT_CEILING, loss_curves
from theorems.paper_a.figure_setups import L_STAR
from theorems.plots import to_svg


def test_loss_curves_draw_a_diverged_draw():
    # quick seed 116: one of the first four random-init runs of Algorithm 1 diverged, and the log axis's tick
    # formatter raised OverflowError on its infinite limit, so A.Fig2 came back inconclusive
    # (its loss as recorded: 3e2 ... 1.6e288, then nan; the log axis's ticks overflowed at 1e289 × L*)
    diverged = [3.3e2, 1.2e3, 1.0e3, 2.1e3, 7.4e4, 1.1e7, 6.7e14, 9.1e35, 1.8e99, 1.57e288, float("nan")]
    steps = np.arange(len(diverged))
    first = torch.full((len(steps), 4), 2 * L_STAR, dtype=torch.float64)
    first[:, 3] = torch.tensor(diverged)
    second = torch.full((len(steps), 4), 3 * L_STAR, dtype=torch.float64)
    svg = to_svg(loss_curves(steps, first, second, ("a", "b"), "diverged draw"))
    assert svg.startswith("<svg")
    assert PLOT_CEILING < 1e7  # the diverged values are outside the plotted range


def test_the_runs_are_keyed_by_method_and_spectral_init_objects_that_survive_shipping():
    # Dask ships the fixture's value between workers by pickle: its keys must find the same entries afterwards
    from theorems.paper_a.figure_setups import ALG1_RANDOM, METHODS, SGD, SPECTRAL_INITS

    runs = {"L": {m: i for i, m in enumerate(METHODS)}, "L0": {f: i for i, f in enumerate(SPECTRAL_INITS)}}
    back = pickle.loads(pickle.dumps(runs))
    assert back["L"][SGD] == 1 and back["L"][ALG1_RANDOM] == 2
    assert [back["L0"][f] for f in SPECTRAL_INITS] == [0, 1]
