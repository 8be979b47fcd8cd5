r"""Paper A's finite-n bias of the leave-one-out softmax estimators, and what its claims share.

The empirical loss and its gradient differ from the population ones by ``c/n + O(n^-2)``; the claims here derive
the coefficients and test them by Monte Carlo, on one instance family and one set of decision rules.

* ``coefficients``: the derived coefficients (the loss's n-law ``c(theta)``, its gradient, the regularizer's
  Isserlis coefficient, the tilted limits of the softmax-weighted sums, exact Gaussian expectations).
* ``decisions``: the decision rules and figures shared by every claim here (rates, coefficients, limits).
* ``gradient_setups``: the gradient claims' instance and Monte Carlo batches, and their free choices of the instance
  (``instance_choices``) and scope filter (``SCALE_SCOPE``), declared once.
* ``row_setups``: the softmax-row lemmas' instance and rows, and their free choices of the instance
  (``instance_choices``), declared once.

Claims: A.T1.1 (the population loss and its n-law), A.T3-A.T5 (the gradient's bias), A.L9 and the technical lemmas
A.L10-A.L23 (the softmax rows' moments and Poincaré bounds).  No claim module imports another.
"""
