"""Reproducibility: a vision run at a seed is the same bits at any thread count, and ``verify readme --check``
compares each row's headline values with the records' within its engine's tolerance (docs/statistics.md)."""
import copy
import hashlib
import os
import subprocess
import sys
from pathlib import Path

import pytest
import torch

from theorems.claim import Context
from verify import readme

ROOT = Path(__file__).resolve().parent.parent

#: tests/test_vision.py's TINY ViT: a small run of the vision engine
TINY = dict(image_size=8, patch_size=4, num_classes=10, dim=8, depth=1, heads=2, dim_head=4, mlp_dim=8, channels=1)


def _digest(runs) -> str:
    """The hash of every number a run of the engine returns."""
    h = hashlib.sha256()
    for r in runs.values():
        for t in (r.batch_loss, r.batch_error, r.grad_norm, r.layer_norms, *r.final.values()):
            h.update(t.numpy().tobytes())
    return h.hexdigest()


def _tiny_run():
    from numerics.paper_b import vision as V

    return V.train(TINY, V.digits(), {"SGD": V.sgd(0.1), "SPS": V.scale_by_stochastic_polyak(1.0),
                                      "Adam": V.adam(1e-2)}, [11, 12, 13, 14], 12, 32, norm_every=4)


def test_a_vision_run_is_the_same_bits_at_one_and_two_threads():
    """The engine trains at its own thread count (``vision.ENGINE_THREADS``) with deterministic algorithms, whatever
    the caller's: torch.set_num_threads 1 and 2 give identical numbers, and the caller's setting is kept."""
    before = torch.get_num_threads()
    out = {}
    try:
        for n in (2, 1):
            torch.set_num_threads(n)
            out[n] = _digest(_tiny_run())
            assert torch.get_num_threads() == n
    finally:
        torch.set_num_threads(before)
    assert out[1] == out[2]


_RUN = """
import sys, torch
torch.set_num_threads(int(sys.argv[1]))
from tests.test_reproducible import _digest, _tiny_run
print(_digest(_tiny_run()))
"""


@pytest.mark.slow  # two fresh interpreters importing torch: 10-20 s on an idle 2-core machine
def test_a_vision_run_is_the_same_bits_under_omp_num_threads_1_and_2():
    """As above, with the thread count set from the environment of a fresh process (OMP_NUM_THREADS, as a machine
    with other defaults would start one)."""
    out = {}
    for n in (1, 2):
        env = {**os.environ, "OMP_NUM_THREADS": str(n), "MKL_NUM_THREADS": str(n)}
        p = subprocess.run([sys.executable, "-c", _RUN, str(n)], cwd=ROOT, env=env, capture_output=True, text=True,
                           timeout=300)
        assert p.returncode == 0, p.stderr
        out[n] = p.stdout.strip()
    assert out[1] == out[2]


def test_deterministic_restores_the_threads_and_the_algorithms_flag():
    from numerics.paper_b import vision as V

    before = torch.get_num_threads(), torch.are_deterministic_algorithms_enabled()
    with V.deterministic(threads=1):
        assert torch.get_num_threads() == 1 and torch.are_deterministic_algorithms_enabled()
    assert (torch.get_num_threads(), torch.are_deterministic_algorithms_enabled()) == before


# ---------------------------------------------------------------------------
# verify readme --check: headline values within their tolerance
# ---------------------------------------------------------------------------


def _claims():
    """Two made-up numeric claims with a control each, and one not checked."""
    from theorems.claim import Check, Claim, Control, Measurement, Outcome

    def rate(name, value, lo, hi):
        return lambda ctx, wrong=False: Outcome("pass", "not rejected" if wrong else "ok",
                                                [Measurement(name, value, lo, hi, "= 0.09 (derived)")])

    claims = [Claim(f"Z.L{i}", "A lemma", r"\alpha \le \frac{1}{2}", "qualitative", "Made up.",
                    checks=(Check("rate", "numeric", "a rate", rate(*m)),),
                    controls=(Control("wrong", "rate", "a wrong variant", {"wrong": True}),))
              for i, m in ((2, ("alpha", 0.72, 0.70, 0.74)), (3, ("beta", -1.5, -1.6, -1.4)))]
    claims.append(Claim("Z.Fig4", "BERT on MNLI", r"\text{BERT fine-tuned on MNLI}", "qualitative", "Seed text only.",
                        not_checked="needs pretrained BERT and MNLI; not reproducible offline"))
    for c in claims:
        object.__setattr__(c, "module", __name__)
    return claims


