r"""Paper B's vision experiments (Figures 5-7, Appendix C) at laptop scale: the model, the data, the optimizers and
one batched training engine.

**The model** is the paper's own: Lee et al. (2021)'s "ViT for small-size datasets" (shifted patch tokenization +
locality self-attention with a learned temperature and the diagonal masked), as implemented in ``vit-pytorch``'s
``vit_pytorch/vit_for_small_dataset.py``.  That file imports only torch and einops, but the package's
``__init__`` imports torchvision, and PyPI's torchvision does not import beside our torch 2.13.0 CPU build
('operator torchvision::nms does not exist').  So :func:`vit_module` loads the one file **by path** (the package
directory from ``importlib.util.find_spec('vit_pytorch')``, which locates the package without running it): torchvision
is installed (vit-pytorch requires it; ``torchvision==0.28.0`` keeps torch at 2.13.0) but never imported.

**The data**: sklearn's bundled 8x8 digits (1,797 real handwritten digits, 10 classes, no download) by default;
MNIST (IDX files) or CIFAR-10 (the python pickles) from a directory when one is given (:func:`load_images`), which
is how the same code runs at the paper's scale.  Images are float32, standardized by the training set's mean and
standard deviation (per channel); a fixed split (:data:`TEST_FRACTION` of digits held out, by a fixed permutation).

**float32** throughout (the model's own dtype; nothing here needs float64: losses stay far from underflow over the
horizons we run, unlike paper B's saturated synthetic runs).

**The optimizers** are chains of :mod:`numerics.optim` transformations over a tuple of (B, ...) tensors, B
independent runs along the leading dimension (L = the run's minibatch loss, g = its minibatch gradient, norms over
the whole model: the seed does not say "per layer", so SNGD normalizes the whole model's gradient)::

    SGD    u = -eta g                                            optim.scale(eta)
    SNGD   u = -min(eta/||g||, cap) g                            optim.scale_by_capped_normalized(eta, cap)
    SPS    u = -min(L/||g||^2, cap) g   (L* = 0, Polyak's c = 1)  optim.scale_by_stochastic_polyak(cap)
    Adam   torch.optim.Adam on the stacked runs                   adam(lr)   (elementwise, so runs stay independent)
    + weight decay: u <- u - eta wd theta                          add_decayed_weights(wd) before the scale

**The engine** (:func:`train`): B runs, each with its own initialization and its own minibatch order (both from its
seed), batched with ``torch.func.stack_module_state`` + ``functional_call`` + ``vmap(grad_and_value)``: one Python
step per training step for all runs, no per-run loop (only the B initializations are built one by one).  Runs with
the same seeds under different optimizers share their initialization and minibatch order (common random numbers),
so optimizers are compared run by run.
"""
from __future__ import annotations

import gzip
import importlib.util
import math
import os
import pickle
import struct
import sys
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import torch
import torch.nn.functional as F

from numerics import deterministic as _deterministic
from numerics import trailing_mean
from numerics import optim
from numerics.optim import Transform, batch_norm
from numerics.optim import scale_by_capped_normalized, scale_by_stochastic_polyak  # noqa: F401 (this engine's SNGD, SPS)

VISION_DTYPE = torch.float32
#: digits held out for the test accuracy (fixed permutation, seed 0): 20 %, sklearn's usual split
TEST_FRACTION = 0.2
_MODULE_NAME = "_numerics_vit_for_small_dataset"
#: torch intra-op threads while a batch trains (:func:`deterministic`): a reduction split over threads sums in an order
#: that depends on their number, and float32 training amplifies a last-bit difference into a different run; one
#: thread is also the fastest for these small batched tensors (docs/running.md)
ENGINE_THREADS = 1


# ---------------------------------------------------------------------------
# The model: vit_pytorch/vit_for_small_dataset.py, loaded by path
# ---------------------------------------------------------------------------


