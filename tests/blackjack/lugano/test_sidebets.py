"""Known answers for every pay line of Perfect Pairs, 21+3 and Blazing 7s (pure functions)."""

import msgspec
import pytest

from blackjack.jackpot import Blazing7s, BlazingBet, blazing_line, round_results
from blackjack.jackpot_pool import share
from blackjack.profiles import builtin, parse_profile
from blackjack.sidebets import (
    PerfectPairs,
    TwentyOnePlusThree,
    pays,
    perfect_pairs_line,
    twenty_one_plus_three_line,
)
from games.cards import parse_card
from games.errors import GameError


def cards(text):
    return [parse_card(c) for c in text.split()]


@pytest.mark.parametrize(
    "hand, line, to_one",
    [
        ("7H 7H", "perfect", 26),  # same suit (two decks' sevens of hearts)
        ("7H 7D", "coloured", 12),  # both red, different suits
        ("KS KC", "coloured", 12),  # both black
        ("AH AS", "mixed", 6),  # red and black
        ("KH QH", "", 0),  # both worth ten, but two ranks: no pair
        ("10D JD", "", 0),
    ],
)
def test_perfect_pairs_lines(hand, line, to_one):
    assert perfect_pairs_line(*cards(hand)) == line
    assert pays(PerfectPairs(), line) == to_one


@pytest.mark.parametrize(
    "hand, line, to_one",
    [
        ("5H 6H 7H", "straight_flush", 30),
        ("QS KS AS", "straight_flush", 30),  # Q-K-A counts
        ("7H 7H 7H", "three_of_a_kind", 20),  # suited trips: three of a kind, not a straight flush
        ("7H 7S 7D", "three_of_a_kind", 20),
        ("AH 2S 3D", "straight", 10),  # A-2-3 counts
        ("KD AC QH", "straight", 10),
        ("10S JH QD", "straight", 10),  # ten, jack, queen are three ranks
        ("9C 10C JD", "straight", 10),
        ("2H 9H KH", "flush", 5),
        ("KH AH 2H", "flush", 5),  # K-A-2 is no straight: only the flush pays
        ("KS AH 2D", "", 0),
        ("7H 7S 8D", "", 0),  # a pair is nothing in 21+3
    ],
)
def test_twenty_one_plus_three_lines(hand, line, to_one):
    a, b, up = cards(hand)
    assert twenty_one_plus_three_line(a, b, up) == line
    # The up card's place among the three does not matter.
    assert twenty_one_plus_three_line(up, a, b) == line
    assert pays(TwentyOnePlusThree(), line) == to_one


@pytest.mark.parametrize(
    "hand, up, line",
    [
        ("7H 5S", "7H", "one_seven"),  # one 7: the up card does not count
        ("5S 7C", "2D", "one_seven"),
        ("7H 7S", "9D", "two_sevens"),
        ("7H 7S", "7D", "three_sevens"),  # red, black, red
        ("7H 7D", "7H", "minor"),  # all red, two suits
        ("7S 7C", "7C", "minor"),  # all black
        ("7D 7D", "7D", "major"),  # one suit
        ("8H 9H", "7H", ""),  # no 7 in the box's cards: lost
    ],
)
def test_blazing_lines(hand, up, line):
    a, b = cards(hand)
    assert blazing_line(a, b, parse_card(up)) == line


def test_blazing_fixed_pays_and_envy():
    cfg = Blazing7s()
    up = parse_card("7H")
    bets = [
        BlazingBet("w1", "ann", 1, tuple(cards("7H 7H"))),  # major
        BlazingBet("w2", "bob", 2, tuple(cards("7D 7D"))),  # minor
        BlazingBet("w3", "cy", 3, tuple(cards("7S 2C"))),  # one 7
        BlazingBet("w4", "dan", 4, tuple(cards("9S 2C"))),  # nothing
    ]
    r = {x.wager: x for x in round_results(bets, up, cfg)}
    assert (r["w1"].line, r["w1"].fixed, r["w1"].envy) == ("major", 0, 10000)  # bob's minor: CHF 100
    assert (r["w2"].line, r["w2"].fixed, r["w2"].envy) == ("minor", 0, 50000)  # ann's major: CHF 500
    assert (r["w3"].line, r["w3"].fixed, r["w3"].envy) == ("one_seven", 1000, 60000)
    assert (r["w4"].line, r["w4"].fixed, r["w4"].envy) == ("", 0, 60000)  # envy needs no 7
    assert r["w1"].jackpot == "major" and r["w3"].jackpot == ""


