"""Minimum and maxima (Art. 5-8): summed per player per combination, through announced
pieces and società; the doubled plein; the director's raise; Art. 8 over-max settlement."""

from __future__ import annotations

import msgspec
import pytest

from games.money import MAX_AMOUNT
from games.wagers import WagerPlaced, WagerSettled
from roulette.commands import (
    ChangeSettings, LaunchBall, NoMoreBets, OpenSpin, PlaceAnnounced, PlaceBet, RaiseLimit,
    RegisterSocieta, Result, WithdrawBet,
)  # fmt: skip
from roulette.engine import RouletteTable
from roulette.events import LimitRaised, OverMaximumEntered, SettingsAnnounced, SocietaRegistered
from roulette.limits import default_settings
from roulette.state import Actor

CROUPIER = Actor("c1", "croupier")
CHEF = Actor("h1", "chef")
DIRECTOR = Actor("d1", "director")
ANN = Actor("ann")
BOB = Actor("bob")
FLOOR_ANN = Actor("floor:ann")  # a floor player: names whose chips staff enter
CHF = 100  # minor units per franc


def new_table(**kw) -> RouletteTable:
    t = RouletteTable("t1", default_settings(**kw))
    t.handle(OpenSpin(by=CROUPIER))
    return t


def place(t, who, spot, amount, by=None):
    return t.handle(PlaceBet(by=by or who, player=who.id, spot=spot, amount=amount))


def settle_on(t, number):
    t.handle(LaunchBall(by=CROUPIER))
    t.handle(NoMoreBets(by=CROUPIER))
    return {e.wager: (e.stake, e.returned, e.won) for e in t.handle(Result(by=CROUPIER, number=number)) if isinstance(e, WagerSettled)}


def test_default_maxima_of_art_5():
    s = default_settings()
    assert {k: s.maximum(k) // CHF for k in s.maxima} == {
        "plein": 500, "cheval": 1000, "transversale": 1500, "carre": 2000, "quatre_premiers": 2000,
        "sixain": 3000, "douzaine": 5000, "colonne": 5000, "simple": 10000,
    }  # fmt: skip
    assert default_settings(doubled_plein=True).maximum("plein") == 1000 * CHF


def test_minimum_per_bet_and_per_announced_unit(refused):
    t = new_table()
    assert t.state.settings.minimum == 5 * CHF
    err = refused(t, PlaceBet(by=ANN, player="ann", spot="plein 1", amount=499), "below_minimum")
    assert "5.00 CHF" in err.message
    refused(t, PlaceAnnounced(by=ANN, player="ann", announce="tiers", unit=499), "below_minimum")
    place(t, ANN, "plein 1", 500)


@pytest.mark.parametrize("amount", [0, -500, 12.5, 1000.0, True, "1000"])
def test_amounts_must_be_positive_whole_numbers(amount, refused):
    t = new_table()
    refused(t, PlaceBet(by=ANN, player="ann", spot="rouge", amount=amount), "invalid_amount")


def test_maximum_sums_every_chip_of_the_player_on_the_combination(refused):
    t = new_table()
    place(t, ANN, "plein 17", 300 * CHF)
    err = refused(t, PlaceBet(by=ANN, player="ann", spot="plein 17", amount=201 * CHF), "over_maximum")
    assert err.details["room"] == 200 * CHF
    assert "200.00 CHF" in err.message
    place(t, BOB, "plein 17", 500 * CHF)  # each player has his own maximum
    place(t, ANN, "plein 17", 200 * CHF)


def test_announced_pieces_count_toward_the_maxima(refused):
    t = new_table()
    place(t, ANN, "cheval 17/20", 990 * CHF)
    # orphelins puts one unit on 17/20: 990 + 20 > 1,000
    err = refused(t, PlaceAnnounced(by=ANN, player="ann", announce="orphelins", unit=20 * CHF), "over_maximum")
    assert err.details["spot"] == "cheval 17/20" and err.details["room"] == 10 * CHF
    t.handle(PlaceAnnounced(by=ANN, player="ann", announce="orphelins", unit=10 * CHF))
    # voisins puts two units on 0-2-3: a unit of 751 would need 1,502 > 1,500
    refused(t, PlaceAnnounced(by=ANN, player="ann", announce="voisins du zéro", unit=751 * CHF), "over_maximum")
    t.handle(PlaceAnnounced(by=ANN, player="ann", announce="voisins du zéro", unit=750 * CHF))
    # and then a direct bet on a piece's combination sees them
    refused(t, PlaceBet(by=ANN, player="ann", spot="transversale 0-2-3", amount=500), "over_maximum")


