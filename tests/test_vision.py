"""Paper B's vision figures (B.Fig5-7): the dependency pins, the ViT loaded by path, the data readers, the optimizers
and the batched engine (numerics.paper_b.vision)."""
import gzip
import importlib.metadata
import math
import os
import pickle
import struct
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import torch

from numerics import optim
from numerics.paper_b import vision as V

ROOT = Path(__file__).resolve().parent.parent
TINY = dict(image_size=8, patch_size=4, num_classes=10, dim=8, depth=1, heads=2, dim_head=4, mlp_dim=8, channels=1)


# ---------------------------------------------------------------------------
# Dependencies: the pins keep torch where it is; the ViT never imports torchvision
# ---------------------------------------------------------------------------


def test_the_pins_do_not_move_torch():
    """pyproject pins torchvision==0.28.0 (built against torch 2.13.0) beside vit-pytorch: torch stays 2.13.x."""
    assert torch.__version__.startswith("2.13."), f"torch moved to {torch.__version__}"
    assert importlib.metadata.version("torch").startswith("2.13.")
    assert importlib.metadata.version("vit-pytorch") == "1.26.11"
    assert importlib.metadata.version("torchvision") == "0.28.0"  # read from its metadata, never imported


def test_the_vit_loads_by_path_without_torchvision():
    code = ("import sys, torch\n"
            "from numerics.paper_b import vision as V\n"
            f"m = V.make_vit({TINY!r}, seed=1)\n"
            "out = m(torch.zeros(2, 1, 8, 8))\n"
            "assert out.shape == (2, 10), out.shape\n"
            "bad = sorted(k for k in sys.modules if k.split('.')[0] in ('torchvision', 'vit_pytorch'))\n"
            "assert not bad, bad\n"
            "print('ok', type(m).__module__)\n")
    env = dict(os.environ, PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, cwd=ROOT, timeout=120)
    assert r.returncode == 0, r.stderr[-2000:]
    assert r.stdout.startswith("ok _numerics_vit_for_small_dataset")


def test_the_vit_is_lee_et_al_s():
    m = V.make_vit(TINY, seed=0)
    mod = V.vit_module()
    assert isinstance(m.to_patch_embedding, mod.SPT)  # shifted patch tokenization
    assert isinstance(m.transformer.layers[0][0], mod.LSA)  # locality self-attention (learned temperature)
    assert m.transformer.layers[0][0].temperature.requires_grad
    a, b = V.make_vit(TINY, seed=3), V.make_vit(TINY, seed=3)
    assert all(torch.equal(p, q) for p, q in zip(a.parameters(), b.parameters()))  # the seed fixes the init


# ---------------------------------------------------------------------------
# Data readers, on tiny files written here
# ---------------------------------------------------------------------------


def _idx(path: Path, arr: np.ndarray, gz=False):
    raw = bytes([0, 0, 0x08, arr.ndim]) + struct.pack(">" + "I" * arr.ndim, *arr.shape) + arr.astype(">u1").tobytes()
    with (gzip.open(path, "wb") if gz else open(path, "wb")) as f:
        f.write(raw)


def _mnist(folder: Path, gz: bool, n=6, m=4):
    rng = np.random.default_rng(0)
    folder.mkdir(parents=True, exist_ok=True)
    sfx = ".gz" if gz else ""
    _idx(folder / f"train-images-idx3-ubyte{sfx}", rng.integers(0, 256, (n, 28, 28)), gz)
    _idx(folder / f"train-labels-idx1-ubyte{sfx}", np.arange(n) % 10, gz)
    _idx(folder / f"t10k-images-idx3-ubyte{sfx}", rng.integers(0, 256, (m, 28, 28)), gz)
    _idx(folder / f"t10k-labels-idx1-ubyte{sfx}", np.arange(m) % 10, gz)


@pytest.mark.parametrize("gz", [False, True])
def test_read_mnist_idx(tmp_path, gz):
    _mnist(tmp_path, gz)
    d = V.read_mnist(tmp_path)
    assert d.name == "mnist" and d.X_train.shape == (6, 1, 28, 28) and d.X_test.shape == (4, 1, 28, 28)
    assert d.y_train.tolist() == [0, 1, 2, 3, 4, 5] and d.X_train.dtype == torch.float32
    assert abs(float(d.X_train.mean())) < 1e-5 and abs(float(d.X_train.std()) - 1) < 1e-3  # standardized
    raw = V.read_idx(tmp_path / ("train-labels-idx1-ubyte" + (".gz" if gz else "")))
    assert raw.dtype == np.uint8 and raw.shape == (6,)


