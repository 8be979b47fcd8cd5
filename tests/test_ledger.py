"""The decision ledger: every decision constant of every claim (and of the fixtures it uses) says why it has its
value, and its ledger entry (``theorems/paper_X/ledger/<module>.toml``, docs/ledger.md) has its current value, the
commit that fixed it, whether that was after seeing the data it decides, and for a change after the data what
prompted it."""
import pytest

from verify import ledger, registry

CLAIMS = [c for c in registry.all_claims() if not c.not_checked]
MODULES = sorted({m for c in CLAIMS if c.module.startswith("theorems.") for m in ledger.claim_modules(c)})


@pytest.mark.parametrize("claim", CLAIMS, ids=[c.id for c in CLAIMS])
def test_every_decision_constant_has_a_reason(claim):
    missing = [f"{p['module']}.{p['name']}" for p in ledger.claim_constants(claim) if not p["reason"]]
    assert not missing, "constants without a one-line reason: " + ", ".join(missing)


@pytest.mark.parametrize("module", MODULES)
def test_ledger_matches_the_code(module):
    bad = ledger.problems(module)
    assert not bad, "the decision ledger disagrees with the code (docs/ledger.md):\n" + "\n".join(bad)


def test_constants_are_read_with_their_comments(tmp_path, monkeypatch):
    (tmp_path / "ledger_demo.py").write_text(
        '"""doc"""\nID = "X.1"\n#: the window: the first decade is transient\nWINDOW = 0.1\n'
        'TOL = 1e-9  # rounding of float64 sums\nA, B = 1, 2  # two sizes\n\nBARE = 3\n'
        'NS = [8,\n      16]  # two sizes\n')
    monkeypatch.syspath_prepend(str(tmp_path))
    got = {p["name"]: p for p in ledger.module_constants("ledger_demo")}
    assert set(got) == {"WINDOW", "TOL", "A", "B", "BARE", "NS"}
    assert got["WINDOW"]["reason"].startswith("the window") and got["WINDOW"]["seen"] == ""
    assert got["TOL"]["reason"] == "rounding of float64 sums" and got["A"]["source"] == "1"
    assert got["B"]["value"] == "2" and got["BARE"]["reason"] == "" and got["NS"]["expr"] == "[8, 16]"


def test_problems_name_what_to_add(tmp_path, monkeypatch):
    (tmp_path / "ledger_demo2.py").write_text('#: a window\nWINDOW = 0.1\n#: a count\nRUNS = 12\n#: a margin\nTOL = 0.5\n')
    (tmp_path / "ledger").mkdir()
    (tmp_path / "ledger" / "ledger_demo2.toml").write_text(
        '[WINDOW]\nvalue = "0.2"\nfixed_at = "abc1234"\nseen = "before"\n'
        '[TOL]\nvalue = "0.5"\nfixed_at = "abc1234"\nseen = "after"\n'
        '[[TOL.changes]]\ncommit = "abc1234"\nwas = "0.1"\nseen = "after"\nseed = "quick 3"\n'
        'result = "a miss"\nverdict_before = "violated"\ndirection = "toward verified"\nkind = "redefinition"\n'
        '[GONE]\nvalue = "1"\nfixed_at = "abc1234"\nseen = "before"\n')
    monkeypatch.syspath_prepend(str(tmp_path))
    text = "\n".join(ledger.problems("ledger_demo2"))
    assert "ledger_demo2.WINDOW: the code says '0.1', the ledger '0.2'" in text
    assert "ledger_demo2.RUNS: no ledger entry" in text and '[RUNS]\nvalue = "12"' in text
    assert "ledger_demo2.TOL.changes[0] (after seeing data): add verdict_after" in text
    assert "ledger_demo2.GONE: the ledger has an entry but the code has no such constant" in text


def test_tally_counts_after_data_and_toward_verified():
    after = {"seen": "after", "changes": [{"seen": "after", "direction": "toward verified", "kind": "power"}]}
    cs = [{"module": "m", "name": "A", **after}, {"module": "m", "name": "A", **after},
          {"module": "m", "name": "B", "seen": "before", "changes": []},
          {"module": "m", "name": "C", "seen": "after",
           "changes": [{"seen": "after", "direction": "toward violated", "kind": "power"}]}]
    t = ledger.tally(cs)
    assert (t["n"], t["after"], t["toward_verified"], t["kinds"]["power"]) == (3, 2, 1, 2)
