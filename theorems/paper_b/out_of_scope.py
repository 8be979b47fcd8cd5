"""Paper B's experiments that cannot be checked here: registered, not checked (none at present).

The language figures B.Fig1, B.Fig4 and B.Fig10 are checked on an analog, or at the paper's scale when
``$VERIFY_DATA_DIR`` holds BERT and the data (``theorems/paper_b/language/``); the vision figures B.Fig5-7 on a
scaled-down analog (``theorems/paper_b/vision/``).  ``_figure`` declares a figure that cannot be checked.
"""
from __future__ import annotations

from theorems.claim import Claim

_NO_DATA = "no offline data or weights: {what} cannot be downloaded in this environment"


def _figure(id_: str, title: str, statement: str, what: str) -> Claim:
    return Claim(id=id_, title=title, statement=statement, fidelity="qualitative",
                 fidelity_note="Only the qualitative reading of the figure survives in the source text (Appendix C).",
                 not_checked=_NO_DATA.format(what=what))


CLAIMS: list[Claim] = []
