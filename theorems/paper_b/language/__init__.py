r"""Paper B's language figures (B.Fig1, B.Fig4, B.Fig10): BERT fine-tuned on MNLI and CivilComments and the cosine
similarities of its token embeddings, at the paper's scale when ``$VERIFY_DATA_DIR`` holds the model and the data
(full budget), else on a small analog trained from scratch on generated text tasks.

* ``setups``: the runs (a fixture per task, horizon, cap and batch), the optimizers as the paper defines them and
  the controls' mutants, the tuned step sizes, the readings of "trains faster", and the free choices.

No claim module imports another.
"""