def vit_module():
    """The module ``vit_pytorch/vit_for_small_dataset.py``, executed on its own (not through the package's
    ``__init__``, which imports torchvision).  Raises ImportError with the install line when vit-pytorch is absent."""
    if _MODULE_NAME in sys.modules:
        return sys.modules[_MODULE_NAME]
    spec = importlib.util.find_spec("vit_pytorch")  # locates the package; does not execute its __init__
    if spec is None or not spec.submodule_search_locations:
        raise ImportError("vit-pytorch is not installed: pip install 'vit-pytorch==1.26.11' (see pyproject.toml)")
    path = Path(list(spec.submodule_search_locations)[0]) / "vit_for_small_dataset.py"
    file_spec = importlib.util.spec_from_file_location(_MODULE_NAME, path)
    mod = importlib.util.module_from_spec(file_spec)
    sys.modules[_MODULE_NAME] = mod
    try:
        file_spec.loader.exec_module(mod)
    except BaseException:
        del sys.modules[_MODULE_NAME]
        raise
    return mod


def make_vit(config: dict, seed: int, device: str = "cpu") -> torch.nn.Module:
    """One ViT-for-small-datasets (``config``: vit_for_small_dataset.ViT's keyword arguments), initialized from
    ``seed`` (PyTorch's default initializers, drawn from a forked global RNG, so nothing else's stream moves)."""
    ViT = vit_module().ViT
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(int(seed) % (2**63))
        m = ViT(**config)
    return m.to(device=device, dtype=VISION_DTYPE)


def layer_groups(names: list[str]) -> dict[str, list[int]]:
    """Parameter names -> the layers whose norms Figure 7 plots: the patch embedding (SPT), the position embedding
    and CLS token, per transformer block its attention (LSA: temperature, LayerNorm, qkv, out) and its MLP, and the
    head.  Values are indices into ``names``."""
    groups: dict[str, list[int]] = {}
    for i, n in enumerate(names):
        if n.startswith("to_patch_embedding"):
            g = "patch embedding"
        elif n in ("pos_embedding", "cls_token"):
            g = "position embedding + cls"
        elif n.startswith("transformer.layers."):
            blk, part = n.split(".")[2:4]
            g = f"block {int(blk) + 1} {'attention' if part == '0' else 'MLP'}"
        elif n.startswith("mlp_head"):
            g = "head"
        else:
            g = "other"
        groups.setdefault(g, []).append(i)
    return groups


# ---------------------------------------------------------------------------
# Data: sklearn digits, MNIST (IDX), CIFAR-10 (python pickles)
# ---------------------------------------------------------------------------


@dataclass
class ImageData:
    """Standardized float32 images (N, C, H, W) with integer labels, a train and a test split."""

    name: str
    X_train: torch.Tensor
    y_train: torch.Tensor
    X_test: torch.Tensor
    y_test: torch.Tensor
    classes: int = 10

    @property
    def shape(self) -> tuple[int, int, int]:
        return tuple(self.X_train.shape[1:])

    def to(self, device: str) -> "ImageData":
        return ImageData(self.name, self.X_train.to(device), self.y_train.to(device), self.X_test.to(device),
                         self.y_test.to(device), self.classes)


def _standardize(name, Xtr, ytr, Xte, yte) -> ImageData:
    Xtr = torch.as_tensor(np.asarray(Xtr), dtype=VISION_DTYPE)
    Xte = torch.as_tensor(np.asarray(Xte), dtype=VISION_DTYPE)
    mean = Xtr.mean(dim=(0, 2, 3), keepdim=True)
    std = Xtr.std(dim=(0, 2, 3), keepdim=True).clamp_min(1e-6)
    return ImageData(name, (Xtr - mean) / std, torch.as_tensor(np.asarray(ytr), dtype=torch.long),
                     (Xte - mean) / std, torch.as_tensor(np.asarray(yte), dtype=torch.long))


def digits() -> ImageData:
    """sklearn's 8x8 digits (1,797 images, 1 channel, pixel values 0-16), TEST_FRACTION held out."""
    from sklearn.datasets import load_digits

    d = load_digits()
    X = d.images[:, None].astype(np.float32)
    perm = np.random.default_rng(0).permutation(len(X))
    n_test = int(round(TEST_FRACTION * len(X)))
    te, tr = perm[:n_test], perm[n_test:]
    return _standardize("digits", X[tr], d.target[tr], X[te], d.target[te])


