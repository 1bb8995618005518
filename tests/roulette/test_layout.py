"""Every combination, named both ways, and the known answer over all 37 numbers."""

from __future__ import annotations

import re
from collections import Counter

import pytest

from games.errors import GameError
from roulette import layout
from roulette.layout import BY_NAME, COMBINATIONS, RED, WHEEL, WINNERS, neighbours, parse_spot
from roulette.settlement import settle
from roulette.state import Bet

RED_TABLE = [1, 3, 5, 7, 9, 12, 14, 16, 18, 19, 21, 23, 25, 27, 30, 32, 34, 36]


def test_wheel_and_colours():
    assert sorted(WHEEL) == list(range(37))
    assert WHEEL[:5] == (0, 32, 15, 19, 4) and WHEEL[-1] == 26
    assert sorted(RED) == RED_TABLE


def test_counts_of_each_kind():
    assert Counter(c.kind for c in COMBINATIONS) == {
        "plein": 37, "cheval": 60, "transversale": 14, "carre": 22, "quatre_premiers": 1,
        "sixain": 11, "douzaine": 3, "colonne": 3, "simple": 6,
    }  # fmt: skip
    assert len(BY_NAME) == 157


def _oracle(name: str, n: int) -> bool:
    """Does ``name`` win on ``n``? Worked out from the name alone (the rules' wording)."""
    nums = [int(x) for x in re.findall(r"\d+", name)]
    if name.startswith(("plein", "cheval", "transversale", "carré")):
        return n in nums
    if name == "quatre premiers":
        return n in (0, 1, 2, 3)
    if name.startswith("sixain"):
        return nums[0] <= n <= nums[1]
    if name.startswith("douzaine"):
        return n != 0 and (n - 1) // 12 + 1 == nums[0]
    if name.startswith("colonne"):
        return n != 0 and (n - 1) % 3 + 1 == nums[0]
    return n != 0 and {
        "rouge": n in RED_TABLE, "noir": n not in RED_TABLE, "pair": n % 2 == 0,
        "impair": n % 2 == 1, "manque": n <= 18, "passe": n >= 19,
    }[name]  # fmt: skip


PAYS = {"plein": 35, "cheval": 17, "transversale": 11, "carré": 8, "quatre": 8, "sixain": 5,
        "douzaine": 2, "colonne": 2}  # fmt: skip


@pytest.mark.parametrize("combo", COMBINATIONS, ids=lambda c: c.name)
def test_known_answers_over_all_37_numbers(combo):
    pays = PAYS.get(combo.name.split()[0], 1)
    bet = Bet("w", "p", combo.name, 100, 1)
    for n in range(37):
        ((_, result, returned, won),) = settle([bet], n)
        if _oracle(combo.name, n):
            assert (result, returned, won) == ("won", 100, 100 * pays), n
        elif n == 0 and combo.simple:
            assert (result, returned, won) == ("prison", 0, 0)
        else:
            assert (result, returned, won) == ("lost", 0, 0), n


def test_winners_of_17_and_0_by_hand():
    assert WINNERS[17] == {
        "plein 17", "cheval 14/17", "cheval 16/17", "cheval 17/18", "cheval 17/20",
        "transversale 16-17-18", "carré 13-14-16-17", "carré 14-15-17-18", "carré 16-17-19-20",
        "carré 17-18-20-21", "sixain 13-18", "sixain 16-21", "douzaine 2", "colonne 2",
        "noir", "impair", "manque",
    }  # fmt: skip
    assert WINNERS[0] == {
        "plein 0", "cheval 0/1", "cheval 0/2", "cheval 0/3", "transversale 0-1-2",
        "transversale 0-2-3", "quatre premiers",
    }  # fmt: skip


def test_every_canonical_name_parses_back():
    for c in COMBINATIONS:
        assert parse_spot(c.name) == c
        assert parse_spot(c.name.upper().replace("É", "E")) == c


