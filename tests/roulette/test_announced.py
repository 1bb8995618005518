"""Each announced bet's expansion, piece by piece, against the seed (Art. 17)."""

from __future__ import annotations

import pytest

from games.errors import GameError
from roulette.announced import MAX_NEIGHBOURS, every_announced, parse_announced


def pieces(text: str) -> list[tuple[str, int]]:
    return sorted(parse_announced(text).pieces)


def test_tiers_du_cylindre_six_chevals_one_unit_each():
    a = parse_announced("Tiers du cylindre")
    assert a.name == "tiers du cylindre" and a.units == 6
    assert pieces("tiers") == sorted(
        (f"cheval {x}", 1) for x in ("5/8", "10/11", "13/16", "23/24", "27/30", "33/36")
    )
    assert parse_announced("la série 5/8") == a


def test_voisins_du_zero_nine_units():
    a = parse_announced("voisins du zéro")
    assert a.name == "voisins du zéro" and a.units == 9
    assert pieces("voisins du zero") == sorted(
        [("transversale 0-2-3", 2), ("carré 25-26-28-29", 2)]
        + [(f"cheval {x}", 1) for x in ("4/7", "12/15", "18/21", "19/22", "32/35")]
    )


def test_orphelins_five_pieces():
    a = parse_announced("orphelins")
    assert a.units == 5
    assert pieces("gli orfanelli") == sorted(
        [("plein 1", 1)] + [(f"cheval {x}", 1) for x in ("6/9", "14/17", "17/20", "31/34")]
    )


def test_finale_en_plein():
    assert pieces("finale 1") == [("plein 1", 1), ("plein 11", 1), ("plein 21", 1), ("plein 31", 1)]
    assert parse_announced("finale en plein 1").units == 4  # the seed's example
    assert pieces("finale en plein 0") == [("plein 0", 1), ("plein 10", 1), ("plein 20", 1), ("plein 30", 1)]
    assert pieces("finale 7") == [("plein 17", 1), ("plein 27", 1), ("plein 7", 1)]
    assert [parse_announced(f"finale {d}").units for d in range(10)] == [4] * 7 + [3] * 3


def test_finales_a_cheval_match_the_seeds_examples():
    # finale 3/6 (4 pezzi), 4/7 (3 pezzi), 1/2 (5 pezzi)
    assert pieces("finale 3/6") == sorted(
        ("cheval " + x, 1) for x in ("3/6", "13/16", "23/26", "33/36")
    )
    assert pieces("finale à cheval 4/7") == sorted(
        ("cheval " + x, 1) for x in ("4/7", "14/17", "24/27")
    )
    # 21 and 22 are not side by side (21 ends a row): two pleins
    assert pieces("finale 1/2") == sorted(
        [("cheval 1/2", 1), ("cheval 11/12", 1), ("cheval 31/32", 1), ("plein 21", 1), ("plein 22", 1)]
    )
    assert parse_announced("finale 2/1").name == "finale à cheval 1/2"
    assert pieces("finale 0/3") == sorted(
        ("cheval " + x, 1) for x in ("0/3", "10/13", "20/23", "30/33")
    )


def test_every_finale_a_cheval_scheme():
    finales = [a for a in every_announced() if a.name.startswith("finale à cheval")]
    assert len(finales) == 16
    assert {a.name: a.units for a in finales} == {
        "finale à cheval 0/1": 5, "finale à cheval 1/2": 5, "finale à cheval 2/3": 5,
        "finale à cheval 3/4": 6, "finale à cheval 4/5": 5, "finale à cheval 5/6": 5,
        "finale à cheval 6/7": 4, "finale à cheval 7/8": 4, "finale à cheval 8/9": 4,
        "finale à cheval 0/3": 4, "finale à cheval 1/4": 4, "finale à cheval 2/5": 4,
        "finale à cheval 3/6": 4, "finale à cheval 4/7": 3, "finale à cheval 5/8": 3,
        "finale à cheval 6/9": 3,
    }  # fmt: skip


def test_neighbours_bet():
    a = parse_announced("17 et 2 voisins")
    assert a.name == "17 et 2 voisins"
    assert [p.spot for p in a.pieces] == ["plein 2", "plein 25", "plein 17", "plein 34", "plein 6"]
    assert parse_announced("neighbours of 17 by 2") == a
    assert parse_announced("17 and the neighbours") == a  # two each side by default
    assert [p.spot for p in parse_announced("0 + 1 voisins").pieces] == ["plein 26", "plein 0", "plein 32"]


@pytest.mark.parametrize(
    "text, code",
    [
        ("le jeu de Monsieur", "announcement_forbidden"),
        ("jeu de madame", "announcement_forbidden"),
        ("il gioco della signora", "announcement_forbidden"),
        ("finale 10", "unknown_announcement"),
        ("finale 1/5", "unknown_announcement"),
        ("finale à cheval 3", "unknown_announcement"),
        ("finale en plein 1/2", "unknown_announcement"),
        ("17 et 0 voisins", "unknown_announcement"),
        (f"17 et {MAX_NEIGHBOURS + 1} voisins", "unknown_announcement"),
        ("40 et 2 voisins", "number_out_of_range"),
        ("les grands voisins", "unknown_announcement"),
    ],
)
def test_refused_announcements(text, code):
    with pytest.raises(GameError) as info:
        parse_announced(text)
    assert info.value.code == code


def test_every_announcement_is_listed_once():
    names = [a.name for a in every_announced()]
    assert len(names) == len(set(names)) == 3 + 10 + 16 + 37 * MAX_NEIGHBOURS
    for a in every_announced():
        assert parse_announced(a.name) == a
        assert len({p.spot for p in a.pieces}) == len(a.pieces)