@pytest.fixture(scope="module")
def recs():
    from verify import runner

    return [runner.run_claim(c, Context()) for c in _claims()]


def _page(tmp_path, recs, name="claims.md") -> str:
    md = tmp_path / name
    md.write_text(f"intro\n\n{readme.BEGIN}\n{readme.END}\n")
    kw = {"first_seeds": {r["claim"]["id"]: r["seed"] for r in recs}, "maps": {}, "calibrations": {}}
    return readme.update(md, recs, **kw)[0]


def _scaled(recs, cid: str, factor: float, shift: float = 0.0) -> list[dict]:
    """The records with every value of ``cid``'s headline check multiplied by ``factor``, plus ``shift``."""
    out = copy.deepcopy(recs)
    rec = next(r for r in out if r["claim"]["id"] == cid)
    for m in readme._table_check(rec)["measurements"]:
        for k in ("value", "lo", "hi"):
            if isinstance(m.get(k), float):
                m[k] = m[k] * factor + shift
    return out


def test_the_page_stores_each_rows_headline_values_from_the_records(tmp_path, recs):
    stored = readme.stored_values(_page(tmp_path, recs))
    lemma = next(r for r in recs if r["claim"]["id"] == "Z.L2")
    assert stored["Z.L2"] == {"id": "Z.L2", "engine": "float64", "values": readme.headline_values(lemma)}
    assert stored["Z.L2"]["values"] == {"alpha": 0.72, "alpha [lo]": 0.7, "alpha [hi]": 0.74}  # its headline's numbers
    assert "Z.Fig4" not in stored  # not checked: no values


def test_readme_check_flags_a_headline_moved_beyond_its_tolerance_and_accepts_one_within(tmp_path, recs):
    stored = _page(tmp_path, recs)
    rtol, _ = readme.TOLERANCES["float64"]
    assert readme.moved(stored, _page(tmp_path, recs)) == []
    assert readme.moved(stored, _page(tmp_path, _scaled(recs, "Z.L2", 1 + rtol / 10))) == []
    lines = readme.moved(stored, _page(tmp_path, _scaled(recs, "Z.L2", 1 + rtol * 10)))
    assert len(lines) == 1 and lines[0].startswith("Z.L2: alpha") and "float64 tolerance" in lines[0], lines
    assert "(and 2 more)" in lines[0]  # one line per row, however many of its values moved
    two = readme.moved(stored, _page(tmp_path, _scaled(_scaled(recs, "Z.L2", 1.01), "Z.L3", 1.01)))
    assert sorted(x.split(":")[0] for x in two) == ["Z.L2", "Z.L3"]


def test_values_written_on_a_machine_with_other_arithmetic_are_held_to_the_tolerance_across_machines(
        tmp_path, recs, monkeypatch):
    """The page stores its writer's arithmetic; read on a machine whose arithmetic differs, a float64 headline may
    move as a last-bit-sensitive training run moves across machines, not beyond."""
    stored = _page(tmp_path, recs)
    assert readme.stored_values(stored)["arithmetic"] == readme.arithmetic()
    assert readme.same_arithmetic(stored, _page(tmp_path, recs))
    monkeypatch.setattr(readme, "arithmetic", lambda: "another-cpu")
    rtol, _ = readme.ACROSS_MACHINES["float64"]
    moved_a_little = _page(tmp_path, _scaled(recs, "Z.L2", 1 + rtol / 10))
    assert not readme.same_arithmetic(stored, moved_a_little) and readme.moved(stored, moved_a_little) == []
    lines = readme.moved(stored, _page(tmp_path, _scaled(recs, "Z.L2", 1 + rtol * 10)))
    assert len(lines) == 1 and "float64 tolerance across machines" in lines[0], lines


def test_the_arithmetic_fingerprint_is_the_same_at_any_thread_count_and_moves_with_the_blas_code_path():
    here = readme.arithmetic()
    threads = torch.get_num_threads()
    torch.set_num_threads(2)
    try:
        assert readme.arithmetic() == here and torch.get_num_threads() == 2  # and the setting is restored
    finally:
        torch.set_num_threads(threads)
    code = "from verify import readme; print(readme.arithmetic())"
    other = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                           env={**os.environ, "MKL_CBWR": "COMPATIBLE"}).stdout.strip()
    assert len(other) == 12 and other != here


