import pytest

from blackjack.hands import VALUE, hand_value, is_blackjack
from games.cards import card_name, full_shoe, is_red, parse_card


def cards(text):
    return [parse_card(t) for t in text.split()]


@pytest.mark.parametrize(
    "hand, total, soft",
    [
        ("AS KH", 21, True),
        ("AS 6H", 17, True),
        ("AS 6H 10D", 17, False),  # the ace drops to 1 rather than bust
        ("AS AH", 12, True),  # one ace as 11, one as 1
        ("AS AH AD AC", 14, True),
        ("AS AH 9D", 21, True),
        ("AS AH 9D KC", 21, False),
        ("10S 6H", 16, False),
        ("10S 6H 7D", 23, False),
        ("5S 6H", 11, False),
        ("JS QH", 20, False),
        ("AS 5H 5D", 21, True),
    ],
)
def test_hand_values(hand, total, soft):
    assert hand_value(cards(hand)) == (total, soft)


def test_hearts_and_diamonds_are_red():
    assert [is_red(c) for c in cards("AS AH AD AC")] == [False, True, True, False]


def test_blackjack_needs_two_cards():
    assert is_blackjack(cards("AS QH"))
    assert is_blackjack(cards("10D AC"))
    assert not is_blackjack(cards("AS 5H 5D"))
    assert not is_blackjack(cards("10S 10H"))


def test_card_names_and_values():
    assert card_name(parse_card("10h")) == "10H"
    assert card_name(parse_card("TD")) == "10D"
    assert [VALUE[parse_card(t)] for t in ["AS", "2S", "9S", "10S", "JS", "QS", "KS"]] == [1, 2, 9, 10, 10, 10, 10]
    with pytest.raises(ValueError):
        parse_card("1S")
    assert sorted(full_shoe(4)) == sorted(list(range(52)) * 4)
