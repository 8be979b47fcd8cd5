r"""Paper B's joint-training claims (Section 4: W and the head u trained together by updates (10)), and what they
share.

* ``assumptions``: Condition 1 as we instantiate it (DM sizes, Lemma 9's level nu_0).
* ``setups``: DM batches, runs of (10) and its mutants, and the free choices the claims share (``joint_choices``,
  ``opt_ratio_choice``; ``at_choices`` gives a run at other values of them).
* ``rates``: the exponent estimator over a late window.
* ``probing``: the probe engine of the claims (instances over the data model's and the training's parameters,
  Condition 1 on each, one run into its own phase per instance).

Claims: B.L9 (DM near-orthogonality), B.L10-B.L13, B.T2-B.T4 and B.Fig3.  No claim module imports another.
"""
