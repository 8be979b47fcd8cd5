r"""Paper B's language figures (Figures 1, 4 and 10): the paper's experiment as code (BERT fine-tuned on MNLI and
CivilComments, the cosine similarities of BERT's token embeddings), and a small analog that runs on this machine.

**The paper's experiment** (Sec. 5, App. C): ``bert-base-uncased`` with a sequence-classification head
(Hugging Face ``transformers``' ``BertForSequenceClassification``) fine-tuned with SGD, SNGD, SPS and Adam applied to
all of the model's parameters; MNLI (3 balanced classes, sentence pairs) and CivilComments (WILDS; toxic vs not, about
one comment in nine toxic).  Everything is read from ``$VERIFY_DATA_DIR`` (:func:`find_language_data`), never
downloaded: ``bert-base-uncased/`` (config.json, vocab.txt or tokenizer.json, model.safetensors or
pytorch_model.bin), ``mnli/`` (MultiNLI 1.0's ``multinli_1.0_train.jsonl`` and ``multinli_1.0_dev_matched.jsonl``, or
``train.jsonl``/``dev_matched.jsonl``, or GLUE's ``train.tsv``/``dev_matched.tsv``), ``civil_comments/`` (WILDS'
``all_data_with_identities.csv``).  Loading is ``local_files_only=True`` under ``HF_HUB_OFFLINE=1``
(:func:`load_bert`); a missing or malformed file is one :class:`DataFormatError` line naming what to put where.

**The analog** (no data, no weights): a small softmax-attention transformer classifier trained from scratch on two
text tasks this module generates (:func:`make_task`), each standing for one of the paper's data sets:

* ``nli`` (for MNLI): ``[CLS] premise [SEP] hypothesis``, 5 words each drawn from distractor words; the hypothesis
  holds one cue word of its class (entailment, neutral or contradiction: ``KEYS`` words each), the premise a decoy cue
  of a random class.  3 balanced classes; the label is carried by one word at a random position of the second
  segment, and the same words in the first segment carry nothing: attention must find the word and its segment.
* ``toxic`` (for CivilComments): ``[CLS]`` + 11 words; toxic (``TOXIC_SHARE`` = 1 in 9, CivilComments' share) iff one
  or two toxic words occur; identity words occur in 40 % of toxic and 10 % of non-toxic comments (the spurious
  correlate CivilComments is known for), and carry no label information given the toxic words.

**float32** throughout; trained under :func:`deterministic` (one torch thread, deterministic kernels), so a run at a
seed is the same bits at any thread count on one machine (another CPU's vector width may change the last bits).

**The optimizers** are :mod:`numerics.optim` transformations over tuples of (R, ...) tensors, R independent runs
along the leading dimension, norms over the whole model (the seed does not say "per layer")::

    SGD    u = -eta g                        SNGD   u = -min(eta/||g||, cap) g
    SPS    u = -min(L/||g||^2, cap) g        Adam   bias-corrected moments, elementwise (runs stay independent)

and the controls' mutants (:func:`sngd_unnormalized`, ``optim.scale_by_polyak_unsquared``).

**The engine**: :func:`train` trains R runs of each transformation of the analog in one batched forward (the model is
written on stacked parameters, so no vmap is needed); :func:`train_bert` runs the same transformations on
``BertForSequenceClassification`` (one model at a time, ``torch.func.functional_call`` on a leading run axis of 1).
Both return :class:`TextRun` per transformation: the per-step minibatch loss, error and gradient norm, and the final
train and test metrics, so the claims read the two alike.
"""
from __future__ import annotations

import contextlib
import csv
import json
import math
import os
import sys
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import torch
import torch.nn.functional as F

from numerics import deterministic as _deterministic
from numerics import trailing_mean  # noqa: F401 (read by the claims as this engine's)
from numerics import optim
from numerics.optim import Transform, batch_norm
from numerics.paper_b.vision import DataFormatError, data_root  # the same $VERIFY_DATA_DIR and its one-line errors

LANG_DTYPE = torch.float32
#: torch intra-op threads while a batch trains: a reduction split over threads sums in an order that depends on their
#: number, and float32 training turns a last-bit difference into a different run
ENGINE_THREADS = 1
#: CivilComments' share of toxic comments (toxicity >= 0.5 in WILDS' release: about 11 %), the analog's class prior
TOXIC_SHARE = 1 / 9
#: the CivilComments label: toxic iff the annotators' toxicity score is at least this (WILDS' and Jigsaw's threshold)
TOXIC_THRESHOLD = 0.5
MNLI_LABELS = ("entailment", "neutral", "contradiction")