def test_announced_neighbours_overlapping_a_plein(refused):
    t = new_table()
    t.handle(PlaceAnnounced(by=ANN, player="ann", announce="17 et 2 voisins", unit=300 * CHF))
    refused(t, PlaceAnnounced(by=ANN, player="ann", announce="25 et 1 voisins", unit=201 * CHF), "over_maximum")
    t.handle(PlaceAnnounced(by=ANN, player="ann", announce="25 et 1 voisins", unit=200 * CHF))


def test_societa_members_share_one_maximum(refused):
    t = new_table()
    place(t, ANN, "douzaine 2", 3000 * CHF)
    assert t.handle(RegisterSocieta(by=CHEF, name="fratelli", members=["ann", "bob"])) == [
        SocietaRegistered("fratelli", ["ann", "bob"], "h1")
    ]
    err = refused(t, PlaceBet(by=BOB, player="bob", spot="douzaine 2", amount=2001 * CHF), "over_maximum")
    assert err.details["room"] == 2000 * CHF and "società" in err.message
    place(t, BOB, "douzaine 2", 2000 * CHF)
    place(t, Actor("cy"), "douzaine 2", 5000 * CHF)  # not a member


def test_societa_registration_rules(refused):
    t = new_table()
    place(t, ANN, "rouge", 6000 * CHF)
    place(t, BOB, "rouge", 6000 * CHF)
    refused(t, RegisterSocieta(by=CROUPIER, name="x", members=["ann", "cy"]), "not_allowed")
    refused(t, RegisterSocieta(by=CHEF, name="x", members=["ann"]), "invalid_societa")
    refused(t, RegisterSocieta(by=CHEF, name="x", members=["ann", "bob"]), "societa_over_maximum")
    t.handle(RegisterSocieta(by=CHEF, name="x", members=["ann", "cy"]))
    refused(t, RegisterSocieta(by=CHEF, name="y", members=["cy", "dan"]), "invalid_societa")
    refused(t, RegisterSocieta(by=CHEF, name="x", members=["eve", "dan"]), "invalid_societa")


def test_doubled_plein(refused):
    t = new_table(doubled_plein=True)
    place(t, ANN, "plein 5", 1000 * CHF)
    refused(t, PlaceBet(by=ANN, player="ann", spot="plein 6", amount=1001 * CHF), "over_maximum")
    place(t, ANN, "cheval 5/6", 1000 * CHF)  # the cheval is not doubled
    refused(t, PlaceBet(by=ANN, player="ann", spot="cheval 5/8", amount=1001 * CHF), "over_maximum")


def test_director_raise_names_who_authorised_it_and_applies_from_next_spin(refused):
    t = new_table()
    refused(t, RaiseLimit(by=CHEF, kind="plein", maximum=1500 * CHF, control_officer="m. rossi"), "not_allowed")
    refused(t, RaiseLimit(by=DIRECTOR, kind="plein", maximum=1500 * CHF, control_officer=""), "missing_authorisation")
    refused(t, RaiseLimit(by=DIRECTOR, kind="plein", maximum=1501 * CHF, control_officer="m. rossi"), "raise_out_of_range")
    refused(t, RaiseLimit(by=DIRECTOR, kind="cheval", maximum=2001 * CHF, control_officer="m. rossi"), "raise_out_of_range")
    refused(t, RaiseLimit(by=DIRECTOR, kind="carre", maximum=2001 * CHF, control_officer="m. rossi"), "raise_not_allowed")
    events = t.handle(RaiseLimit(by=DIRECTOR, kind="plein", maximum=1500 * CHF, control_officer="m. rossi"))
    assert events[0] == LimitRaised("plein", 1500 * CHF, 2, "d1", "m. rossi", "plein maximum raised")
    assert isinstance(events[1], SettingsAnnounced) and events[1].effective_spin == 2
    t.handle(RaiseLimit(by=DIRECTOR, kind="cheval", maximum=2000 * CHF, control_officer="m. rossi"))
    # this spin still runs on the old limits
    refused(t, PlaceBet(by=ANN, player="ann", spot="plein 5", amount=501 * CHF), "over_maximum")
    settle_on(t, 1)
    t.handle(OpenSpin(by=CROUPIER))
    assert t.state.settings.maximum("plein") == 1500 * CHF
    assert t.state.settings.maximum("cheval") == 2000 * CHF
    place(t, ANN, "plein 5", 1500 * CHF)
    place(t, ANN, "cheval 5/8", 2000 * CHF)
    refused(t, PlaceBet(by=ANN, player="ann", spot="plein 5", amount=500), "over_maximum")