@pytest.mark.parametrize(
    "text, name",
    [
        ("17", "plein 17"), ("Plein 0", "plein 0"), ("straight up 36", "plein 36"),
        ("cheval 3/0", "cheval 0/3"), ("split 20-17", "cheval 17/20"), ("17/20", "cheval 17/20"),
        ("transversale 2-1-0", "transversale 0-1-2"), ("street 34-35-36", "transversale 34-35-36"),
        ("carre 1-2-4-5", "carré 1-2-4-5"), ("carré 25/29", "carré 25-26-28-29"),
        ("corner 5 4 2 1", "carré 1-2-4-5"), ("carré 0-1-2-3", "quatre premiers"),
        ("0-1-2-3", "quatre premiers"), ("first four", "quatre premiers"),
        ("sixain 31-36", "sixain 31-36"), ("six line 1-2-3-4-5-6", "sixain 1-6"),
        ("P12", "douzaine 1"), ("m12", "douzaine 2"), ("D12", "douzaine 3"),
        ("dozen 2", "douzaine 2"), ("column 1", "colonne 1"), ("colonna 3", "colonne 3"),
        ("Red", "rouge"), ("nero", "noir"), ("even", "pair"), ("dispari", "impair"),
        ("1-18", "manque"), ("high", "passe"), ("  cheval  0 / 2 ", "cheval 0/2"),
    ],
)  # fmt: skip
def test_aliases(text, name):
    assert parse_spot(text).name == name


@pytest.mark.parametrize(
    "text, code",
    [
        ("cheval 1/5", "not_on_layout"), ("cheval 3/4", "not_on_layout"),
        ("cheval 0/4", "not_on_layout"), ("transversale 2-3-4", "not_on_layout"),
        ("carré 3-4-6-7", "not_on_layout"), ("sixain 2-7", "not_on_layout"),
        ("plein 37", "number_out_of_range"), ("cheval 36/39", "number_out_of_range"),
        ("plein -1", "unknown_combination"), ("plein", "unknown_combination"),
        ("plein 1 2", "unknown_combination"), ("banana", "unknown_combination"),
        ("douzaine 4", "unknown_combination"), ("", "unknown_combination"),
        # Art. 4: nothing astride simple chances, dozens or columns
        ("rouge/noir", "astride_forbidden"), ("cheval pair/impair", "astride_forbidden"),
        ("manque-passe", "astride_forbidden"), ("douzaine 1/2", "astride_forbidden"),
        ("colonne 2-3", "astride_forbidden"), ("cheval douzaine 1/2", "astride_forbidden"),
        ("P12/M12", "astride_forbidden"), ("rouge/pair", "astride_forbidden"),
        ("douzaine 1/douzaine 2", "astride_forbidden"), ("colonnes 1 et 2", "astride_forbidden"),
        ("1-18/19-36", "astride_forbidden"), ("rouge + douzaine 1", "astride_forbidden"),
    ],
)  # fmt: skip
def test_refusals_name_the_problem(text, code):
    with pytest.raises(GameError) as info:
        parse_spot(text)
    assert info.value.code == code
    assert info.value.message


def test_a_spot_parsed_again_is_the_same_answer_and_a_refusal_is_refused_again():
    """Names are kept once parsed (a wheel's bets repeat a few dozen spots): the second
    answer is the first, a refusal is never kept, and a long text is parsed, not kept."""
    layout._parse_known.cache_clear()
    first = parse_spot("Cheval 17 / 20")
    assert parse_spot("Cheval 17 / 20") is first and first.name == "cheval 17/20"
    for _ in range(2):
        with pytest.raises(GameError) as info:
            parse_spot("cheval 17/21")
        assert (info.value.code, info.value.details["spot"]) == ("not_on_layout", "cheval 17/21")
    assert parse_spot("plein" + " " * 57 + "17") is BY_NAME["plein 17"]  # 64 characters: kept
    assert parse_spot("plein" + " " * 58 + "17") is BY_NAME["plein 17"]  # 65: parsed, not kept

    class Spot(str):  # a str of its own kind may have its own equality: parsed, not kept
        pass

    assert parse_spot(Spot("rouge")) is BY_NAME["rouge"]
    info = layout._parse_known.cache_info()
    assert (info.hits, info.currsize) == (1, 2)  # the cheval once; the 64; no refusal, no 65, no Spot


def test_not_on_layout_message_names_the_combination():
    with pytest.raises(GameError) as info:
        parse_spot("cheval 1/5")
    assert "cheval 1/5" in info.value.message


def test_neighbours_on_the_wheel():
    assert neighbours(0, 2) == [3, 26, 0, 32, 15]
    assert neighbours(26, 1) == [3, 26, 0]
