"""The exact odds report: computed through the engine's settlement, never typed in."""

from __future__ import annotations

import json
from fractions import Fraction

from roulette.layout import PAYS_BY_NAME
from server.cli import main
from tools.roulette_odds import announced_rows, combination_rows, prisoner_value


def by_group(rows):
    out = {}
    for r in rows:
        out.setdefault(r.group, set()).add(r.rtp)
    return out


def test_every_combination_returns_36_37_except_the_simple_chances():
    groups = by_group(combination_rows())
    for group, values in groups.items():
        if not group.startswith("simple chance"):
            assert values == {Fraction(36, 37)}, group
    # 18/37 x 2 + 1/37 x V, V the prisoner's value
    assert groups["simple chance, en prison, 2nd zero loses"] == {Fraction(1350, 1369)}
    assert groups["simple chance, en prison, 2nd zero stays"] == {Fraction(73, 74)}
    assert groups["simple chance, partage on zero"] == {Fraction(73, 74)}
    assert len(combination_rows()) == 151 + 6 * 3


def test_prisoner_value_under_each_policy():
    assert prisoner_value("rouge", "lose") == Fraction(18, 37)
    assert prisoner_value("rouge", "stay") == Fraction(1, 2)  # V = 18/37 + V/37


def test_every_announced_bet_returns_36_37():
    rows = announced_rows()
    assert {r.rtp for r in rows} == {Fraction(36, 37)}
    assert len(rows) == 3 + 10 + 16 + 37 * 9


def test_report_follows_the_engines_payouts(monkeypatch):
    monkeypatch.setitem(PAYS_BY_NAME, "plein 17", 34)
    rtp = {r.name: r.rtp for r in combination_rows()}
    assert rtp["plein 17"] == Fraction(35, 37) and rtp["plein 18"] == Fraction(36, 37)
    announced = {r.name: r.rtp for r in announced_rows()}
    assert announced["orphelins"] == Fraction(36, 37)  # no 17 en plein
    assert announced["17 et 1 voisins"] == Fraction(3 * 36 - 1, 3 * 37)


def test_cli_json(capsys):
    assert main(["rtp", "roulette", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    plein = next(r for r in doc["combinations"] if r["name"] == "plein 0")
    assert plein == {
        "group": "plein", "name": "plein 0", "pays": "35:1", "rtp": "36/37",
        "rtp_percent": "97.297297", "house_edge_percent": "2.702703",
    }  # fmt: skip
    assert {r["name"] for r in doc["announced"]} >= {"voisins du zéro", "finale à cheval 1/2"}


def test_cli_text(capsys):
    assert main(["rtp", "roulette"]) == 0
    out = capsys.readouterr().out
    assert "1350/1369" in out and "98.6121" in out and "voisins du zéro" in out
