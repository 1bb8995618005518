"""Basic strategy is computed from the rules; spot-check it against the well-known
European no-hole-card charts, and the dealer's probabilities against exact figures."""

import pytest

from blackjack.profiles import builtin
from blackjack.strategy import dealer_outcomes, strategy_for
from games.cards import parse_card


def test_dealer_probabilities_infinite_deck():
    pbj, dist = dealer_outcomes(6, False)
    # Busts are split into exactly 22 (Push 22, Free Bet) and 23 or more.
    assert pbj == 0 and dist[22] + dist[23] == pytest.approx(0.4232, abs=5e-4)
    pbj, _ = dealer_outcomes(1, False)
    assert pbj == pytest.approx(4 / 13)
    pbj, dist = dealer_outcomes(10, False)
    assert pbj == pytest.approx(1 / 13) and sum(dist.values()) == pytest.approx(1)


def act(profile, hand, up, can_double=True, can_split=True):
    cards = [parse_card(c) for c in hand.split()]
    return strategy_for(builtin(profile)).action(cards, parse_card(up), can_double, can_split)


@pytest.mark.parametrize(
    "profile, hand, up, expected",
    [
        ("titano", "6S 5S", "10S", "H"),  # 11 v 10: no double when a blackjack takes it all
        ("titano", "6S 5S", "9S", "D"),
        ("titano", "6S 4S", "10S", "H"),
        ("titano", "8S 8H", "10S", "H"),  # no 8s split against a ten without a hole card
        ("titano", "8S 8H", "9S", "P"),
        ("titano", "AS AH", "AD", "H"),  # nor aces against an ace
        ("titano", "AS AH", "6D", "P"),
        ("titano", "AS 7H", "4D", "D"),  # soft 18 doubles where any two cards double
        ("campione", "AS 7H", "4D", "S"),  # ...but Campione doubles only hard 9-11
        ("campione", "4S 5H", "3D", "D"),
        ("lugano", "10S 2H", "2D", "H"),
        ("lugano", "10S 2H", "4D", "S"),
        ("lugano", "10S 6H", "7D", "H"),
        ("lugano", "10S 6H", "6D", "S"),
        ("lugano", "9S 9H", "7D", "S"),
        ("lugano", "KS QH", "6D", "S"),  # never split tens
    ],
)
def test_strategy_cells(profile, hand, up, expected):
    assert act(profile, hand, up) == expected


def test_a_forbidden_double_falls_back_to_hit_or_stand():
    assert act("titano", "6S 5S", "9S", can_double=False) == "H"
    assert act("titano", "AS 7H", "4D", can_double=False) == "S"
    assert act("titano", "8S 8H", "9S", can_split=False) == "H"