class DataFormatError(ValueError):
    """A data or model file under ``$VERIFY_DATA_DIR`` that is missing or not what its name says: one line naming what
    to put where (the CLI prints it and exits 2)."""


def _open(path: Path):
    return gzip.open(path, "rb") if path.suffix == ".gz" else open(path, "rb")


def read_idx(path) -> np.ndarray:
    """An IDX file (MNIST's format; optionally gzipped): magic 0x0000 + type byte + ndim byte, big-endian int32
    dimensions, then the data (type 0x08: unsigned bytes)."""
    path = Path(path)
    try:
        with _open(path) as f:
            raw = f.read()
    except OSError as e:
        raise DataFormatError(f"cannot read {path}: {e.strerror or e}") from None
    if len(raw) < 4 or raw[0] != 0 or raw[1] != 0:
        raise DataFormatError(f"{path}: not an IDX file (bad magic number)")
    dtype = {0x08: ">u1", 0x09: ">i1", 0x0B: ">i2", 0x0C: ">i4", 0x0D: ">f4", 0x0E: ">f8"}.get(raw[2])
    if dtype is None:
        raise DataFormatError(f"{path}: unknown IDX data type 0x{raw[2]:02x}")
    ndim = raw[3]
    if len(raw) < 4 + 4 * ndim:
        raise DataFormatError(f"{path}: truncated IDX header")
    dims = struct.unpack(">" + "I" * ndim, raw[4:4 + 4 * ndim])
    data = np.frombuffer(raw, dtype=dtype, offset=4 + 4 * ndim)
    if data.size != math.prod(dims):
        raise DataFormatError(f"{path}: IDX header says {math.prod(dims)} values, the file holds {data.size}")
    return data.reshape(dims)


def _find(folder: Path, stem: str) -> Path:
    for cand in (folder / stem, folder / (stem + ".gz")):
        if cand.exists():
            return cand
    raise DataFormatError(f"{folder}: no {stem}[.gz]")


def read_mnist(folder) -> ImageData:
    """MNIST from ``folder``: train-images-idx3-ubyte, train-labels-idx1-ubyte, t10k-* (each optionally .gz)."""
    folder = Path(folder)
    parts = {}
    for split, prefix in (("train", "train"), ("test", "t10k")):
        X = read_idx(_find(folder, f"{prefix}-images-idx3-ubyte"))
        y = read_idx(_find(folder, f"{prefix}-labels-idx1-ubyte"))
        if X.ndim != 3 or y.ndim != 1 or len(X) != len(y):
            raise DataFormatError(f"{folder}: MNIST {split} images {X.shape} and labels {y.shape} do not match")
        if y.size and (y.min() < 0 or y.max() > 9):
            raise DataFormatError(f"{folder}: MNIST {split} labels outside 0-9")
        parts[split] = (X[:, None].astype(np.float32) / 255.0, y.astype(np.int64))
    return _standardize("mnist", *parts["train"], *parts["test"])


def _unpickle(path: Path) -> dict:
    try:
        with open(path, "rb") as f:
            d = pickle.load(f, encoding="bytes")
    except OSError as e:
        raise DataFormatError(f"cannot read {path}: {e.strerror or e}") from None
    except Exception as e:  # noqa: BLE001 - any unpickling failure is a format error
        raise DataFormatError(f"{path}: not a CIFAR-10 pickle ({type(e).__name__})") from None
    d = {(k.decode() if isinstance(k, bytes) else k): v for k, v in d.items()} if isinstance(d, dict) else None
    if d is None or "data" not in d or "labels" not in d:
        raise DataFormatError(f"{path}: not a CIFAR-10 batch (needs 'data' and 'labels')")
    X, y = np.asarray(d["data"]), np.asarray(d["labels"], dtype=np.int64)
    if X.ndim != 2 or X.shape[1] != 3072 or len(X) != len(y):
        raise DataFormatError(f"{path}: CIFAR-10 data must be (N, 3072) with N labels, got {X.shape}, {y.shape}")
    if y.size and (y.min() < 0 or y.max() > 9):
        raise DataFormatError(f"{path}: CIFAR-10 labels outside 0-9")
    return dict(X=X.reshape(-1, 3, 32, 32).astype(np.float32) / 255.0, y=y)


