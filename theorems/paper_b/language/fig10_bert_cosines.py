r"""B.Fig10 — Figure 10 (App. C): cosine similarities of BERT's token embeddings within sentences concentrate near 0.

Seed (App. C): "we obtain token embeddings from a pre-trained BERT tokenizer, and, for every sentence, we compute the
cosine similarity between every pair of token embeddings. We consider 50k text examples from the Civil Comments
dataset ... 100k samples from the MultiNLI dataset ... a significant fraction of all the cosine similarities fall
within a small range around 0, suggesting a nearly orthogonal behavior" (the first part of Assumption 1).

Derivation (ours, labelled): the token embeddings are the rows of the word-embedding table (not the contextual states
of the model's layers); "every pair" is every pair of distinct word positions of a sentence ([CLS], [SEP] and padding
are not words); "a significant fraction ... within a small range around 0" is read as: more than half (``MOST``) of
a sentence's pairs have |cos| <= ``TAU`` = 0.2, on average over sentences; ``TAU`` is an analysis choice (0.1 to
0.3).  At the paper's scale (full budget, ``$VERIFY_DATA_DIR`` with bert-base-uncased, MNLI, CivilComments) the unit
is a sentence, one decision per data set; on the analog (``setups.token_vectors``) the tables are the ones B.Fig1's
analog learned with Adam, the unit is a run (each its own table), over held-out sentences of its task; the table at
initialization (random, near-orthogonal by construction at width 16) is reported beside, not decided.

Check: cos-concentrate (mean share over units, lower confidence bound above ``MOST``).  Controls, each an alternative
the reading must exclude: the contextual states of the model's last block in place of the embedding table (the
reading "token embeddings" = output representations, which attention mixes within a sentence: BERT's are known to
be anisotropic, Ethayarajh 2019), and the table with a common direction mixed in at cosine ``ANISOTROPY`` = 0.5 (an
anisotropic table: Assumption 1 broken); neither may count as concentrated.
"""
from __future__ import annotations

import math

import numpy as np
import torch
import torch.nn.functional as F

from numerics.paper_b.language import share_within
from numerics.stats import decide_lower, mean_se
from theorems.claim import Check, Claim, Context, Control, FreeChoice, Outcome
from theorems.evidence import Evidence
from theorems.paper_b.language.setups import token_vectors

ID = "B.Fig10"
STATEMENT = r"\overline{\Pr}_{\text{pairs } i<j \text{ of a sentence}}\big(|\cos(e_i,e_j)|\le0.2\big)>\tfrac12"
#: "a small range around 0": |cos| <= 0.2 (BERT's width 768 puts random vectors' cosines at +-0.04; 0.2 is about
#: the spread of random cosines at the analog's width 16, 1/sqrt(16) = 0.25)
TAU = 0.2
#: the range's plausible values: 0.1 to 0.3 (an analysis choice)
TAU_RANGE = (0.1, 0.3)
#: "a significant fraction": more than half of a sentence's pairs
MOST = 0.5
#: a share of exactly MOST is not more than half
STRICT = 1e-12
#: one-sided bound: no width rule
MAX_WIDTH = math.inf
#: the anisotropic control's common component: cosine 0.5 between any two rows before their own directions count
ANISOTROPY = 0.5


def embedding_vectors(unit: dict) -> tuple[torch.Tensor, torch.Tensor]:
    """The rows of the embedding table at each word of each sentence: (n, T, d), and which positions are words."""
    return F.embedding(unit["ids"], unit["table"].double()), unit["keep"]


def contextual_vectors(unit: dict) -> tuple[torch.Tensor, torch.Tensor]:
    """A control's mutant: the model's last-block states of each sentence in place of the embedding table's rows."""
    n = len(unit["states"])
    return unit["states"].double(), unit["keep"][:n]


def anisotropic_vectors(unit: dict) -> tuple[torch.Tensor, torch.Tensor]:
    """A control's mutant: each row's direction mixed with the table's common direction at cosine ANISOTROPY."""
    T = F.normalize(unit["table"].double(), dim=-1)
    u = F.normalize(T.mean(0), dim=0)
    mixed = math.sqrt(1 - ANISOTROPY) * T + math.sqrt(ANISOTROPY) * u
    return F.embedding(unit["ids"], mixed), unit["keep"]