def test_settings_change_from_the_next_spin_and_are_announced(refused):
    t = new_table()
    new = msgspec.structs.replace(t.state.settings, minimum=25 * CHF, prison_on_zero="stay")
    refused(t, ChangeSettings(by=CHEF, settings=new), "not_allowed")
    bad = msgspec.structs.replace(new, minimum=0)
    refused(t, ChangeSettings(by=DIRECTOR, settings=bad), "invalid_settings")
    refused(t, ChangeSettings(by=DIRECTOR, settings=msgspec.structs.replace(new, currency="EUR")), "invalid_settings")
    assert t.handle(ChangeSettings(by=DIRECTOR, settings=new, reason="evening")) == [
        SettingsAnnounced(new, 2, "d1", "evening")
    ]
    place(t, ANN, "rouge", 5 * CHF)  # the old minimum still holds this spin
    assert t.view().pending_settings == new
    settle_on(t, 3)
    t.handle(OpenSpin(by=CROUPIER))
    assert t.state.settings == new and t.state.pending_settings is None
    refused(t, PlaceBet(by=ANN, player="ann", spot="rouge", amount=5 * CHF), "below_minimum")


def test_a_raise_comes_only_through_the_directors_raise(refused):
    # A settings change may not grant or stretch a raise: that would skip the control
    # officer Art. 5 requires and the 1,500 / 2,000 ceilings.
    t = new_table()
    s = t.state.settings
    sneaky = msgspec.structs.replace(s, raised={"plein": 1500 * CHF})
    refused(t, ChangeSettings(by=DIRECTOR, settings=sneaky), "missing_authorisation")
    wider = msgspec.structs.replace(s, raise_ceilings={"plein": 10_000 * CHF, "cheval": 2000 * CHF})
    refused(t, ChangeSettings(by=DIRECTOR, settings=wider), "missing_authorisation")
    odd = msgspec.structs.replace(s, raise_ceilings={"foo": 10}, raised={"foo": 5})
    refused(t, ChangeSettings(by=DIRECTOR, settings=odd), "invalid_settings")
    t.handle(RaiseLimit(by=DIRECTOR, kind="plein", maximum=1200 * CHF, control_officer="m. rossi"))
    # a later change of the minimum (as the server's limits console sends it) keeps the raise
    later = msgspec.structs.replace(t.state.pending_settings, minimum=10 * CHF)
    t.handle(ChangeSettings(by=DIRECTOR, settings=later))
    settle_on(t, 1)
    t.handle(OpenSpin(by=CROUPIER))
    assert t.state.settings.maximum("plein") == 1200 * CHF and t.state.settings.minimum == 10 * CHF


def test_player_over_maximum_is_refused_with_the_room_left(refused):
    t = new_table()
    err = refused(t, PlaceBet(by=ANN, player="ann", spot="sixain 1-6", amount=3001 * CHF), "over_maximum")
    assert err.details == {"spot": "sixain 1-6", "room": 3000 * CHF, "maximum": 3000 * CHF, "units": 0}


@pytest.mark.parametrize("number, expected", [(5, (700 * CHF, 700 * CHF, 500 * CHF * 35)), (6, (700 * CHF, 200 * CHF, 0))])
def test_croupier_entered_over_maximum_settles_on_the_maximum_and_returns_the_excess(number, expected):
    t = new_table()
    events = place(t, FLOOR_ANN, "plein 5", 700 * CHF, by=CROUPIER)
    wager = events[0].wager
    assert events == [
        WagerPlaced(wager, "floor:ann", 700 * CHF, "plein 5"),
        OverMaximumEntered(wager, "floor:ann", "plein 5", 500 * CHF, 200 * CHF, "c1"),
    ]
    assert settle_on(t, number) == {wager: expected}


