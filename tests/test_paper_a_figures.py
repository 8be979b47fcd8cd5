"""Paper A's figure plots: a diverged draw (inf or overflowing loss) is drawn, not raised on."""
import numpy as np
import torch

from theorems.paper_a.figure_fixtures import L_STAR, PLOT_CEILING, loss_curves
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
