r"""Paper B's vision figures (B.Fig5, B.Fig6, B.Fig7) on a scaled-down analog (8x8 digits, a small ViT), and what they
share.

* ``setups``: the ViT runs (a fixture per data set, horizon and cap), the optimizers as the paper defines them, their
  tuned step sizes, and the run choices (``cap_choice``, ``epochs_choice``).
* ``metrics``: how the runs are read (speed metrics, the paper's readings at matched epochs) and the analysis
  choices (``slower_choice``, ``metric_choice``), and the figures.

No claim module imports another.
"""
