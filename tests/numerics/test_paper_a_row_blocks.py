"""Paper A's Monte Carlo engines make their O(n^2) work in cache-sized row blocks of each chunk
(``numerics.paper_a.model.BLOCK_ELEMS``): the results must be bitwise those of the whole chunk at once, since the
draws are the chunk's and every row's arithmetic is the same (the published records rely on it)."""
import pytest
import torch

from numerics import DTYPE
from numerics.paper_a import experiments as ex
from numerics.paper_a import geometry as ge
from numerics.paper_a import model
from numerics.paper_a import moments as mo
from numerics.paper_a.algorithms import random_instance

#: blocks of two rows (the fewest), of a few rows, and one block per chunk
SMALLEST, SMALL, WHOLE = 1, 2**12, 2**40


def _setup(B=3):
    g = torch.Generator().manual_seed(0)
    Sigma, W = random_instance(3, 4, g, m_op=0.1)
    (V, K), _ = ge.perturb_from_manifold(Sigma, W, 0.05, B, g)
    return Sigma, W, V, K


def _flat(result, path: str = "") -> list[tuple[str, torch.Tensor]]:
    """Every tensor of a result (a tensor, a dataclass, dicts and tuples of them) with its path, in a fixed order."""
    if isinstance(result, torch.Tensor):
        return [(path, result)]
    if isinstance(result, dict):
        items = result.items()
    elif isinstance(result, (tuple, list)):
        items = enumerate(result)
    elif hasattr(result, "__dataclass_fields__"):
        items = ((f, getattr(result, f)) for f in result.__dataclass_fields__)
    else:
        return []
    return [leaf for k, v in items for leaf in _flat(v, f"{path}/{k}")]


def _bitwise_equal(a, b) -> bool:
    fa, fb = _flat(a), _flat(b)
    return (len(fa) > 0 and [p for p, _ in fa] == [p for p, _ in fb]
            and all(torch.equal(x, y) for (_, x), (_, y) in zip(fa, fb)))


def _engines():
    Sigma, W, V, K = _setup()
    xq = torch.tensor([[0.5, -0.2, 0.1], [0.0, 0.3, 0.4]], dtype=DTYPE)
    eye = torch.eye(3, dtype=DTYPE)
    return {
        "loo gap": lambda g: model.loo_gap_samples(V, K, Sigma, W, 0.3, 24, 50, g, max_elems=2**15),
        "loo gap, include self": lambda g: model.loo_gap_samples(V, K, Sigma, W, 0.3, 24, 50, g, include_self=True,
                                                                 max_elems=2**15),
        "gradient bias": lambda g: mo.gradient_bias_samples(V, K, Sigma, W, 16, 60, g, sigma=0.2, max_elems=2**14,
                                                            n_err=20),
        "gradient bias, include self": lambda g: mo.gradient_bias_samples(V, K, Sigma, W, 16, 60, g, include_self=True,
                                                                          max_elems=2**14, n_err=20),
        "row stats": lambda g: mo.softmax_row_stats(K[0], Sigma, xq, 20, 200, g, max_elems=2**14),
        "poincare": lambda g: mo.poincare_samples(K[0], Sigma, xq[0], 12, 40, g, weightings={"I": eye}, chunk=16),
        "oracle bias": lambda g: ex.oracle_bias_samples(V, K, Sigma, W, 16, 30, g),
        "oracle bias, no regularizer": lambda g: ex.oracle_bias_samples(V, K, Sigma, W, 16, 30, g,
                                                                        reg_Sigma=torch.eye(3, dtype=DTYPE)),
    }


@pytest.mark.parametrize("block_elems", [SMALLEST, SMALL])
@pytest.mark.parametrize("name", list(_engines()))
def test_row_blocks_give_the_whole_chunks_bits(name, block_elems, monkeypatch):
    engine = _engines()[name]

    def run(elems):
        monkeypatch.setattr(model, "BLOCK_ELEMS", elems)
        return engine(torch.Generator().manual_seed(5))

    assert _bitwise_equal(run(block_elems), run(WHOLE))


def test_row_blocks_cover_the_rows_in_order(monkeypatch):
    monkeypatch.setattr(model, "BLOCK_ELEMS", 10)
    assert [(b.start, b.stop) for b in model.row_blocks(8, 3)] == [(0, 3), (3, 6), (6, 8)]
    # never a block of one row (unless there is one row): a one-row tail joins the block before it
    assert [(b.start, b.stop) for b in model.row_blocks(5, 50)] == [(0, 2), (2, 5)]
    assert [(b.start, b.stop) for b in model.row_blocks(1, 50)] == [(0, 1)]
    assert [(b.start, b.stop) for b in model.row_blocks(10, 3)] == [(0, 3), (3, 6), (6, 10)]
    assert model.row_blocks(0, 3) == []


def test_the_comparison_sees_a_changed_bit():
    """The check above can fail: a result whose last bit moved in one entry is not bitwise equal."""
    a = {"x": torch.ones(3, dtype=DTYPE)}
    b = {"x": torch.ones(3, dtype=DTYPE)}
    b["x"][1] = torch.nextafter(b["x"][1], torch.tensor(2.0, dtype=DTYPE))
    assert _bitwise_equal(a, a) and not _bitwise_equal(a, b)