# ---------------------------------------------------------------------------
# Optimizers
# ---------------------------------------------------------------------------


def sgd(lr: float) -> Transform:
    """``u = -lr g``."""
    return optim.scale(lr)


#: SNGD, ``u = -min(eta/||g||, cap) g`` over the whole model, and SPS_max, ``u = -min(L/(c ||g||^2), cap) g``: the
#: vision engine's transformations (:mod:`numerics.optim`)
sngd = optim.scale_by_capped_normalized
sps = optim.scale_by_stochastic_polyak


def sngd_unnormalized(eta: float, cap: float) -> Transform:
    """A control's mutant of :func:`sngd`: the division by ``||g||`` dropped, ``u = -min(eta, cap) g`` (SGD at SNGD's
    step size)."""
    return optim.scale(min(eta, cap))


def adam(lr: float, b1: float = 0.9, b2: float = 0.999, eps: float = 1e-8) -> Transform:
    """Adam (Kingma and Ba): ``u = -lr m_hat / (sqrt(v_hat) + eps)``, bias-corrected moments, elementwise."""

    def init(p):
        return 0, tuple(torch.zeros_like(t) for t in p), tuple(torch.zeros_like(t) for t in p)

    def update(g, state, p, info):
        t, m, v = state
        t += 1
        m = tuple(b1 * mi + (1 - b1) * gi for mi, gi in zip(m, g))
        v = tuple(b2 * vi + (1 - b2) * gi * gi for vi, gi in zip(v, g))
        c1, c2 = 1 - b1**t, 1 - b2**t
        return tuple(-lr * (mi / c1) / ((vi / c2).sqrt() + eps) for mi, vi in zip(m, v)), (t, m, v)

    return Transform(init, update)


# ---------------------------------------------------------------------------
# The analog's tasks
# ---------------------------------------------------------------------------


@dataclass
class TextTask:
    """Token ids (N, T) with labels, a train and a test split; ``specials``: ids that are not words ([CLS], [SEP]);
    ``prior``: the training set's class frequencies."""

    name: str
    X_train: torch.Tensor
    y_train: torch.Tensor
    X_test: torch.Tensor
    y_test: torch.Tensor
    vocab: list[str]
    classes: int
    specials: tuple[int, ...] = (0, 1)

    @property
    def prior(self) -> torch.Tensor:
        return torch.bincount(self.y_train, minlength=self.classes).double() / len(self.y_train)

    @property
    def prior_loss(self) -> float:
        """The cross-entropy of the best constant prediction (the label prior's entropy)."""
        p = self.prior
        return float(-(p[p > 0] * p[p > 0].log()).sum())


#: the generated tasks' sizes: distractor words, cue words per class (nli), toxic and identity words (toxic)
DISTRACTORS, KEYS, TOXIC_WORDS, IDENTITY_WORDS = 32, 2, 4, 4
#: segment length of a premise / hypothesis (nli) and comment length (toxic): T = 12 tokens with [CLS] (and [SEP])
SEGMENT, COMMENT = 5, 11


def _vocab(kind: str) -> list[str]:
    words = ["[CLS]", "[SEP]"] + [f"w{i}" for i in range(DISTRACTORS)]
    if kind == "nli":
        return words + [f"{label}-cue{i}" for label in MNLI_LABELS for i in range(KEYS)]
    return words + [f"toxic{i}" for i in range(TOXIC_WORDS)] + [f"identity{i}" for i in range(IDENTITY_WORDS)]


def _place(g: np.random.Generator, rows: np.ndarray, words: np.ndarray, width: int, offset: int) -> None:
    """Write ``words[i]`` at a random position of row i's segment ``offset .. offset + width``."""
    pos = offset + g.integers(0, width, len(rows))
    rows[np.arange(len(rows)), pos] = words