def read_cifar10(folder) -> ImageData:
    """CIFAR-10 from ``folder`` (cifar-10-batches-py): data_batch_1..5 and test_batch, python pickles."""
    folder = Path(folder)
    train = sorted(folder.glob("data_batch_*"))
    if not train or not (folder / "test_batch").exists():
        raise DataFormatError(f"{folder}: no data_batch_* and test_batch (CIFAR-10's python version)")
    parts = [_unpickle(p) for p in train]
    test = _unpickle(folder / "test_batch")
    return _standardize("cifar10", np.concatenate([p["X"] for p in parts]), np.concatenate([p["y"] for p in parts]),
                        test["X"], test["y"])


#: where each data set may sit under VERIFY_DATA_DIR (the names their archives unpack to)
def data_root(root=None) -> Path | None:
    """``root`` or ``$VERIFY_DATA_DIR`` (None when neither is set); a root that is not a directory is an error."""
    root = os.environ.get("VERIFY_DATA_DIR") if root is None else root
    if not root:
        return None
    root = Path(root)
    if not root.is_dir():
        raise DataFormatError(f"VERIFY_DATA_DIR={root} is not a directory")
    return root


SUBDIRS = {"mnist": ("mnist", "MNIST/raw", "MNIST", ""), "cifar10": ("cifar-10-batches-py", "cifar10", "")}


def find_data(kind: str, root=None) -> Path | None:
    """The folder holding ``kind`` ('mnist' or 'cifar10') under ``root`` (default: ``$VERIFY_DATA_DIR``), or None
    when no root is set or it holds no such data.  A root that is set but is not a directory is an error."""
    root = data_root(root)
    if root is None:
        return None
    marker = {"mnist": "train-labels-idx1-ubyte", "cifar10": "test_batch"}[kind]
    for sub in SUBDIRS[kind]:
        d = root / sub if sub else root
        if (d / marker).exists() or (d / (marker + ".gz")).exists():
            return d
    return None


def load_images(kind: str, root=None) -> ImageData:
    """``kind`` ('mnist' or 'cifar10') from ``$VERIFY_DATA_DIR`` (or ``root``) when it is there, else the digits."""
    folder = find_data(kind, root)
    if folder is None:
        return digits()
    return read_mnist(folder) if kind == "mnist" else read_cifar10(folder)


def check_data_dir(root=None) -> list[str]:
    """Read every data set found under ``root`` (default ``$VERIFY_DATA_DIR``) once: what was found, or a
    DataFormatError (the CLI checks this before it runs anything)."""
    found = []
    for kind in ("mnist", "cifar10"):
        if find_data(kind, root) is not None:
            load_images(kind, root)
            found.append(kind)
    return found


# ---------------------------------------------------------------------------
# Optimizers: numerics.optim transformations on (B, ...) trees
# ---------------------------------------------------------------------------


def sgd(lr: float) -> Transform:
    """``u = -lr g``."""
    return optim.scale(lr)


def add_decayed_weights(wd: float) -> Transform:
    """``g <- g + wd theta`` (before a scale: L2 weight decay / decoupled decay for SGD)."""
    return Transform(lambda p: (), lambda g, s, p, i: (tuple(gi + wd * pi for gi, pi in zip(g, p)), s))


def adam(lr: float, betas=(0.9, 0.999), eps: float = 1e-8) -> Transform:
    """``torch.optim.Adam`` as a transformation: the stacked (B, ...) leaves are its parameters.  Adam acts
    coordinate by coordinate, so the B runs stay independent (a test compares with single runs)."""

    def init(p):
        leaves = [t.detach().clone() for t in p]
        return leaves, torch.optim.Adam(leaves, lr=lr, betas=tuple(betas), eps=eps)

    def update(g, state, p, info):
        leaves, opt = state
        with torch.no_grad():
            for leaf, pi, gi in zip(leaves, p, g):
                leaf.copy_(pi)
                leaf.grad = gi.detach().clone()
            opt.step()
        return tuple(leaf.detach() - pi for leaf, pi in zip(leaves, p)), state

    return Transform(init, update)


