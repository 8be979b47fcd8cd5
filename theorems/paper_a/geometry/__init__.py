r"""Paper A's geometry of the loss near the manifold of minima Mfold, and what its claims share.

* ``constants``: the derived one-point constants ``alpha(D)``, ``beta(D)``, the radius ``rho`` and A.L3's
  ``rho'``, ``e_0`` (also read by A.L3, A.L4 and A.T2, outside this package).
* ``instances``: the numeric checks' shapes and scales, and the probe strategy over spectra and points near Mfold.

Claims: A.T1.2 (the minimizers form Mfold), A.T1.3 (one-point strong convexity and smoothness), A.L1 (the
projection onto Mfold), A.L2 (descent near Mfold) and A.L7 (integrability of the Gaussian exponential moments on the
``rho``-tube).  No claim module imports another.
"""
