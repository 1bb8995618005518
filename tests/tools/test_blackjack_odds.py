"""The exact odds report against probabilities worked out by hand for a six-deck shoe
(312 cards, 6 of each card, 24 of each rank, 78 of each suit)."""

import json
from fractions import Fraction as F

from blackjack.profiles import builtin
from blackjack.strategy import dealer_outcomes
from server.cli import main
from tools.blackjack_odds import blazing_odds, dealer_finals, side_bet_report

ORDERED3 = 312 * 311 * 310  # ordered draws of the box's two cards and the up card
ORDERED2 = 312 * 311


def test_perfect_pairs_exact():
    pp = side_bet_report(builtin("lugano")).perfect_pairs
    probs = {ln.line: ln.probability for ln in pp.lines}
    # The second card matches the first's rank: 5 of its suit, 6 of the other suit of its
    # colour, 12 of the other colour, out of 311.
    assert probs == {"perfect": F(5, 311), "coloured": F(6, 311), "mixed": F(12, 311)}
    assert pp.rtp == F(5 * 27 + 6 * 13 + 12 * 7, 311)  # 297/311, house edge 4.50%


def test_21_plus_3_exact():
    t3 = side_bet_report(builtin("lugano")).twenty_one_plus_three
    probs = {ln.line: ln.probability for ln in t3.lines}
    straight_flush = 12 * 4 * 6**3 * 6  # 12 runs (A23 .. QKA), 4 suits, 6 copies each, 3! orders
    trips = 312 * 23 * 22
    suited_trips = 312 * 5 * 4  # a three of a kind, not a flush
    assert probs["straight_flush"] == F(straight_flush, ORDERED3)
    assert probs["three_of_a_kind"] == F(trips, ORDERED3)
    assert probs["straight"] == F(12 * 6 * 24**3 - straight_flush, ORDERED3)
    assert probs["flush"] == F(312 * 77 * 76 - straight_flush - suited_trips, ORDERED3)
    assert t3.rtp == sum(p * (1 + pays) for p, pays in zip(probs.values(), (30, 20, 10, 5), strict=True))
    assert round(float(1 - t3.rtp), 5) == 0.13390


def test_dealer_outcomes_and_push_22():
    d = dealer_finals(6, False)
    assert sum(d.values()) == 1
    assert d["blackjack"] == F(2 * 24 * 96, ORDERED2)
    # All busts, and exactly 22, are close to the infinite-deck figures the strategy
    # computes (an independent implementation; they differ only by the finite shoe).
    inf = [(dealer_outcomes(up, False), 4 if up == 10 else 1) for up in range(1, 11)]
    inf_bust = sum((dist[22] + dist[23]) * (1 - pbj) * k for (pbj, dist), k in inf) / 13
    inf_22 = sum(dist[22] * (1 - pbj) * k for (pbj, dist), k in inf) / 13
    assert abs(float(d["22"] + d["23+"]) - inf_bust) < 0.003
    assert abs(float(d["22"]) - inf_22) < 0.001
    p22 = side_bet_report(builtin("lugano")).push_22
    assert p22.rtp == 12 * d["22"]
    assert d == dealer_finals(6, False) and dealer_finals(6, True)["17"] < d["17"]  # H17 draws on soft 17


def test_blazing_7s_as_a_function_of_the_meters():
    cfg = builtin("lugano").blazing_7s
    b = blazing_odds(6, cfg)
    probs = {ln.line: ln.probability for ln in b.lines}
    assert probs["one_seven"] == F(2 * 24 * 288, ORDERED2)
    assert probs["two_sevens"] == F(24 * 23 * 288, ORDERED3)  # the up card is no 7
    assert probs["major"] == F(24 * 5 * 4, ORDERED3)
    assert probs["minor"] == F(24 * 11 * 10 - 24 * 5 * 4, ORDERED3)
    assert probs["three_sevens"] == F(24 * 23 * 22 - 24 * 11 * 10, ORDERED3)
    fixed = probs["one_seven"] * 1000 + probs["two_sevens"] * 10000 + probs["three_sevens"] * 100000
    assert b.base == fixed / 500
    assert b.rtp(500000, 10000000) == (fixed + probs["minor"] * 500000 + probs["major"] * 10000000) / 500
    assert b.rtp(600000, 10000000) - b.rtp(500000, 10000000) == probs["minor"] * 100000 / 500
    assert 0 < b.envy_per_other_bet < F(1, 100)


def test_the_report_prints_for_lugano(capsys):
    assert main(["rtp", "blackjack", "--profile", "lugano", "--rounds", "3000", "--workers", "1"]) == 0
    out = capsys.readouterr().out
    for text in ("Perfect Pairs: return 95.4984%", "21+3: return 86.6104%", "Push 22: return",
                 "Blazing 7s: stake 5.00 CHF", "Main game (simulated"):
        assert text in out, text


def test_the_report_as_json(capsys):
    assert main(["rtp", "blackjack", "--profile", "lugano", "--json", "--rounds", "2000", "--workers", "1",
                 "--minor", "600000", "--major", "12000000"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["perfect_pairs"]["rtp"] == "297/311"
    assert doc["blazing_7s"]["meters"] == {"minor": 600000, "major": 12000000}
    b = blazing_odds(6, builtin("lugano").blazing_7s)
    assert doc["blazing_7s"]["rtp_percent"] == round(100 * float(b.rtp(600000, 12000000)), 6)
    lo, hi = doc["main_game"]["ci95"]
    assert lo < doc["main_game"]["house_edge"] < hi and doc["main_game"]["rounds"] == 2000


def test_a_profile_without_side_bets_says_so(capsys):
    assert main(["rtp", "blackjack", "--profile", "campione", "--rounds", "0"]) == 0
    out = capsys.readouterr().out
    assert "Perfect Pairs: not offered" in out and "Blazing 7s: not offered" in out