OPTIMIZERS = {
    "SGD": lambda h: sgd(h["lr"]),
    "SNGD": lambda h: scale_by_capped_normalized(h["lr"], h["cap"]),
    "SPS": lambda h: scale_by_stochastic_polyak(h["cap"]),
    "Adam": lambda h: adam(h["lr"]),
    "SGD+wd": lambda h: optim.chain(add_decayed_weights(h["wd"]), optim.scale(h["lr"])),
}


def optimizer(kind: str, **hyper) -> Transform:
    """One of :data:`OPTIMIZERS` with its hyperparameters (lr, cap, wd)."""
    return OPTIMIZERS[kind](hyper)


# ---------------------------------------------------------------------------
# The batched engine
# ---------------------------------------------------------------------------


@dataclass
class VisionRun:
    """B runs of one optimizer.  ``batch_loss`` (S, B): each step's minibatch loss (before its update), and
    ``batch_error`` its error rate;
    ``norm_steps`` (K,) and ``layer_norms`` (K, B, G): the groups' parameter norms (``groups``); ``final``: train
    loss and accuracy on the whole training set and test accuracy, (B,) each, after the last step."""

    name: str
    batch_loss: torch.Tensor
    norm_steps: torch.Tensor
    layer_norms: torch.Tensor
    groups: list[str]
    final: dict[str, torch.Tensor] = field(default_factory=dict)
    batch_error: torch.Tensor | None = None  # (S, B): each step's minibatch error rate (before its update)
    grad_norm: torch.Tensor | None = None  # (S, B): each step's minibatch gradient norm over the whole model

    def smoothed_loss(self, window: int) -> torch.Tensor:
        """Mean minibatch loss over the trailing ``window`` steps at each step (the first steps: what there is),
        (S, B)."""
        return trailing_mean(self.batch_loss, window)

    def smoothed_error(self, window: int) -> torch.Tensor:
        """Mean minibatch error rate over the trailing ``window`` steps, (S, B)."""
        return trailing_mean(self.batch_error, window)


def mean_log_smoothed(x: torch.Tensor, smooth: float, floor: float) -> torch.Tensor:
    """The log of ``x`` (S, B) averaged over a trailing window of ``smooth * S`` steps and floored at ``floor``, then
    averaged over the S steps (the area under a log-loss curve per step), (B,)."""
    return trailing_mean(x, max(1, int(smooth * len(x)))).clamp_min(floor).log().mean(0)


def deterministic(threads: int = ENGINE_THREADS, device: str = "cpu"):
    """:func:`numerics.deterministic` at this engine's thread count."""
    return _deterministic(threads, device)


def _stack(models):
    from torch.func import stack_module_state

    params, buffers = stack_module_state(models)
    return params, buffers


