import json

import msgspec
import pytest

from blackjack.profiles import Profile, builtin, load_profile, validate
from games.errors import GameError

# RULES.md's table, field by field.
EXPECTED = {
    "campione": dict(
        decks=4, dealer_second_card="after_players", dealer_blackjack_takes="all", even_money_against=[1, 10],
        double_totals=[9, 10, 11], double_soft=False, double_after_split=True, max_split_hands=2,
        resplit_aces=False, split_tens_ace_continues=True, max_applies_to="person_per_box",
        lone_player_min_boxes=2, crowded_at=7, button=False, void_round_on_short_shoe=False,
        max_to_min_ratio=10, max_bet_cap=500000, misdrawn_card="offer",
    ),
    "titano": dict(
        decks=6, dealer_second_card="face_down", dealer_blackjack_takes="all", even_money_against=[1, 10],
        double_totals=[], double_soft=True, double_after_split=True, max_split_hands=4, resplit_aces=False,
        split_tens_ace_continues=False, max_applies_to="box", places_behind=0, button=True,
        void_round_on_short_shoe=True, misdrawn_card="burn",
    ),
    "lugano": dict(
        decks=6, dealer_second_card="after_players", dealer_blackjack_takes="all", even_money_against=[1],
        double_totals=[], double_soft=True, double_after_split=True, max_split_hands=4, resplit_aces=True,
        max_applies_to="box_with_behind", places_behind=2, button=False, misdrawn_card="burn",
    ),
}


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_builtin_profiles_follow_rules_md(name):
    p = builtin(name)
    for field, value in EXPECTED[name].items():
        assert getattr(p, field) == value, field
    assert p.burn_cards == 5 and p.blackjack_pays == (3, 2) and not p.dealer_hits_soft_17


def test_operator_profile_loads_from_file(tmp_path):
    f = tmp_path / "house.json"
    f.write_text(json.dumps({"name": "house", "decks": 8, "dealer_blackjack_takes": "original", "max_split_hands": 3}))
    p = load_profile(f)
    assert p.decks == 8 and p.dealer_blackjack_takes == "original" and p.max_split_hands == 3


@pytest.mark.parametrize(
    "fields, reason",
    [
        (dict(decks=2, min_decks=4), "fewer than its own minimum"),
        (dict(decks=9), "1 to 8"),
        (dict(max_split_hands=2, resplit_aces=True), "resplitting aces"),
        (dict(max_split_hands=1, double_after_split=True), "splitting is forbidden"),
        (dict(max_applies_to="box_with_behind", places_behind=0), "no places behind"),
        (dict(even_money_against=[5]), "even money"),
        (dict(cut_card_from_end=300), "too few cards to play"),
        (dict(double_totals=[9, 10, 11], double_soft=True), "soft doubling"),
        (dict(lone_player_min_boxes=8), "lone player"),
        (dict(currency="XXX"), "currency"),
    ],
)
def test_contradictory_profile_is_refused_with_the_reason(fields, reason):
    base = dict(name="bad", decks=6)
    base.update(fields)
    with pytest.raises(GameError) as exc:
        validate(Profile(**base))
    assert exc.value.code == "invalid_profile"
    assert reason in exc.value.message


def test_malformed_profile_file_is_refused(tmp_path):
    f = tmp_path / "p.json"
    f.write_text('{"name": "x", "decks": "six"}')
    with pytest.raises(GameError) as exc:
        load_profile(f)
    assert exc.value.code == "invalid_profile"
    f.write_text('{"name": "x", "decks": 6, "surrender": true}')
    with pytest.raises(GameError):
        load_profile(f)


def test_profile_can_grow_fields_and_round_trips():
    p = builtin("lugano")
    assert msgspec.json.decode(msgspec.json.encode(p), type=Profile) == p


# Each house's doubling and splitting limits, checked on the engine itself.
from blackjack.round.decisions import can_double, can_split  # noqa: E402
from blackjack.state import Box, Hand  # noqa: E402
from games.cards import parse_card  # noqa: E402


def _hand(text, **flags):
    return Hand([parse_card(c) for c in text.split()], **flags)


@pytest.mark.parametrize(
    "profile, cards, flags, hands, double, split",
    [
        ("campione", "5S 4H", {}, 1, True, False),  # hard 9
        ("campione", "7S 5H", {}, 1, False, False),  # hard 12: no
        ("campione", "AS 8H", {}, 1, False, False),  # soft 19 / 9: soft doubles refused
        ("campione", "6S 5H", dict(split=True), 2, True, False),  # DAS on 11
        ("campione", "6S 6H", dict(split=True), 2, False, False),  # one split only
        ("campione", "10S AH", dict(split=True, tens_ace=True), 2, True, False),  # as 11
        ("titano", "7S 5H", {}, 1, True, False),  # any two cards
        ("titano", "AS 7H", {}, 1, True, False),
        ("titano", "8S 8H", dict(split=True), 3, True, True),  # resplit to four, DAS on any two
        ("titano", "8S 8H", dict(split=True), 4, True, False),
        ("titano", "AS AH", dict(split=True, split_aces=True), 2, False, False),  # no resplit aces
        ("lugano", "AS AH", dict(split=True, split_aces=True), 2, False, True),  # resplit aces
        ("lugano", "AS 9H", {}, 1, True, False),  # soft 20 may double
        ("lugano", "AS KH", dict(blackjack=True), 1, False, False),  # but not a blackjack
        ("lugano", "KS QH", {}, 1, True, True),  # tens are a pair
        ("lugano", "5S 4H 2D", {}, 1, False, False),  # two cards only
    ],
)
def test_each_house_doubles_and_splits_by_its_rules(profile, cards, flags, hands, double, split):
    p = builtin(profile)
    hand = _hand(cards, **flags)
    box = Box(1, "p1", [], [hand] + [_hand("2S 3S") for _ in range(hands - 1)])
    assert can_double(p, hand) is double
    assert can_split(p, box, hand) is split