def check_concentrate(ctx: Context, vectors: dict, reading=embedding_vectors, tau: float = TAU) -> Outcome:
    """Mean over units of the share of word pairs with |cos| <= ``tau`` above MOST; ``reading``: which vectors
    stand for the tokens (controls pass the contextual states or an anisotropic table)."""
    units = vectors["units"]
    per_sentence = vectors["kind"] == "sentences"
    ev = Evidence(ctx, decisions=len(units) if per_sentence else 1)
    ev.say(vectors["scale"])
    shares = []
    for unit in units:
        v, keep = reading(unit)
        s = share_within(v, keep, (tau,))[:, 0].numpy()
        shares.append(s)
        if per_sentence:
            _decide(ev, s, f"{unit['name']}: share of pairs with |cos| ≤ {tau:g} (mean over {len(s)} sentences)")
    if not per_sentence:
        _decide(ev, np.array([s.mean() for s in shares]),
                f"share of word pairs with |cos| ≤ {tau:g}, {reading.__name__} (mean over {len(units)} runs)")
        init = [share_within(*embedding_vectors(dict(u, table=u["init"])), (tau,))[:, 0].mean() for u in units]
        ev.measure("the same at initialization (random table; not decided)", float(np.mean(init)))
    if ev.plots:
        ev.figure("Figure 10: cosine similarities of token embeddings within sentences", _plot(units),
                  "Histogram over every pair of word positions of every sentence read.")
    m = float(np.mean([s.mean() for s in shares]))
    return ev.outcome(headline=f"share with |cos| ≤ {tau:g}: {m:.3g} (more than {MOST:g} claimed); "
                               f"{vectors['scale']}", reading=reading.__name__)


def _decide(ev: Evidence, values: np.ndarray, name: str) -> None:
    m, se = mean_se(values)
    ev.decide(name, decide_lower(m - ev.z * se, m + ev.z * se, MOST + STRICT, max_width=MAX_WIDTH), value=m)


def _plot(units):
    from numerics.paper_b.language import pair_cosines
    from theorems.plots import label, new_figure

    fig, ax = new_figure()
    for unit in units[:4]:
        v, keep = embedding_vectors(unit)
        c, ok = pair_cosines(v, keep)
        ax.hist(c[ok].numpy(), bins=60, range=(-1, 1), histtype="step", density=True, label=unit["name"])
    ax.axvspan(-TAU, TAU, alpha=0.1)
    label(ax, "cos(e_i, e_j)", "density")
    return fig


CLAIM = Claim(
    id=ID,
    title="Figure 10: cosine similarities of BERT token embeddings concentrate near 0 (Ass. 1)",
    statement=STATEMENT,
    fidelity="qualitative",
    fidelity_note=("Figure claim (App. C). Checked on an analog unless the data are given: the embedding tables a "
                   "one-block softmax-attention classifier learned (with Adam) on a generated sentence-pair task, "
                   "held-out sentences; at the paper's scale (data given: $VERIFY_DATA_DIR with bert-base-uncased/, "
                   "mnli/ and civil_comments/, full budget) bert-base-uncased's word-embedding table on 100k MNLI "
                   "and 50k CivilComments texts. 'Concentrate' read as more than half of the pairs within |cos| ≤ "
                   "0.2, the range an analysis choice."),
    checks=(Check("cos-concentrate", "numeric", "Share of within-sentence word pairs with |cos| ≤ 0.2 > 1/2",
                  check_concentrate, uses={"vectors": token_vectors}),),
    controls=(
        Control("contextual states", "cos-concentrate", "the last block's token states in place of the embedding "
                "table: mixed by attention within a sentence, must not count as concentrated",
                {"reading": contextual_vectors}),
        Control("anisotropic table", "cos-concentrate", "the table's rows mixed with a common direction at cosine "
                "0.5 (Assumption 1 broken): must not count as concentrated", {"reading": anisotropic_vectors}),
    ),
    free_choices=(FreeChoice("cosine range", TAU, "'a small range around 0' fixes no width: 0.1 to 0.3 in |cos|",
                             {"cos-concentrate": lambda v: {"tau": float(v)}}, low=TAU_RANGE[0], high=TAU_RANGE[1],
                             analysis=True),),
)