def make_task(kind: str, n_train: int, n_test: int, seed: int) -> TextTask:
    """The generated task ``kind`` ('nli' or 'toxic', see the module docstring), drawn from ``seed``."""
    vocab = _vocab(kind)
    g = np.random.default_rng(seed)
    n = n_train + n_test
    if kind == "nli":
        T = 2 + 2 * SEGMENT
        X = 2 + g.integers(0, DISTRACTORS, (n, T))
        X[:, 0], X[:, 1 + SEGMENT] = 0, 1
        y = g.integers(0, 3, n)  # 0 entailment, 1 neutral, 2 contradiction (MNLI_LABELS)
        key0 = 2 + DISTRACTORS
        _place(g, X, key0 + KEYS * y + g.integers(0, KEYS, n), SEGMENT, 2 + SEGMENT)  # the hypothesis' cue
        _place(g, X, key0 + g.integers(0, 3 * KEYS, n), SEGMENT, 1)  # a decoy cue in the premise: no information
        classes, specials = 3, (0, 1)
    elif kind == "toxic":
        T = 1 + COMMENT
        X = 2 + g.integers(0, DISTRACTORS, (n, T))
        X[:, 0] = 0
        y = (g.random(n) < TOXIC_SHARE).astype(np.int64)
        tox0, id0 = 2 + DISTRACTORS, 2 + DISTRACTORS + TOXIC_WORDS
        pos = 1 + np.argsort(g.random((n, COMMENT)), axis=1)  # distinct random positions per comment
        rows = np.arange(n)
        toxic = y == 1
        X[rows[toxic], pos[toxic, 0]] = tox0 + g.integers(0, TOXIC_WORDS, int(toxic.sum()))
        two = toxic & (g.random(n) < 0.5)
        X[rows[two], pos[two, 1]] = tox0 + g.integers(0, TOXIC_WORDS, int(two.sum()))
        ident = g.random(n) < np.where(toxic, 0.4, 0.1)
        X[rows[ident], pos[ident, 2]] = id0 + g.integers(0, IDENTITY_WORDS, int(ident.sum()))
        classes, specials = 2, (0,)
    else:
        raise ValueError(f"unknown task {kind!r} (one of 'nli', 'toxic')")
    X, y = torch.as_tensor(X, dtype=torch.long), torch.as_tensor(y, dtype=torch.long)
    return TextTask(kind, X[:n_train], y[:n_train], X[n_train:], y[n_train:], vocab, classes, specials)


# ---------------------------------------------------------------------------
# The analog's model: a pre-LN softmax-attention classifier on stacked parameters (R runs)
# ---------------------------------------------------------------------------


@dataclass(frozen=True)
class ModelConfig:
    """vocabulary, sequence length, width, heads, MLP width, blocks, classes."""

    vocab: int
    length: int
    dim: int = 32
    heads: int = 2
    mlp: int = 64
    depth: int = 1
    classes: int = 3


PARAM_NAMES = ("embed", "pos", "wq", "wk", "wv", "wo", "w1", "b1", "w2", "b2", "head", "head_bias")


def init_params(cfg: ModelConfig, seeds) -> tuple[torch.Tensor, ...]:
    """One initialization per seed, stacked (R, ...), in PARAM_NAMES' order: embeddings and positions N(0, 1) (so
    tokens start near-orthogonal, cosines of order 1/sqrt(dim)), weights N(0, 1/fan_in), biases 0."""
    d, m, L = cfg.dim, cfg.mlp, cfg.depth
    runs = []
    for s in seeds:
        g = torch.Generator().manual_seed(int(s) % (2**63))

        def n(*shape, fan=1):
            return torch.randn(*shape, generator=g, dtype=LANG_DTYPE) / math.sqrt(fan)

        runs.append((n(cfg.vocab, d), n(cfg.length, d), n(L, d, d, fan=d), n(L, d, d, fan=d), n(L, d, d, fan=d),
                     n(L, d, d, fan=d), n(L, d, m, fan=d), torch.zeros(L, m), n(L, m, d, fan=m), torch.zeros(L, d),
                     n(d, cfg.classes, fan=d), torch.zeros(cfg.classes)))
    return tuple(torch.stack(leaf) for leaf in zip(*runs))


def _ln(h: torch.Tensor) -> torch.Tensor:
    return F.layer_norm(h, h.shape[-1:])


def hidden(p, cfg: ModelConfig, X: torch.Tensor) -> torch.Tensor:
    """The last block's token states (R, n, T, d) of each run's sentences ``X`` (R, n, T)."""
    E, P, wq, wk, wv, wo, w1, b1, w2, b2 = p[:10]
    R, V, d = E.shape
    h = F.embedding(X + V * torch.arange(R, device=X.device)[:, None, None], E.reshape(R * V, d)) + P[:, None]
    H, dh = cfg.heads, d // cfg.heads
    for layer in range(cfg.depth):
        a = _ln(h)
        q, k, v = (torch.einsum("rntd,rde->rnte", a, w[:, layer]).unflatten(-1, (H, dh)) for w in (wq, wk, wv))
        att = torch.softmax(torch.einsum("rnthe,rnshe->rnhts", q, k) / math.sqrt(dh), -1)
        o = torch.einsum("rnhts,rnshe->rnthe", att, v).flatten(-2)
        h = h + torch.einsum("rntd,rde->rnte", o, wo[:, layer])
        a = _ln(h)
        z = F.gelu(torch.einsum("rntd,rdm->rntm", a, w1[:, layer]) + b1[:, layer, None, None])
        h = h + torch.einsum("rntm,rmd->rntd", z, w2[:, layer]) + b2[:, layer, None, None]
    return h


