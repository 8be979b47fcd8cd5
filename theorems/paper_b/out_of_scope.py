"""Paper B's experiments on pretrained transformers and real data: registered, not checked.

They need text data sets and pretrained weights (BERT, a BERT tokenizer's embeddings) that cannot be obtained
offline; nothing in the suite substitutes for them.  (The vision figures B.Fig5-7 are checked on a scaled-down
analog: ``fig5_vit_digits``, ``fig6_vit_digits``, ``fig7_vit_norms``.)
"""
from __future__ import annotations

from theorems.claim import Claim

_NO_DATA = "no offline data or weights: {what} cannot be downloaded in this environment"


def _figure(id_: str, title: str, statement: str, what: str) -> Claim:
    return Claim(id=id_, title=title, statement=statement, fidelity="qualitative",
                 fidelity_note="Only the qualitative reading of the figure survives in the seed (Appendix C).",
                 not_checked=_NO_DATA.format(what=what))


CLAIMS = [
    _figure("B.Fig1", "Figure 1: BERT fine-tuned on MNLI — SNGD and SPS train faster than SGD",
            r"\text{BERT on MNLI: SNGD, SPS train faster than SGD}",
            "MultiNLI and pretrained bert-base-uncased"),
    _figure("B.Fig4", "Figure 4: BERT on CivilComments — same picture as Figure 1",
            r"\text{BERT on CivilComments: SNGD, SPS train faster than SGD}",
            "CivilComments (WILDS) and pretrained bert-base-uncased"),
    _figure("B.Fig10", "Figure 10: cosine similarities of BERT token embeddings concentrate near 0 (Ass. 1)",
            r"\cos(e_i,e_j)\approx0\ \text{for token embeddings in CivilComments and MNLI sentences}",
            "a pretrained BERT tokenizer/embedding table and the CivilComments / MultiNLI texts"),
]
