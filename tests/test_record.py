"""The verdict of record (a claim's outcome over its confirmation seeds) and its class over the free choices
(``verify.record``): the rules as tables, one row per case."""
from __future__ import annotations

import pytest

from verify import record


@pytest.mark.parametrize("counts, verdict", [
    ({"verified": 20}, "verified"),
    ({"verified": 18, "inconclusive": 2}, "verified"),        # undecided at 10 %: the power the quick tier is held to
    ({"verified": 17, "inconclusive": 3}, "inconclusive"),
    ({"verified": 19, "violated": 1}, "inconclusive"),        # a violation at any seed is evidence against
    ({"verified": 11, "inconclusive": 9}, "inconclusive"),    # seed-dependent
    ({"inconclusive": 20}, "inconclusive"),
    ({"violated": 20}, "violated"),
    ({"violated": 18, "inconclusive": 2}, "violated"),
    ({"violated": 1, "inconclusive": 4}, "inconclusive"),
    ({"verified": 5}, "verified"),                            # 5 standard seeds: all 5
    ({"verified": 4, "inconclusive": 1}, "inconclusive"),
    ({"verified": 1}, "verified"),                            # a draw at the first confirmation seed
    ({}, "inconclusive"),
])
def test_the_verdict_of_record_reads_the_distribution(counts, verdict):
    assert record.from_counts(counts) == verdict


def _row(verdicts, stale=False, code_hash="old"):
    return {"verdicts": {i: v for i, v in enumerate(verdicts)}, "stale": stale, "code_hash": code_hash}


def test_the_verdict_of_record_is_shown_as_a_distribution():
    r = record.of_record(None, _row(["verified"] * 18 + ["inconclusive"] * 2), "quick")
    assert r["verdict"] == "verified" and r["source"] == "calibration" and r["n"] == 20
    assert r["text"] == "verified at 18 of 20 quick confirmation seeds (inconclusive at 2)"


def test_a_calibration_of_older_code_is_flagged_and_yields_to_a_disagreeing_draw():
    draw = {"verdict": "violated", "code_hash": "new"}
    agree = record.of_record({"verdict": "verified", "code_hash": "new"}, _row(["verified"] * 5, stale=True),
                             "standard")
    assert agree["verdict"] == "verified" and agree["older_code"] and "of older code" in agree["text"]
    differ = record.of_record(draw, _row(["verified"] * 5, stale=True), "standard")
    assert differ["verdict"] == "inconclusive" and "re-calibrate" in differ["text"]


def test_a_carried_row_says_whether_a_canary_carried_its_code_or_only_its_seeds_were_kept():
    by_canary = record.of_record(None, {**_row(["verified"] * 5), "carried": True}, "standard")
    assert by_canary["text"].endswith("carried forward to this code (identical at the canary seeds)")
    seeds = record.of_record(None, {**_row(["verified"] * 5), "carried": True, "seeds_carried": True}, "standard")
    assert "canary" not in seeds["text"]
    assert seeds["text"].endswith("at seeds derived before a claim sharing its fixtures changed")
    assert seeds["verdict"] == by_canary["verdict"] == "verified" and not seeds["older_code"]


def test_without_a_calibration_only_a_confirmation_draw_counts():
    draw = {"verdict": "verified", "code_hash": "h"}
    assert record.of_record(draw, None, "quick")["text"].startswith("verified at 1 of 1 quick confirmation seed")
    dev = record.of_record(draw, None, "quick", confirmation_draw=False)
    assert dev["verdict"] == "inconclusive" and dev["text"].startswith("not confirmed")


def _map(verdicts, choices=("cap", "epochs"), depends=None):
    return {"choices": [{"name": c} for c in choices], "settings": [{"verdict": v} for v in verdicts],
            "depends_on": depends or {}}


CHOICES = ["cap", "epochs"]


@pytest.mark.parametrize("verdict, choices, smap, klass", [
    ("verified", CHOICES, _map(["verified"] * 9), "verified over the range"),
    ("verified", [], None, "verified over the range"),                               # no free choice, with its reason
    ("verified", CHOICES, _map(["verified"] * 8 + ["violated"], depends={"cap": ["verified at cap=1, violated at "
                                                                                  "cap=0.1"]}),
     "verified at our values only"),                                                   # changes at one setting
    ("verified", CHOICES, None, "verified at our values only"),                       # not mapped
    ("violated", CHOICES, _map(["violated"] * 9), "violated over the range"),
    ("violated", [], None, "violated over the range"),
    ("violated", CHOICES, _map(["violated"] * 8 + ["verified"]), "depends on a choice"),
    ("violated", CHOICES, None, "depends on a choice"),                               # not shown over the range
    ("violated", CHOICES + ["effect"], _map(["violated"] * 9), "depends on a choice"),  # map predates a choice
    ("inconclusive", CHOICES, _map(["verified"] * 9), "inconclusive"),
    ("not checked", [], None, "not checked"),
])
def test_verdict_classes(verdict, choices, smap, klass):
    assert record.verdict_class(verdict, choices, smap, no_free_choice="a reason")["class"] == klass


def test_a_class_says_why_where_it_is_not_over_the_range():
    why = record.verdict_class("verified", CHOICES, _map(["verified"] * 8 + ["violated"], depends={"cap": [
        "verified at cap=1, violated at cap=0.1"]}))["why"]
    assert why == "verified at 8 of 9 settings; depends on cap (verified at cap=1, violated at cap=0.1)"
    assert "does not vary effect" in record.verdict_class("violated", CHOICES + ["effect"],
                                                          _map(["violated"] * 9))["why"]
    assert "map of older code" in record.verdict_class("verified", CHOICES, _map(["verified"]), older_map=True)["why"]


def test_standing_reads_a_record_its_calibration_row_and_its_map():
    rec = {"claim": {"id": "X.1", "paper": "X", "free_choices": [{"name": "cap"}], "no_free_choice": ""},
           "verdict": "verified", "code_hash": "h", "budget": "quick", "seed": 7}
    cal = {"claims": [{"id": "X.1", "verdicts": {1: "verified", 2: "verified"}, "code_hash": "h", "stale": False}]}
    s = record.standing(rec, cal, {"X.1": {**_map(["verified", "verified"], ("cap",)), "code_hash": "h"}})
    assert (s["class"], s["record"]["text"]) == ("verified over the range", "verified at 2 of 2 quick confirmation "
                                                                            "seeds")
    assert record.class_counts([s["class"]])["verified over the range"] == 1