def logits(p, cfg: ModelConfig, X: torch.Tensor) -> torch.Tensor:
    """Class scores (R, n, C) read off the [CLS] state."""
    return torch.einsum("rnd,rdc->rnc", _ln(hidden(p, cfg, X)[:, :, 0]), p[10]) + p[11][:, None]


def config_for(task: TextTask, **kw) -> ModelConfig:
    return ModelConfig(vocab=len(task.vocab), length=task.X_train.shape[1], classes=task.classes, **kw)


# ---------------------------------------------------------------------------
# Runs
# ---------------------------------------------------------------------------


@dataclass
class TextRun:
    """R runs of one optimizer: ``batch_loss``, ``batch_error``, ``grad_norm`` (S, R) per step (before its update);
    ``final``: whole-train-set loss and accuracy and test accuracy (R,); ``params``: the final parameters
    (analog only; None for BERT)."""

    name: str
    batch_loss: torch.Tensor
    batch_error: torch.Tensor
    grad_norm: torch.Tensor
    final: dict[str, torch.Tensor] = field(default_factory=dict)
    params: tuple | None = None
    init: tuple | None = None


def deterministic(threads: int = ENGINE_THREADS, device: str = "cpu"):
    """:func:`numerics.deterministic` at this engine's thread count."""
    return _deterministic(threads, device)


