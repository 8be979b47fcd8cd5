"""Paper B numerics (Vasudeva, Deora, Thrampoulidis): softmax attention with a linear head.

    model       f(X) = u^T X^T softmax(X W x_1); log-domain losses and gradient directions
    algorithms  GD, NGD, Polyak, NGD+momentum, joint (u, W) training on numerics.optim; train()
    svm         W-SVM and u-SVM (cvxpy + Clarabel) with KKT certificates
    data        Example 1, DM, two-token example, C.1 bad init, binary digit patches; assumptions()
    records     the one recorder: named per-run metrics read off each step's log-domain evaluation
    runs        fixed-head runs recorded at every step, initializations, token geometry
    joint       joint (u, W) training on DM: set-ups, runs, max-margin solutions, Hessian and segment estimates
    two_token   the two-token example's closed forms (GD and NGD)

Submodules are not imported here (svm pulls in cvxpy, data.digits scikit-learn).
"""