def test_a_float32_row_is_held_to_the_float32_tolerance(tmp_path, recs, monkeypatch):
    monkeypatch.setattr(readme, "engine", lambda rec: "float32")
    rtol, atol = readme.TOLERANCES["float32"]
    stored = _page(tmp_path, recs)
    assert readme.moved(stored, _page(tmp_path, _scaled(recs, "Z.L2", 1.0, atol / 2))) == []
    lines = readme.moved(stored, _page(tmp_path, _scaled(recs, "Z.L2", 1.0 + rtol, 2 * atol)))
    assert len(lines) == 1 and lines[0].startswith("Z.L2: ") and "float32 tolerance" in lines[0], lines


def test_a_page_without_stored_values_cannot_pass_the_check(tmp_path, recs):
    new = _page(tmp_path, recs)
    old = new.split(readme.VALUES)[0] + readme.END + "\n"
    assert readme.moved(old, new) == ["the stored page has no headline values to compare (written before they were "
                                      "stored)"]


def test_the_engine_is_read_off_the_claims_imports():
    assert readme.engine({"claim": {"module": "theorems.paper_b.vision.fig5_vit_digits"}}) == "float32"
    assert readme.engine({"claim": {"module": "theorems.paper_a.softmax_bias.t4_gradient_loss"}}) == "float64"


def test_stored_values_survive_a_double_dash_in_a_name(tmp_path, recs):
    out = copy.deepcopy(recs)
    rec = next(r for r in out if r["claim"]["id"] == "Z.L2")
    readme._table_check(rec)["measurements"][0]["name"] = "a --> b"
    page = _page(tmp_path, out)
    comment = page.split(readme.VALUES, 1)[1].split("\n-->", 1)[0]
    assert "--" not in comment and readme.stored_values(page)["Z.L2"]["values"]["a --> b"] == 0.72


@pytest.fixture
def readme_check(tmp_path, recs, monkeypatch):
    """``verify readme --check`` over the registry of :func:`_claims` and a page written from ``recs``: a function
    that runs it on the records it is given and returns the exit status."""
    from verify import calibrate, cli, registry, results, sensitivity

    claims = _claims()
    monkeypatch.setattr(registry, "all_claims", lambda: claims)
    monkeypatch.setattr(registry, "code_hash", lambda c: next(r["code_hash"] for r in recs if r["claim"]["id"] == c.id))
    monkeypatch.setattr(sensitivity, "published_maps", lambda *a, **k: {})
    monkeypatch.setattr(readme, "load_calibrations", lambda: {})
    monkeypatch.setattr(calibrate, "first_confirmation_seeds",
                        lambda cs, budget=None: {r["claim"]["id"]: r["seed"] for r in recs})
    page = tmp_path / "claims.md"
    page.write_text(_page(tmp_path, recs, "written.md"))

    def check(records) -> int:
        monkeypatch.setattr(results, "read_records", lambda d: records)
        return cli.main(["readme", "--check", "--readme", str(page), "--results", str(tmp_path)])
    return check


def test_verify_readme_check_prints_one_line_per_row_moved(recs, readme_check, capsys):
    """The command: ``verify readme --check`` against a page written from these records passes, and against records
    whose Z.L2 headline moved beyond its tolerance fails with that row's line."""
    assert readme_check(recs) == 0
    assert readme_check(_scaled(recs, "Z.L2", 1.01)) == 1
    err = capsys.readouterr().err
    assert "differs from the records in its headline values" in err and "\n  Z.L2: alpha" in err, err


def test_verify_readme_check_fails_on_a_check_that_raised(recs, readme_check, capsys):
    """A check that raised makes its claim inconclusive, an outcome a measured seed dependence may absorb: the check
    CI runs on the report's records refuses it, naming the claim, the check and the error."""
    crashed = copy.deepcopy(recs)
    check = next(r for r in crashed if r["claim"]["id"] == "Z.L2")["checks"][0]
    check["details"] = {**(check.get("details") or {}), "raised": True,
                        "error": "AttributeError: 'function' object has no attribute 'isf'\nFailing test case: ..."}
    assert readme_check(crashed) == 1
    err = capsys.readouterr().err
    assert f"Z.L2 check {check['name']!r}: AttributeError: 'function' object has no attribute 'isf'" in err, err
    assert readme_check(recs) == 0