def minibatches(n: int, batch: int, steps: int, seeds) -> torch.Tensor:
    """(steps, R, batch) indices: run r walks epochs of its own permutations of range(n) (seed ``seeds[r]``), each
    epoch's incomplete last batch dropped."""
    per_epoch = n // batch
    if per_epoch < 1:
        raise ValueError(f"a minibatch of {batch} is larger than the {n} training examples")
    epochs = -(-steps // per_epoch)
    out = []
    for s in seeds:
        g = torch.Generator().manual_seed(int(s) % (2**63) ^ 0x5EED)
        idx = torch.stack([torch.randperm(n, generator=g)[:per_epoch * batch] for _ in range(epochs)])
        out.append(idx.reshape(-1, batch)[:steps])
    return torch.stack(out, 1)


def _run_steps(params, transforms: dict, B: int, steps: int, loss_fn, record) -> dict:
    """The shared loop: ``loss_fn(params, t) -> (per-run loss (R,), per-run error (R,))`` on the stacked runs of every
    transformation (``len(transforms) * B`` along the leading axis); each transformation updates its own slice."""
    names = list(transforms)

    def part(tree, k):
        return tuple(x[k * B:(k + 1) * B] for x in tree)

    states = [transforms[n].init(part(params, k)) for k, n in enumerate(names)]
    for t in range(steps):
        leaves = tuple(x.detach().requires_grad_(True) for x in params)
        loss, err = loss_fn(leaves, t)
        grads = torch.autograd.grad(loss.sum(), leaves)  # runs are independent: d(sum)/d(run r) = run r's gradient
        loss = loss.detach()
        record(loss, err.detach(), batch_norm(grads).detach())
        ups = []
        for k, n in enumerate(names):
            u, states[k] = transforms[n].update(part(grads, k), states[k], part(params, k),
                                                {"loss": loss[k * B:(k + 1) * B], "step": t})
            ups.append(u)
        params = tuple(p.detach() + torch.cat(us) for p, us in zip(params, zip(*ups)))
    return dict(params=params)


def train(task: TextTask, cfg: ModelConfig, transforms: dict[str, Transform], seeds, steps: int, batch: int,
          eval_chunk: int = 1024) -> dict[str, TextRun]:
    """``steps`` minibatch steps of each transformation on R = len(seeds) analog models, all in one batch.  Run r's
    initialization and minibatch order come from ``seeds[r]`` and are shared by every transformation (paired runs)."""
    with deterministic():
        B, names = len(seeds), list(transforms)
        init = init_params(cfg, seeds)
        params = tuple(torch.cat([x] * len(names)) for x in init)
        idx = minibatches(len(task.y_train), batch, steps, seeds).repeat(1, len(names), 1)
        rows: list[tuple] = []

        def loss_fn(p, t):
            X, y = task.X_train[idx[t]], task.y_train[idx[t]]
            lg = logits(p, cfg, X)
            loss = F.cross_entropy(lg.flatten(0, 1), y.flatten(), reduction="none").reshape(y.shape).mean(-1)
            return loss, (lg.argmax(-1) != y).float().mean(-1)

        params = _run_steps(params, transforms, B, steps, loss_fn, lambda *r: rows.append(r))["params"]
        final = evaluate(params, cfg, task, eval_chunk)
        L, E, G = (torch.stack(x) for x in zip(*rows))
        return {n: TextRun(n, L[:, k * B:(k + 1) * B].clone(), E[:, k * B:(k + 1) * B].clone(),
                           G[:, k * B:(k + 1) * B].clone(), {m: v[k * B:(k + 1) * B].clone() for m, v in final.items()},
                           tuple(x[k * B:(k + 1) * B].clone() for x in params), init)
                for k, n in enumerate(names)}


def evaluate(params, cfg: ModelConfig, task: TextTask, chunk: int = 1024) -> dict[str, torch.Tensor]:
    """Whole-train-set loss and accuracy and test accuracy of every run, (R,) each."""
    R = params[0].shape[0]
    out = {}
    with torch.no_grad():
        for split, X, y in (("train", task.X_train, task.y_train), ("test", task.X_test, task.y_test)):
            tot, correct = torch.zeros(R, dtype=torch.float64), torch.zeros(R, dtype=torch.float64)
            for i in range(0, len(y), chunk):
                yy = y[i:i + chunk]
                lg = logits(params, cfg, X[i:i + chunk].expand(R, -1, -1))
                tot += F.cross_entropy(lg.flatten(0, 1), yy.repeat(R), reduction="none").reshape(R, -1).sum(-1)
                correct += (lg.argmax(-1) == yy).sum(-1)
            out[f"{split}_loss"], out[f"{split}_accuracy"] = tot / len(y), correct / len(y)
    return out


# ---------------------------------------------------------------------------
# Reading the runs
# ---------------------------------------------------------------------------


# ---------------------------------------------------------------------------
# Cosine similarities of token vectors within sentences (Figure 10)
# ---------------------------------------------------------------------------


def pair_cosines(vectors: torch.Tensor, keep: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """Cosines of every pair of distinct positions i < j of each sentence: ``vectors`` (n, T, d), ``keep`` (n, T) the
    positions that are words.  Returns (n, P) cosines and (n, P) which pairs count (both positions kept)."""
    u = F.normalize(vectors.double(), dim=-1)
    C = (u @ u.transpose(-1, -2)).clamp(-1.0, 1.0)  # a repeated word's cosine is 1, not 1 + rounding
    i, j = torch.triu_indices(C.shape[-1], C.shape[-1], 1)
    return C[:, i, j], keep[:, i] & keep[:, j]


def share_within(vectors: torch.Tensor, keep: torch.Tensor, taus) -> torch.Tensor:
    """Per sentence, the share of its word pairs whose |cosine| <= tau, for each tau of ``taus``: (n, len(taus))."""
    cos, ok = pair_cosines(vectors, keep)
    n_pairs = ok.sum(-1).clamp_min(1).double()
    return torch.stack([((cos.abs() <= t) & ok).sum(-1) / n_pairs for t in taus], -1)


# ---------------------------------------------------------------------------
# The paper's data and model, from $VERIFY_DATA_DIR
# ---------------------------------------------------------------------------

#: what the paper's scale needs under $VERIFY_DATA_DIR, and where each file comes from (one line each)
LAYOUT = {
    "bert": ("bert-base-uncased", "config.json, vocab.txt (or tokenizer.json) and model.safetensors (or "
             "pytorch_model.bin) of bert-base-uncased"),
    "mnli": ("mnli", "multinli_1.0_train.jsonl and multinli_1.0_dev_matched.jsonl (MultiNLI 1.0; or train.jsonl / "
             "dev_matched.jsonl, or GLUE's train.tsv / dev_matched.tsv)"),
    "civil_comments": ("civil_comments", "all_data_with_identities.csv (WILDS civilcomments_v1.0)"),
}
_MNLI_FILES = {"train": ("multinli_1.0_train.jsonl", "train.jsonl", "train.tsv"),
               "test": ("multinli_1.0_dev_matched.jsonl", "dev_matched.jsonl", "dev_matched.tsv")}
_CIVIL_FILE = "all_data_with_identities.csv"


def _missing(root: Path, what: str, detail: str) -> DataFormatError:
    sub, files = LAYOUT[what]
    return DataFormatError(f"{root / sub}/: {detail}; put {files} there")


def find_language_data(root=None) -> dict[str, Path] | None:
    """The paper's language files under ``root`` (default ``$VERIFY_DATA_DIR``): ``{"bert": dir, "mnli": dir,
    "civil_comments": dir}``, or None when none of the three folders is there (the figures then run on the analog).
    A folder that is there but incomplete is a :class:`DataFormatError` naming what to put where."""
    root = data_root(root)
    if root is None:
        return None
    dirs = {k: root / sub for k, (sub, _) in LAYOUT.items()}
    if not any(d.is_dir() for d in dirs.values()):
        return None
    for k, d in dirs.items():
        if not d.is_dir():
            raise _missing(root, k, "missing")
    b = dirs["bert"]
    if not (b / "config.json").exists():
        raise _missing(root, "bert", "no config.json")
    if not ((b / "vocab.txt").exists() or (b / "tokenizer.json").exists()):
        raise _missing(root, "bert", "no vocab.txt or tokenizer.json")
    if not ((b / "model.safetensors").exists() or (b / "pytorch_model.bin").exists()):
        raise _missing(root, "bert", "no model.safetensors or pytorch_model.bin")
    for split, names in _MNLI_FILES.items():
        if not any((dirs["mnli"] / f).exists() for f in names):
            raise _missing(root, "mnli", f"no {split} file ({' / '.join(names)})")
    if not (dirs["civil_comments"] / _CIVIL_FILE).exists():
        raise _missing(root, "civil_comments", f"no {_CIVIL_FILE}")
    return dirs


@dataclass
class TextData:
    """Raw text examples: ``first`` (and ``second`` for sentence pairs, else None) with integer labels, a train and a
    test split."""

    name: str
    train: tuple[list[str], list[str] | None, list[int]]
    test: tuple[list[str], list[str] | None, list[int]]
    classes: int


def _read_mnli_file(path: Path, limit: int | None) -> tuple[list[str], list[str], list[int]]:
    a, b, y = [], [], []
    try:
        with open(path, encoding="utf-8", newline="") as f:
            if path.suffix == ".tsv":
                rows = csv.DictReader(f, delimiter="\t", quoting=csv.QUOTE_NONE)
                need = {"sentence1", "sentence2", "gold_label"}
                if not rows.fieldnames or not need <= set(rows.fieldnames):
                    raise DataFormatError(f"{path}: a GLUE MNLI tsv needs the columns sentence1, sentence2, gold_label")
            else:
                rows = (json.loads(line) for line in f if line.strip())
            for r in rows:
                if not isinstance(r, dict) or not {"sentence1", "sentence2", "gold_label"} <= set(r):
                    raise DataFormatError(f"{path}: each MNLI record needs sentence1, sentence2, gold_label")
                if r["gold_label"] not in MNLI_LABELS:  # '-': no annotator majority, dropped as in GLUE
                    continue
                a.append(r["sentence1"]), b.append(r["sentence2"]), y.append(MNLI_LABELS.index(r["gold_label"]))
                if limit is not None and len(y) >= limit:
                    break
    except OSError as e:
        raise DataFormatError(f"cannot read {path}: {e.strerror or e}") from None
    except json.JSONDecodeError as e:
        raise DataFormatError(f"{path}: not JSON lines ({e.msg} at line {e.lineno})") from None
    if not y:
        raise DataFormatError(f"{path}: no labelled MNLI example")
    return a, b, y


def read_mnli(folder, limit: int | None = None) -> TextData:
    """MNLI from ``folder``: the first train and test files of _MNLI_FILES found (jsonl or GLUE tsv)."""
    folder = Path(folder)
    parts = {}
    for split, names in _MNLI_FILES.items():
        path = next((folder / f for f in names if (folder / f).exists()), None)
        if path is None:
            raise DataFormatError(f"{folder}/: no {split} file ({' / '.join(names)})")
        parts[split] = _read_mnli_file(path, limit)
    return TextData("mnli", parts["train"], parts["test"], 3)


def read_civil_comments(folder, limit: int | None = None) -> TextData:
    """CivilComments from ``folder``/all_data_with_identities.csv (WILDS): comment_text, toxicity, split; toxic iff
    toxicity >= TOXIC_THRESHOLD; the 'train' rows train, the 'test' rows test."""
    path = Path(folder) / _CIVIL_FILE
    csv.field_size_limit(sys.maxsize)
    out = {"train": ([], None, []), "test": ([], None, [])}
    try:
        with open(path, encoding="utf-8", newline="") as f:
            rows = csv.DictReader(f)
            if not rows.fieldnames or not {"comment_text", "toxicity", "split"} <= set(rows.fieldnames):
                raise DataFormatError(f"{path}: needs the columns comment_text, toxicity, split (WILDS' release)")
            for line, r in enumerate(rows, 2):
                if r["split"] not in out:
                    continue
                try:
                    tox = float(r["toxicity"])
                except ValueError:
                    raise DataFormatError(f"{path}:{line}: toxicity {r['toxicity']!r} is not a number") from None
                text, _, y = out[r["split"]]
                if limit is not None and len(y) >= limit:
                    continue
                text.append(r["comment_text"] or ""), y.append(int(tox >= TOXIC_THRESHOLD))
    except OSError as e:
        raise DataFormatError(f"cannot read {path}: {e.strerror or e}") from None
    for split, (_, _, y) in out.items():
        if not y:
            raise DataFormatError(f"{path}: no row with split == {split!r}")
    return TextData("civil_comments", out["train"], out["test"], 2)


def check_language_data(root=None) -> list[str]:
    """Read what the paper's scale needs under ``root`` once (a few rows of each file): what was found, or a
    DataFormatError line."""
    dirs = find_language_data(root)
    if dirs is None:
        return []
    read_mnli(dirs["mnli"], limit=8)
    read_civil_comments(dirs["civil_comments"], limit=8)
    load_bert(dirs["bert"], num_labels=3)
    return ["bert-base-uncased", "mnli", "civil_comments"]


@contextlib.contextmanager
def _without_torchvision():
    """Hide torchvision while transformers decides what it has: PyPI's torchvision 0.28.0 (installed for vit-pytorch)
    does not import beside the CPU build of torch 2.13.0 ('operator torchvision::nms does not exist'), and
    transformers imports it for image utilities a BERT never uses.  Its availability check is cached, so it stays
    hidden from transformers afterwards; torchvision itself is restored for everyone else."""
    had = "torchvision" in sys.modules
    saved = sys.modules.get("torchvision")
    if not had:
        sys.modules["torchvision"] = None  # find_spec -> None, import -> ImportError
    try:
        yield
    finally:
        if not had:
            sys.modules.pop("torchvision", None)
        elif saved is not None:
            sys.modules["torchvision"] = saved


def transformers_bert():
    """(BertForSequenceClassification, BertTokenizerFast), imported offline (HF_HUB_OFFLINE=1: nothing is fetched)."""
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    try:
        with _without_torchvision():
            from transformers.utils import import_utils

            import_utils.is_torchvision_available()  # cached while torchvision is hidden
            from transformers import BertForSequenceClassification, BertTokenizerFast
    except ImportError as e:
        raise ImportError(f"transformers is needed at the paper's scale: pip install 'transformers==5.24.0' ({e})")
    return BertForSequenceClassification, BertTokenizerFast


def load_bert(folder, num_labels: int, dropout: float | None = 0.0, device: str = "cpu"):
    """(model, tokenizer) from ``folder``, local files only.  ``dropout`` overrides the config's hidden and attention
    dropout (0: the optimizers are compared on one deterministic objective; None keeps the config's 0.1)."""
    Model, Tokenizer = transformers_bert()
    folder = Path(folder)
    extra = {} if dropout is None else dict(hidden_dropout_prob=dropout, attention_probs_dropout_prob=dropout)
    try:
        tok = Tokenizer.from_pretrained(str(folder), local_files_only=True)
        # a checkpoint with a head of another size (one already fine-tuned) gets a fresh head, as fine-tuning does
        model = Model.from_pretrained(str(folder), local_files_only=True, num_labels=num_labels,
                                      ignore_mismatched_sizes=True, **extra)
    except (OSError, ValueError) as e:
        raise DataFormatError(f"{folder}/: cannot load bert-base-uncased ({str(e).splitlines()[0]})") from None
    return model.to(device=device, dtype=LANG_DTYPE), tok


def tokenize(tok, data: TextData, split: str, max_len: int) -> dict[str, torch.Tensor]:
    """``split`` of ``data`` tokenized, padded to ``max_len`` (sentence pairs as [CLS] a [SEP] b [SEP])."""
    first, second, y = getattr(data, split)
    enc = tok(first, second, padding="max_length", truncation=True, max_length=max_len, return_tensors="pt")
    return dict(input_ids=enc["input_ids"], attention_mask=enc["attention_mask"],
                token_type_ids=enc.get("token_type_ids", torch.zeros_like(enc["input_ids"])),
                labels=torch.as_tensor(y, dtype=torch.long))


def train_bert(model_dir, data: TextData, transforms: dict[str, Transform], seeds, steps: int, batch: int,
               max_len: int = 128, device: str = "cpu", eval_examples: int = 2000) -> dict[str, TextRun]:
    """Fine-tune ``BertForSequenceClassification`` from ``model_dir`` on ``data`` with each transformation, one run per
    seed (its minibatch order and its head's initialization from the seed, shared by every transformation: paired).
    One model at a time (bert-base does not fit many times over); the transformation sees it as a run axis of 1."""
    from torch.func import functional_call

    _, tok = load_bert(model_dir, data.classes, device=device)
    enc = tokenize(tok, data, "train", max_len)
    test = {k: v[:eval_examples] for k, v in tokenize(tok, data, "test", max_len).items()}
    n = len(enc["labels"])
    out = {}
    with deterministic(torch.get_num_threads()):
        idx = minibatches(n, batch, steps, seeds)
        for name, tf in transforms.items():
            rows, finals = [], []
            for r, s in enumerate(seeds):
                with torch.random.fork_rng(devices=[]):
                    torch.manual_seed(int(s) % (2**63))  # the classification head's initialization
                    model, _ = load_bert(model_dir, data.classes, device=device)
                names = [k for k, _ in model.named_parameters()]
                params = tuple(p.detach().unsqueeze(0) for _, p in model.named_parameters())
                run_rows: list[tuple] = []

                def loss_fn(p, t, model=model, names=names, r=r):
                    sel = idx[t, r]
                    inputs = {k: v[sel].to(device) for k, v in enc.items() if k != "labels"}
                    lg = functional_call(model, {k: x[0] for k, x in zip(names, p)}, kwargs=inputs).logits
                    y = enc["labels"][sel].to(device)
                    return F.cross_entropy(lg, y).reshape(1), (lg.argmax(-1) != y).float().mean().reshape(1)

                final = _run_steps(params, {name: tf}, 1, steps, loss_fn, lambda *x: run_rows.append(x))["params"]
                rows.append([torch.cat(c) for c in zip(*run_rows)])
                finals.append(_bert_eval(model, names, final, enc, test, device))
            L, E, G = (torch.stack([row[i] for row in rows], 1).reshape(steps, -1) for i in range(3))
            out[name] = TextRun(name, L.cpu(), E.cpu(), G.cpu(),
                                {k: torch.stack([f[k] for f in finals]) for k in finals[0]})
    return out


def _bert_eval(model, names, params, enc, test, device, chunk: int = 64, limit: int = 2000) -> dict[str, torch.Tensor]:
    from torch.func import functional_call

    p = {k: x[0] for k, x in zip(names, params)}
    res = {}
    with torch.no_grad():
        for split, d in (("train", {k: v[:limit] for k, v in enc.items()}), ("test", test)):
            tot, correct, n = 0.0, 0, len(d["labels"])
            for i in range(0, n, chunk):
                inputs = {k: v[i:i + chunk].to(device) for k, v in d.items() if k != "labels"}
                lg = functional_call(model, p, kwargs=inputs).logits
                y = d["labels"][i:i + chunk].to(device)
                tot += float(F.cross_entropy(lg, y, reduction="sum"))
                correct += int((lg.argmax(-1) == y).sum())
            res[f"{split}_loss"], res[f"{split}_accuracy"] = torch.tensor(tot / n), torch.tensor(correct / n)
    return res


def bert_sentences(tok, data: TextData, limit: int, max_len: int = 128) -> tuple[torch.Tensor, torch.Tensor]:
    """The first ``limit`` training texts of ``data`` tokenized one sentence at a time (both of a pair's sentences,
    as the paper computes similarities "for every sentence"): ids (n, max_len) and which positions are words (not
    [CLS], [SEP] or padding)."""
    first, second, _ = data.train
    texts = [t for pair in zip(first, second) for t in pair] if second is not None else list(first)
    texts = texts[:limit]
    enc = tok(texts, padding="max_length", truncation=True, max_length=max_len, return_tensors="pt")
    ids = enc["input_ids"]
    special = torch.as_tensor([tok.cls_token_id, tok.sep_token_id, tok.pad_token_id])
    return ids, (enc["attention_mask"] > 0) & ~torch.isin(ids, special)


if __name__ == "__main__":  # `python -m numerics.paper_b.language`: check $VERIFY_DATA_DIR before a long run
    try:
        found = check_language_data()
    except (DataFormatError, ImportError) as err:
        print(f"language data: {err}", file=sys.stderr)
        sys.exit(2)
    print("language data: " + (", ".join(found) if found else "none under $VERIFY_DATA_DIR (the analog runs)"))