def test_read_idx_rejects_bad_files(tmp_path):
    bad = tmp_path / "x-idx1-ubyte"
    bad.write_bytes(b"\x01\x02\x08\x01\x00\x00\x00\x03abc")
    with pytest.raises(V.DataFormatError, match="magic"):
        V.read_idx(bad)
    bad.write_bytes(bytes([0, 0, 8, 1]) + struct.pack(">I", 5) + b"abc")
    with pytest.raises(V.DataFormatError, match="holds 3"):
        V.read_idx(bad)
    with pytest.raises(V.DataFormatError, match="cannot read"):
        V.read_idx(tmp_path / "missing")


def _cifar(folder: Path, n=5):
    rng = np.random.default_rng(1)
    folder.mkdir(parents=True, exist_ok=True)
    for name in ("data_batch_1", "data_batch_2", "test_batch"):
        with open(folder / name, "wb") as f:
            pickle.dump({b"data": rng.integers(0, 256, (n, 3072)).astype(np.uint8), b"labels": list(range(n))}, f)


def test_read_cifar10_pickles(tmp_path):
    _cifar(tmp_path / "cifar-10-batches-py")
    d = V.read_cifar10(tmp_path / "cifar-10-batches-py")
    assert d.name == "cifar10" and d.X_train.shape == (10, 3, 32, 32) and d.X_test.shape == (5, 3, 32, 32)
    assert d.y_test.tolist() == [0, 1, 2, 3, 4]
    assert V.find_data("cifar10", tmp_path) == tmp_path / "cifar-10-batches-py"
    assert V.find_data("mnist", tmp_path) is None


def test_read_cifar10_rejects_bad_files(tmp_path):
    _cifar(tmp_path)
    (tmp_path / "data_batch_2").write_bytes(b"not a pickle")
    with pytest.raises(V.DataFormatError, match="data_batch_2: not a CIFAR-10 pickle"):
        V.read_cifar10(tmp_path)
    with open(tmp_path / "data_batch_2", "wb") as f:
        pickle.dump({b"data": np.zeros((2, 100), np.uint8), b"labels": [0, 1]}, f)
    with pytest.raises(V.DataFormatError, match=r"\(N, 3072\)"):
        V.read_cifar10(tmp_path)


def test_load_images_uses_the_data_dir_or_the_digits(tmp_path, monkeypatch):
    monkeypatch.delenv("VERIFY_DATA_DIR", raising=False)
    assert V.load_images("mnist").name == "digits"
    _mnist(tmp_path / "mnist", gz=True)
    monkeypatch.setenv("VERIFY_DATA_DIR", str(tmp_path))
    assert V.load_images("mnist").name == "mnist" and V.load_images("cifar10").name == "digits"
    assert V.check_data_dir() == ["mnist"]
    monkeypatch.setenv("VERIFY_DATA_DIR", str(tmp_path / "nope"))
    with pytest.raises(V.DataFormatError, match="not a directory"):
        V.find_data("mnist")