def test_croupier_excess_is_computed_against_chips_already_there():
    t = new_table()
    first = place(t, FLOOR_ANN, "plein 5", 400 * CHF, by=CROUPIER)[0].wager
    second = place(t, FLOOR_ANN, "plein 5", 300 * CHF, by=CHEF)[0].wager
    assert settle_on(t, 5) == {
        first: (400 * CHF, 400 * CHF, 400 * CHF * 35),
        second: (300 * CHF, 300 * CHF, 100 * CHF * 35),  # 200 over the maximum, unpaid
    }


def test_withdrawing_frees_room():
    t = new_table()
    w = place(t, ANN, "colonne 1", 5000 * CHF)[0].wager
    t.handle(WithdrawBet(by=ANN, wager=w))
    place(t, ANN, "colonne 1", 5000 * CHF)


# ---------------------------------------------------------------- Art. 5 ceilings (issue 12, item 20)


@pytest.mark.parametrize(
    "kind, francs, ceiling",
    [("plein", 3_000, 500), ("plein", 501, 500), ("cheval", 1_001, 1_000), ("carre", 2_001, 2_000),
     ("sixain", 3_001, 3_000), ("simple", 50_000, 10_000), ("simple", 10_001, 10_000)],
)  # fmt: skip
def test_a_settings_change_may_not_go_above_the_regulations_maxima(kind, francs, ceiling, refused):
    t = new_table()
    s = t.state.settings
    high = msgspec.structs.replace(s, maxima={**s.maxima, kind: francs * CHF})
    err = refused(t, ChangeSettings(by=DIRECTOR, settings=high), "above_regulation_maximum")
    assert err.details == {"kind": kind, "ceiling": ceiling * CHF}
    assert f"{ceiling:,}.00 CHF" in err.message and "Art. 5" in err.message
    assert ("RaiseLimit" in err.message) == (kind in ("plein", "cheval"))
    # bets at the refused maximum still do not play
    refused(t, PlaceBet(by=ANN, player="ann", spot="rouge" if kind == "simple" else "plein 5",
                        amount=(ceiling + 1) * CHF), "over_maximum")  # fmt: skip


def test_maxima_may_be_lowered_and_raised_back_up_to_the_regulation(refused):
    t = new_table()
    s = t.state.settings
    low = msgspec.structs.replace(s, maxima={**s.maxima, "plein": 200 * CHF, "simple": 2_000 * CHF})
    t.handle(ChangeSettings(by=DIRECTOR, settings=low, reason="quiet evening"))
    settle_on(t, 3)
    t.handle(OpenSpin(by=CROUPIER))
    refused(t, PlaceBet(by=ANN, player="ann", spot="plein 5", amount=201 * CHF), "over_maximum")
    back = msgspec.structs.replace(low, maxima=s.maxima)
    t.handle(ChangeSettings(by=DIRECTOR, settings=back))
    settle_on(t, 3)
    t.handle(OpenSpin(by=CROUPIER))
    place(t, ANN, "plein 5", 500 * CHF)
    place(t, ANN, "rouge", 10_000 * CHF)
    # above the regulation: only the director's raise with the control officer (Art. 5)
    t.handle(RaiseLimit(by=DIRECTOR, kind="plein", maximum=1_500 * CHF, control_officer="m. rossi"))
    # a settings change keeping that raise is still within the regulation's maxima
    t.handle(ChangeSettings(by=DIRECTOR, settings=msgspec.structs.replace(t.state.pending_settings, minimum=10 * CHF)))


def test_the_doubled_plein_doubles_the_plein_ceiling(refused):
    t = new_table()
    s = t.state.settings
    # granting the doubled plein (Art. 5: "consentito il raddoppio a Frs. 1.000")
    t.handle(ChangeSettings(by=DIRECTOR, settings=msgspec.structs.replace(s, doubled_plein=True)))
    doubled = new_table(doubled_plein=True)
    ds = doubled.state.settings
    over = msgspec.structs.replace(ds, maxima={**ds.maxima, "plein": 501 * CHF})  # plays as 1,002
    err = refused(doubled, ChangeSettings(by=DIRECTOR, settings=over), "above_regulation_maximum")
    assert err.details == {"kind": "plein", "ceiling": 1_000 * CHF}