def minibatches(n: int, batch: int, steps: int, seeds, device: str = "cpu") -> torch.Tensor:
    """(steps, B, batch) indices: each run ``b`` walks epochs of its own permutations of range(n) (seed ``seeds[b]``),
    dropping each epoch's incomplete last batch."""
    per_epoch = n // batch
    epochs = -(-steps // per_epoch)
    out = []
    for s in seeds:
        g = torch.Generator().manual_seed(int(s) % (2**63))
        idx = torch.stack([torch.randperm(n, generator=g)[: per_epoch * batch] for _ in range(epochs)])
        out.append(idx.reshape(-1, batch)[:steps])
    return torch.stack(out, 1).to(device)


def train(config: dict, data: ImageData, transforms: dict[str, Transform], seeds, steps: int, batch: int,
          norm_every: int = 10, device: str = "cpu", eval_chunk: int = 512) -> dict[str, VisionRun]:
    """``steps`` minibatch steps of each transform in ``transforms`` (name -> Transform) on B = len(seeds) ViTs
    (``config``) each, all batched in one vmap over ``len(transforms) * B`` runs.

    Run b's initialization and minibatch order both come from ``seeds[b]``, the same for every transform (so the
    transforms' runs are paired run by run).  Cross-entropy loss; each transform sees its own slice of the runs and
    their minibatch losses as ``info['loss']``.  Trained under :func:`deterministic`: the same numbers at any thread
    count of the process.
    """
    with deterministic(device=device):
        return _train(config, data, transforms, seeds, steps, batch, norm_every, device, eval_chunk)


def _train(config: dict, data: ImageData, transforms: dict[str, Transform], seeds, steps: int, batch: int,
           norm_every: int, device: str, eval_chunk: int) -> dict[str, VisionRun]:
    from torch.func import functional_call, grad_and_value, vmap

    B, names_t = len(seeds), list(transforms)
    models = [make_vit(config, s, device) for s in seeds]
    base = make_vit(config, 0, "meta")
    pdict, _ = _stack(models)
    names = list(pdict)
    params = tuple(torch.cat([pdict[k].detach()] * len(names_t)) for k in names)
    groups = layer_groups(names)
    data = data.to(device)

    def loss_one(p, x, y):
        logits = functional_call(base, dict(zip(names, p)), (x,))
        return F.cross_entropy(logits, y), (logits.argmax(-1) != y).float().mean()

    step_fn = vmap(grad_and_value(loss_one, has_aux=True))
    logits_fn = vmap(lambda p, x: functional_call(base, dict(zip(names, p)), (x,)), in_dims=(0, None))

    def norms(ps):
        sq = torch.stack([p.reshape(p.shape[0], -1).pow(2).sum(-1) for p in ps], -1)  # (runs, P)
        return torch.stack([sq[:, ix].sum(-1).sqrt() for ix in groups.values()], -1)  # (runs, G)

    def part(tree, k):
        return tuple(t[k * B:(k + 1) * B] for t in tree)

    idx = minibatches(len(data.y_train), batch, steps, seeds, device).repeat(1, len(names_t), 1)
    states = [transforms[n].init(part(params, k)) for k, n in enumerate(names_t)]
    losses, errors, gnorms, nsteps, nrec = [], [], [], [], []
    for t in range(steps):
        if t % norm_every == 0:
            nsteps.append(t)
            nrec.append(norms(params))
        grads, (loss, err) = step_fn(params, data.X_train[idx[t]], data.y_train[idx[t]])
        loss = loss.detach()
        losses.append(loss)
        errors.append(err.detach())
        gnorms.append(batch_norm(grads).detach())
        ups = []
        for k, n in enumerate(names_t):
            u, states[k] = transforms[n].update(part(grads, k), states[k], part(params, k),
                                                {"loss": loss[k * B:(k + 1) * B], "step": t})
            ups.append(u)
        params = optim.apply(params, tuple(torch.cat(us) for us in zip(*ups)))
    nsteps.append(steps)
    nrec.append(norms(params))

    final = {}
    with torch.no_grad():
        R = len(params[0])
        for split, X, y in (("train", data.X_train, data.y_train), ("test", data.X_test, data.y_test)):
            tot_loss = torch.zeros(R, device=device)
            correct = torch.zeros(R, device=device)
            for i in range(0, len(y), eval_chunk):
                lg = logits_fn(params, X[i:i + eval_chunk])  # (R, n, classes)
                yy = y[i:i + eval_chunk]
                tot_loss += F.cross_entropy(lg.flatten(0, 1), yy.repeat(R), reduction="none").reshape(R, -1).sum(-1)
                correct += (lg.argmax(-1) == yy).sum(-1)
            final[f"{split}_loss"] = (tot_loss / len(y)).cpu()
            final[f"{split}_accuracy"] = (correct / len(y)).cpu()
    L, E, N, G = (torch.stack(x).cpu() for x in (losses, errors, nrec, gnorms))

    def own(x: torch.Tensor, k: int) -> torch.Tensor:
        """Transform k's runs, copied out of the stacked tensor: a pickled view would carry every transform's runs."""
        return x[:, k * B:(k + 1) * B].clone()

    return {n: VisionRun(n, own(L, k), torch.tensor(nsteps), own(N, k), list(groups),
                         {m: v[k * B:(k + 1) * B].clone() for m, v in final.items()}, own(E, k), own(G, k))
            for k, n in enumerate(names_t)}