def test_the_cli_reports_a_bad_data_dir_in_one_line(tmp_path):
    _mnist(tmp_path, gz=False)
    (tmp_path / "t10k-labels-idx1-ubyte").write_bytes(b"garbage!")
    env = dict(os.environ, VERIFY_DATA_DIR=str(tmp_path),
               PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    r = subprocess.run([sys.executable, "-m", "verify.cli", "run", "-k", "B.Fig6", "--results", str(tmp_path / "r")],
                       capture_output=True, text=True, env=env, cwd=ROOT, timeout=120)
    assert r.returncode == 2
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("verify: error: VERIFY_DATA_DIR:") and "magic" in lines[0]


def test_digits_split():
    d = V.digits()
    assert d.X_train.shape == (1438, 1, 8, 8) and d.X_test.shape == (359, 1, 8, 8)
    assert set(d.y_train.tolist()) == set(range(10))


# ---------------------------------------------------------------------------
# Optimizers and the batched engine
# ---------------------------------------------------------------------------


def _tree(gen, B=3):
    return (torch.randn(B, 4, 5, generator=gen), torch.randn(B, 7, generator=gen))


def test_sngd_and_sps_steps(gen):
    p, g = _tree(gen), _tree(gen)
    gn = V.batch_norm(g)
    u, _ = V.scale_by_capped_normalized(0.3, 1e6).update(g, (), p, {})
    assert torch.allclose(V.batch_norm(u), torch.full_like(gn, 0.3))  # normalized: step length eta
    u, _ = V.scale_by_capped_normalized(0.3, 1e-4).update(g, (), p, {})
    assert torch.allclose(u[0], -1e-4 * g[0])  # the cap binds: SGD at lr cap
    loss = torch.tensor([0.5, 1.0, 2.0])
    u, _ = V.scale_by_stochastic_polyak(1e6).update(g, (), p, {"loss": loss})
    assert torch.allclose(u[1], -(loss / gn**2)[:, None] * g[1])  # Polyak step L/||g||^2 (L* = 0)
    u, _ = V.scale_by_stochastic_polyak(1e-3).update(g, (), p, {"loss": loss})
    assert torch.allclose(u[0], -1e-3 * g[0])  # the cap binds: SGD at lr cap


def test_the_controls_optimizer_mutants_change_one_factor(gen):
    """B.Fig5-7's controls: the Polyak step without the square, SNGD normalized per tensor."""
    p, g = _tree(gen), _tree(gen)
    gn = V.batch_norm(g)
    loss = torch.tensor([0.5, 1.0, 2.0])
    u, _ = optim.scale_by_polyak_unsquared(1e6).update(g, (), p, {"loss": loss})
    assert torch.allclose(u[1], -(loss / gn)[:, None] * g[1])
    u, _ = optim.scale_by_polyak_unsquared(1e-3).update(g, (), p, {"loss": loss})
    assert torch.allclose(u[0], -1e-3 * g[0])
    u, _ = optim.scale_by_capped_normalized_per_leaf(0.3, 1e6).update(g, (), p, {})
    for leaf in u:
        assert torch.allclose(V.batch_norm((leaf,)), torch.full_like(gn, 0.3))  # every tensor moves eta
    u, _ = optim.scale_by_capped_normalized_per_leaf(0.3, 1e-4).update(g, (), p, {})
    assert torch.allclose(u[1], -1e-4 * g[1])


def test_adam_without_bias_correction_is_adam_times_the_corrections(gen):
    """Its update is Adam's times (1 - b1^t)/sqrt(1 - b2^t) when eps is negligible (the same moments)."""
    p = tuple(t.double() for t in _tree(gen))  # float64: Adam's update is read off as a difference of parameters
    adam, mutant = V.adam(1e-2, eps=1e-12), optim.chain(optim.scale_by_adam_without_bias_correction(eps=1e-12),
                                                        optim.scale(1e-2))
    sa, sm = adam.init(p), mutant.init(p)
    for t in range(1, 6):
        g = tuple(t.double() for t in _tree(gen))
        ua, sa = adam.update(g, sa, p, {})
        um, sm = mutant.update(g, sm, p, {})
        factor = (1 - 0.9**t) / (1 - 0.999**t) ** 0.5
        for a, m in zip(ua, um):
            assert torch.allclose(m, factor * a, rtol=1e-8, atol=1e-12)


def test_adam_on_stacked_runs_is_adam_on_each_run(gen):
    p = _tree(gen)
    grads = [_tree(gen) for _ in range(5)]
    tr = V.adam(1e-2)
    state, params = tr.init(p), p
    for g in grads:
        u, state = tr.update(g, state, params, {})
        params = tuple(a + b for a, b in zip(params, u))
    for b in range(3):
        leaves = [t[b].clone().requires_grad_(True) for t in p]
        opt = torch.optim.Adam(leaves, lr=1e-2)
        for g in grads:
            for leaf, gi in zip(leaves, g):
                leaf.grad = gi[b].clone()
            opt.step()
        for leaf, t in zip(leaves, params):
            assert torch.allclose(leaf.detach(), t[b], atol=1e-6)


def test_batched_runs_equal_single_runs():
    """The vmap over runs and optimizers gives each run what it gets alone (same seed: same init and minibatches)."""
    data = V.digits()
    both = V.train(TINY, data, {"SGD": V.sgd(0.1), "SPS": V.scale_by_stochastic_polyak(1.0)}, [11, 12], 6, 16,
                   norm_every=3)
    alone = V.train(TINY, data, {"SPS": V.scale_by_stochastic_polyak(1.0)}, [12], 6, 16, norm_every=3)
    assert torch.allclose(both["SPS"].batch_loss[:, 1], alone["SPS"].batch_loss[:, 0], atol=1e-5)
    assert torch.allclose(both["SPS"].layer_norms[:, 1], alone["SPS"].layer_norms[:, 0], atol=1e-5)
    assert torch.allclose(both["SPS"].final["train_loss"][1], alone["SPS"].final["train_loss"][0], atol=1e-5)
    assert torch.equal(both["SGD"].batch_loss[0], both["SPS"].batch_loss[0])  # paired: same init, same minibatch
    assert both["SGD"].groups[0] == "position embedding + cls" and "head" in both["SGD"].groups
    assert both["SGD"].norm_steps.tolist() == [0, 3, 6]


def test_minibatches_are_epochs_of_permutations():
    idx = V.minibatches(10, 3, 7, [5, 6])
    assert idx.shape == (7, 2, 3)
    first_epoch = idx[:3, 0].flatten().tolist()
    assert len(set(first_epoch)) == 9  # 3 batches of 3 from one permutation of 10 (the last 1 dropped)
    assert not torch.equal(idx[:, 0], idx[:, 1])


# ---------------------------------------------------------------------------
# Issue 32: the paper's readings, the cap's binding, the free choices of B.Fig5-7
# ---------------------------------------------------------------------------


def test_per_epoch_means_and_matched_epochs():
    from theorems.paper_b.vision.metrics import matched_epochs, per_epoch

    x = torch.arange(14.0).reshape(7, 2)  # 7 steps, 2 runs
    assert per_epoch(x, 3).tolist() == [[2.0, 3.0], [8.0, 9.0]]  # the incomplete last epoch dropped
    assert matched_epochs(7) == [2, 4, 6, 7] and matched_epochs(40) == [10, 20, 30, 40] and matched_epochs(1) == [1]


def test_cap_bound_counts_the_steps_where_the_cap_is_the_step():
    from theorems.paper_b.vision.metrics import cap_bound

    g = torch.tensor([[0.1], [1.0], [10.0], [0.01]])
    L = torch.tensor([[1.0], [1.0], [1.0], [1.0]])
    run = V.VisionRun("x", L, torch.tensor([0]), torch.zeros(1, 1, 1), ["g"], grad_norm=g)
    # SNGD: lr/||g|| = 3, 0.3, 0.03, 30 against cap 1 -> 2 of 4; SPS: L/||g||^2 = 100, 1, 0.01, 1e4 -> 2 of 4
    assert cap_bound(run, "SNGD", {"SNGD": 0.3, "cap": 1.0}) == 0.5
    assert cap_bound(run, "SPS", {"SNGD": 0.3, "cap": 1.0}) == 0.5


def test_the_engine_records_the_gradient_norm():
    r = V.train(TINY, V.digits(), {"SGD": V.sgd(0.1)}, [3], 4, 16, norm_every=2)["SGD"]
    assert r.grad_norm.shape == (4, 1) and bool((r.grad_norm > 0).all())


def test_the_free_choices_move_the_runs_they_read():
    """B.Fig5-7's cap and horizon set their checks' runs; both moved at once (a corner of the grid) give one request of
    the shared fixture, B.Fig7's with its CIFAR-10 binding kept; the fixture trains the controls' mutants at every
    setting (a map re-runs the controls there)."""
    import inspect

    from theorems import fixture as fx
    from theorems.paper_b.vision.setups import CAP, EPOCHS, VARIANTS, vision_runs
    from verify import registry

    assert "controls" not in inspect.signature(vision_runs.fn).parameters
    for cid, check in (("B.Fig5", "sngd-slower"), ("B.Fig6", "sps-error"), ("B.Fig7", "sngd-slower")):
        claim = registry.get(cid)
        assert {f.name: f.value for f in claim.free_choices if not f.analysis} == {"cap": CAP, "epochs": EPOCHS}
        req = fx.as_request(claim.overrides_at(check, {"cap": 0.1, "epochs": 40})["vision"])
        args = req.arguments("quick")
        assert (args["cap"], args["epochs"], args["full_data"]) == (0.1, 40, None) and "controls" not in args
        assert req.arguments("full")["full_data"] == ("cifar10" if cid == "B.Fig7" else "mnist")
        for k in claim.controls:  # every control's mutant is among the variants trained at any setting
            mutant = next(iter(k.overrides.values()))
            assert mutant in VARIANTS
    adam = registry.get("B.Fig6").overrides_at("adam-no-faster", {"cap": 0.1, "epochs": 40})
    assert fx.as_request(adam["vision"]).arguments("quick")["cap"] == CAP  # Adam and SGD carry no cap


def test_the_readings_of_the_vision_figures_are_analysis_choices():
    """How B.Fig5-7's verdicts read the runs (the effect and metric of "slower", the factor of "significant") are
    analysis choices: plain parameters of their checks, one declaration of the effect and the metrics for B.Fig5 and
    B.Fig7, each claim's own metric its value."""
    from theorems import fixture as fx
    from theorems.paper_b.vision import fig6_vit_digits as F6
    from theorems.paper_b.vision.metrics import LEVEL, SLOWER, SLOWER_METRICS, SLOWER_RANGE
    from verify import registry

    assert f"steps to loss {LEVEL:g}" in SLOWER_METRICS and SLOWER_RANGE[0] == 0.0
    own = {"B.Fig5": "run-averaged log loss", "B.Fig7": f"steps to loss {LEVEL:g}"}
    for cid, metric in own.items():
        claim = registry.get(cid)
        slower, reading = claim.free_choice("slower by"), claim.free_choice("slower metric")
        assert slower.analysis and reading.analysis
        assert (slower.value, slower.low, slower.high) == (SLOWER, *SLOWER_RANGE)
        assert reading.value == metric and reading.levels == SLOWER_METRICS
        assert claim.overrides_at("sngd-slower", {"slower by": 0.0, "slower metric": SLOWER_METRICS[-1]}) == {
            "slower": 0.0, "metric": SLOWER_METRICS[-1]}
    factor = registry.get("B.Fig6").free_choice("significant factor")
    assert factor.analysis and (factor.value, factor.low, factor.high) == (F6.ADAM_FACTOR, *F6.ADAM_FACTOR_RANGE)
    assert F6.adam_margin(F6.ADAM_FACTOR) == F6.ADAM_MARGIN and F6.ADAM_MARGIN.half_width == math.log(2) / 2
    assert F6.adam_margin(4.0).half_width == math.log(2)
    for cid in own | {"B.Fig6": None}:
        for f in registry.get(cid).free_choices:
            if f.analysis:
                for check, at in f.sets.items():
                    assert not any(fx.is_fixture(v) for v in at(f.value).values())


def _run(loss: torch.Tensor) -> "V.VisionRun":
    return V.VisionRun("x", loss, torch.tensor([0]), torch.zeros(1, loss.shape[1], 1), ["g"])


def test_slower_values_read_each_metric_off_the_paired_runs():
    """SNGD's loss a factor e^0.3 above SGD's at every step: each gap is 0.3 (the hitting time of 0.5 one step
    later), the share of epochs above by 0.25 is 1 and by 0.35 is 0; a zero effect is strict."""
    from theorems.paper_b.vision.metrics import MOST, STRICT, slower_values

    base = torch.tensor([2.0 * 0.8**t for t in range(12)], dtype=torch.float64)[:, None].repeat(1, 3)
    runs = {"SGD": _run(base), "SNGD": _run(base * math.exp(0.3))}  # 12 steps: no smoothing (window 1)
    for metric in ("run-averaged log loss", "log loss at the last epoch"):
        d, bound, name, label = slower_values(runs, "SNGD", "SGD", 4, metric, 0.2)
        assert np.allclose(d, 0.3) and bound == 0.2 and "SNGD" in name and label
    d, bound, _, _ = slower_values(runs, "SNGD", "SGD", 4, "steps to loss 0.5", 0.0)
    assert np.allclose(d, math.log(9 / 8)) and bound == STRICT  # SGD at step 8 (2 x 0.8^7 <= 0.5), SNGD at 9
    d, bound, _, _ = slower_values(runs, "SNGD", "SGD", 4, "share of epochs above", 0.25)
    assert np.allclose(d, 1.0) and bound == MOST + STRICT
    assert np.allclose(slower_values(runs, "SNGD", "SGD", 4, "share of epochs above", 0.35)[0], 0.0)
    with pytest.raises(ValueError, match="unknown reading"):
        slower_values(runs, "SNGD", "SGD", 4, "steps to loss 0.1", 0.2)


@pytest.mark.slow
def test_the_frozen_step_sizes_are_the_grids_choice():
    """TUNED holds what tune() returns on the tuning seeds (its shortest horizon, every cap it holds there)."""
    from theorems.paper_b.vision.setups import TUNED, tune

    if not TUNED:
        pytest.skip("TUNED is empty: every setting is tuned in the run")
    e = min(k[0] for k in TUNED)
    caps = sorted(float(k[1]) for k in TUNED if k[0] == e)
    got = tune((e,), caps)
    for c in caps:
        from theorems.paper_b.vision.setups import cap_key
        assert got[(e, cap_key(c))] == TUNED[(e, cap_key(c))]


# ---------------------------------------------------------------------------
# Issue 46: one task per variant, gathered into the value B.Fig5-7 read
# ---------------------------------------------------------------------------


def _bits(run: V.VisionRun) -> list[torch.Tensor]:
    return [run.batch_loss, run.batch_error, run.grad_norm, run.norm_steps, run.layer_norms,
            *(run.final[k] for k in sorted(run.final))]


def test_a_variant_trained_alone_gives_the_bits_it_gives_beside_others():
    """Training each transform alone reproduces, bit for bit, its runs trained in one batch with another (and a chunk
    of the runs its slice): inits and minibatch orders come from the seeds alone, so the vision fixture can train one
    variant per task."""
    data, seeds = V.digits(), [11, 12, 13]
    make = {"Adam": lambda: V.adam(1e-2), "SPS": lambda: V.scale_by_stochastic_polyak(1.0)}
    both = V.train(TINY, data, {n: m() for n, m in make.items()}, seeds, 12, 16, norm_every=4)
    for n, m in make.items():
        alone = V.train(TINY, data, {n: m()}, seeds, 12, 16, norm_every=4)[n]
        assert alone.groups == both[n].groups
        assert all(torch.equal(a, b) for a, b in zip(_bits(alone), _bits(both[n]), strict=True)), n
    chunk = V.train(TINY, data, {"Adam": V.adam(1e-2)}, seeds[1:], 12, 16, norm_every=4)["Adam"]
    assert torch.equal(chunk.batch_loss, both["Adam"].batch_loss[:, 1:])
    assert torch.equal(chunk.final["test_loss"], both["Adam"].final["test_loss"][1:])


def test_the_vision_runs_gather_one_task_per_variant(monkeypatch):
    """vision_runs gathers one variant_runs request per variant (sharing one step-size request), B.Fig7's digits runs
    are B.Fig5-6's below the full budget, a setting bound with vision_at reaches every part, and a gatherer bound
    alone (its parts at another setting) is refused."""
    from theorems import fixture as fx
    from theorems.context import Context
    from theorems.paper_b.vision import setups as S

    req = fx.as_request(S.vision_runs)
    parts = req.dependencies()
    assert [parts[f"each[{i}]"].params["variant"] for i in range(len(S.VARIANTS))] == [v.name for v in S.VARIANTS]
    for budget in ("quick", "standard"):
        assert fx.as_request(S.CIFAR10_RUNS).key(budget) == req.key(budget)
    assert fx.as_request(S.CIFAR10_RUNS).key("full") != req.key("full")
    moved = S.vision_at(S.CIFAR10_RUNS, cap=0.1, epochs=5)
    assert all(r.arguments("full")["cap"] == 0.1 and r.arguments("full")["epochs"] == 5
               for r in fx.closure([moved]) if r.fixture is not S.vision_runs)
    assert moved.arguments("full") == dict(full_data="cifar10", epochs=5, cap=0.1)

    trained = []

    def fake_train(config, data, transforms, seeds, steps, batch, norm_every=10, device="cpu"):
        trained.append(list(transforms))
        z = torch.zeros(steps, len(seeds))
        return {n: V.VisionRun(n, z, torch.arange(2), z[:2, :, None], ["g"], {}, z, z) for n in transforms}

    monkeypatch.setattr(S.V, "train", fake_train)
    ctx = Context(seed=0, budget="quick")
    runs, setup = fx.resolve(S.vision_runs, ctx)
    assert list(runs) == [v.name for v in S.VARIANTS] and setup["runs"] == S.RUNS[0] and setup["cap"] == S.CAP
    assert runs["SGD"].batch_loss.shape == (setup["steps"], S.RUNS[0])
    assert trained == [[v.name] for v in S.VARIANTS]  # one task per variant, none trained again by the gatherer
    trained.clear()
    runs, setup = fx.resolve(S.vision_runs.bind(cap=0.1), ctx)  # a map's point: the setting on the gatherer alone
    assert setup["cap"] == 0.1 and list(runs) == [v.name for v in S.VARIANTS]
    assert trained[-1] == [v.name for v in S.VARIANTS]  # its parts are at the claims' cap: it trains every variant