def test_live_and_currency_are_fixed_for_the_tables_life(refused):
    t = new_table()
    rng = msgspec.structs.replace(t.state.settings, live=False)
    refused(t, ChangeSettings(by=DIRECTOR, settings=rng), "invalid_settings")
    r = RouletteTable("r", default_settings(live=False))
    live = msgspec.structs.replace(r.state.settings, live=True)
    refused(r, ChangeSettings(by=DIRECTOR, settings=live), "invalid_settings")


@pytest.mark.parametrize(
    "change, code",
    [({"maxima": {"plein": -1}}, "invalid_command"),  # the audit's negative maximum
     ({"maxima": {"plein": 2**70}}, "invalid_command"),  # beyond int64
     ({"minimum": 600 * CHF}, "invalid_settings")],  # the minimum above the plein maximum
)  # fmt: skip
def test_maxima_are_bounded_amounts(change, code, refused):
    t = new_table()
    s = t.state.settings
    new = msgspec.structs.replace(s, minimum=change.get("minimum", s.minimum), maxima={**s.maxima, **change.get("maxima", {})})
    refused(t, ChangeSettings(by=DIRECTOR, settings=new), code)


# ---------------------------------------------------------------- entry limit (issue 12, item 21)

FLOOR_BLUE = Actor("floor:blue")


def test_an_entered_pile_plays_up_to_ten_times_the_maximum(refused):
    t = new_table()
    # plein maximum CHF 500: the console takes a pile up to CHF 5,000 (Art. 8 excess 4,500)
    events = place(t, FLOOR_BLUE, "plein 5", 5_000 * CHF, by=CROUPIER)
    assert events[1] == OverMaximumEntered(events[0].wager, "floor:blue", "plein 5", 500 * CHF, 4_500 * CHF, "c1")
    err = refused(t, PlaceBet(by=CROUPIER, player="floor:blue", spot="plein 6", amount=5_000 * CHF + 1),
                  "above_entry_limit")  # fmt: skip
    assert err.details == {"spot": "plein 6", "maximum": 500 * CHF, "limit": 5_000 * CHF}
    assert "5,000.00 CHF" in err.message
    refused(t, PlaceBet(by=CROUPIER, player="floor:blue", spot="plein 6", amount=MAX_AMOUNT), "above_entry_limit")
    # beyond int64 it is not an amount at all (the state could no longer be saved)
    refused(t, PlaceBet(by=CROUPIER, player="floor:blue", spot="plein 6", amount=2**70), "invalid_command")
    refused(t, PlaceBet(by=CHEF, player="floor:blue", spot="rouge", amount=2**64), "invalid_command")
    # the pile on the maximum settles: 500 x 35 won, the 4,500 excess returned with the 500 staked
    assert settle_on(t, 5) == {events[0].wager: (5_000 * CHF, 5_000 * CHF, 500 * CHF * 35)}
    msgspec.msgpack.encode(t.state)


def test_the_entry_limit_holds_for_each_announced_piece_and_follows_a_raise(refused):
    t = new_table()
    # voisins puts 2 units on transversale 0-2-3 (maximum CHF 1,500, so at most CHF 15,000)
    err = refused(t, PlaceAnnounced(by=CROUPIER, player="floor:blue", announce="voisins", unit=750_001),
                  "above_entry_limit")  # fmt: skip
    assert err.details["spot"] == "transversale 0-2-3" and err.details["limit"] == 15_000 * CHF
    placed = t.handle(PlaceAnnounced(by=CROUPIER, player="floor:blue", announce="voisins", unit=750_000))
    assert len([e for e in placed if isinstance(e, OverMaximumEntered)]) == 7  # every piece is over
    t.handle(RaiseLimit(by=DIRECTOR, kind="plein", maximum=1_500 * CHF, control_officer="m. rossi"))
    settle_on(t, 1)
    t.handle(OpenSpin(by=CROUPIER))
    place(t, FLOOR_BLUE, "plein 5", 15_000 * CHF, by=CROUPIER)
    refused(t, PlaceBet(by=CROUPIER, player="floor:blue", spot="plein 6", amount=15_000 * CHF + 1), "above_entry_limit")
