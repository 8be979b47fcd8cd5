r"""Paper B's fixed-head claims (Sections 3 and Appendix C: the head u fixed, W trained), and what they share.

Shared modules, each importing only those above it:

* ``assumptions``: Lemma 2's init scale and Assumptions 1 and 2, defined once; ``correlation_bound``: B.L4's lower
  bound on the gradient's correlation with W_mm; ``lemma_probes``: what the probes of B.L2-B.L5 share.
* ``example1_suite``: the paper's Example 1 as a suite of runs (outside our Ass 1); ``bank``: the every-step set-ups
  (Example-1 instances, the trajectory bank, Appendix C.1's bad-direction problem).
* ``inscope``: the family of runs inside the claims' assumptions as we reconstruct them, and each run's scope.
* ``rates``: the rate rules (late windows, B.T1's envelope, B.L1's saturation slope); ``phase_probe``: the probe of
  the rate claims, each run decided on a window in its own asymptotic phase.
* ``choices``: the free choices the rate claims share (step, horizon, n, the phase rule's norm factor).

Claims: the rates (B.T1, B.T6, B.T7, B.L1, B.Fig2), the lemmas (B.L2-B.L7, B.E5 in ``l4_gradient_correlation``), the
bad-direction start (B.C1, B.Fig8) and the digits (B.Fig9).  No claim module imports another.
"""