def test_two_winners_of_one_jackpot_get_no_envy_from_each_other():
    cfg = Blazing7s()
    bets = [
        BlazingBet("w1", "ann", 1, tuple(cards("7H 7H"))),
        BlazingBet("w2", "bob", 2, tuple(cards("7H 7H"))),
        BlazingBet("w3", "cy", 3, tuple(cards("7S 7S"))),  # with the up card: three 7s, not of one colour
    ]
    r = {x.wager: x for x in round_results(bets, parse_card("7H"), cfg)}
    assert r["w1"].envy == r["w2"].envy == 0
    assert (r["w3"].line, r["w3"].fixed, r["w3"].envy) == ("three_sevens", 100000, 2 * 50000)


@pytest.mark.parametrize(
    "amount, winners, each",
    [(10000000, 1, 10000000), (10000040, 1, 10000100), (10000050, 2, 5000100), (1000000, 3, 333400), (900, 3, 300)],
)
def test_jackpot_shares_round_up_to_a_franc(amount, winners, each):
    assert share(amount, winners, 100) == each
    assert each * winners >= amount and each % 100 == 0


def test_pay_tables_are_profile_data_an_operator_can_change():
    p = builtin("lugano")
    assert p.perfect_pairs == PerfectPairs(6, 12, 26, 500, 10000)
    assert p.twenty_one_plus_three.min_bet == 500 and p.twenty_one_plus_three.max_bet == 10000
    assert p.push_22.pays == 11 and p.blazing_7s.stake == 500 and not p.free_bet
    data = msgspec.json.encode(msgspec.structs.replace(p, name="house", perfect_pairs=PerfectPairs(mixed=5)))
    assert parse_profile(data).perfect_pairs.mixed == 5
    assert builtin("campione").perfect_pairs is None  # not offered


@pytest.mark.parametrize(
    "change, reason",
    [
        (dict(perfect_pairs=PerfectPairs(mixed=0)), "positive"),
        (dict(twenty_one_plus_three=TwentyOnePlusThree(min_bet=200, max_bet=100)), "minimum"),
        (dict(blazing_7s=Blazing7s(currency="PTS")), "chip currency"),
        (dict(blazing_7s=Blazing7s(stake=0)), "stake"),
        (dict(blazing_7s=Blazing7s(jackpot="blazing 7s")), "jackpot's name"),
        (dict(free_bet=True, max_split_hands=1, double_after_split=False, resplit_aces=False), "forbids splitting"),
    ],
)
def test_unsound_pay_tables_are_refused(change, reason):
    data = msgspec.json.encode(msgspec.structs.replace(builtin("lugano"), **change))
    with pytest.raises(GameError) as exc:
        parse_profile(data)
    assert exc.value.code == "invalid_profile" and reason in exc.value.message


def test_no_envy_for_the_jackpot_winner_on_his_own_other_boxes():
    # Issue 12: ann hits the major on box 1 and also plays box 2; bob plays box 3. The envy
    # bonus (CHF 500) is for the others: bob only, never ann's own box 2.
    cfg = Blazing7s()
    bets = [
        BlazingBet("w1", "ann", 1, tuple(cards("7H 7H"))),  # major
        BlazingBet("w2", "ann", 2, tuple(cards("9S 2C"))),
        BlazingBet("w3", "bob", 3, tuple(cards("8S 3C"))),
    ]
    r = {x.wager: x for x in round_results(bets, parse_card("7H"), cfg)}
    assert (r["w1"].envy, r["w2"].envy, r["w3"].envy) == (0, 0, 50000)
