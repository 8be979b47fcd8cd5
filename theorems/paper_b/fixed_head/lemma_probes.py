r"""What the probes of B.L2-B.L5 share: their settings, the probe datasets and the W-SVM problem of an instance.
Defines no claim.

A probe instance is a dict of plain numbers drawn by hypothesis; its dataset is built from them
(:func:`probe_dataset`).  What a conclusion computes on the way (nu, whether the W-SVM is feasible) it returns as
facts (``theorems.probe``, "Facts"), which the assumptions, parameters and descriptions read; the keys are the ones the
records show.
"""
from __future__ import annotations

from numerics.paper_b import data, runs, svm

#: examples at quick / standard / full (each runs a 30-step training on a small instance, ~0.05 s): 40 at quick put
#: 10-25 instances inside the assumptions of B.L3-B.L5 (each probe declares its own minimum of decided instances)
PROBE_EXAMPLES = (40, 120, 300)


def describe(inst: dict, facts: dict) -> dict:
    """The instance's numbers and the facts its conclusion computed (the record of a cell's example)."""
    return dict(inst) | facts


#: the settings these probes share (``theorems.probe.probe_check`` parameters): an instance is described by its
#: plain numbers and the conclusion's facts; the cells' minimal examples are shrunk beyond the quick (CI) profile
PROBE = dict(examples=PROBE_EXAMPLES, describe=describe)


def probe_dataset(inst: dict):
    """The probe instance's dataset: exactly orthogonal tokens perturbed by ``rho``, or Example 1 at dimension ``d``.

    The dataset keeps a seed (``inst["seed"]``): its n T tokens in up to 40 dimensions are too many numbers to draw
    through hypothesis; the sizes, scores, perturbation and scales around it are hypothesis primitives and shrink."""
    if inst["kind"] == "orthogonal":
        return runs.orthogonal_tokens(inst["n"], inst["T"], rho=inst["rho"], spread=inst["spread"], seed=inst["seed"])
    return data.example1(n=inst["n"], T=inst["T"], d=inst["d"], spread=inst["spread"], seed=inst["seed"])


def probe_problem(inst: dict):
    """(dataset, W-SVM result or None when the W-SVM is infeasible, facts ``{"_nu": ν, "feasible": bool}``)."""
    ds = probe_dataset(inst)
    facts = {"_nu": float(data.assumptions(ds)["nu"])}
    try:
        r = svm.w_svm(ds)
    except svm.SVMInfeasible:
        return ds, None, facts | {"feasible": False}
    return ds, r, facts | {"feasible": True}


def svm_probe_assumptions(inst: dict, facts: dict) -> dict:
    """Ass 2 (exactly equal non-opt scores) and W-SVM feasibility of a ``probe_problem`` instance."""
    return {"Ass 2 (equal non-opt scores)": inst["spread"] == 0.0, "W-SVM feasible": facts.get("feasible", True)}
