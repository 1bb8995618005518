"""Minimum and maxima (Art. 5-8): summed per player per combination, through announced
pieces and società; the doubled plein; the director's raise; Art. 8 over-max settlement."""

from __future__ import annotations

import msgspec
import pytest

from games.commands import Actor
from games.money import MAX_AMOUNT
from games.wagers import WagerPlaced, WagerSettled
from helpers.actors import ANN, BOB, CHEF, CROUPIER, DIRECTOR, FLOOR_ANN
from roulette.commands import (
    ChangeSettings,
    LaunchBall,
    NoMoreBets,
    OpenSpin,
    PlaceAnnounced,
    PlaceBet,
    RaiseLimit,
    RegisterSocieta,
    Result,
    WithdrawBet,
)  # fmt: skip
from roulette.engine import RouletteTable
from roulette.events import LimitRaised, OverMaximumEntered, SettingsAnnounced, SocietaRegistered
from roulette.limits import default_settings

CHF = 100  # minor units per franc


def new_table(**kw) -> RouletteTable:
    t = RouletteTable("t1", default_settings(**kw))
    t.handle(OpenSpin(), CROUPIER)
    return t


def place(t, who, spot, amount, by=None):
    return t.handle(PlaceBet(player=who.id, spot=spot, amount=amount), by or who)


def settle_on(t, number):
    t.handle(LaunchBall(), CROUPIER)
    t.handle(NoMoreBets(), CROUPIER)
    events = t.handle(Result(number=number), CROUPIER)
    return {e.wager: (e.stake, e.returned, e.won) for e in events if isinstance(e, WagerSettled)}


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
    err = refused(t, PlaceBet(player="ann", spot="plein 1", amount=499), ANN, "below_minimum")
    assert "5.00 CHF" in err.message
    refused(t, PlaceAnnounced(player="ann", announce="tiers", unit=499), ANN, "below_minimum")
    place(t, ANN, "plein 1", 500)


@pytest.mark.parametrize("amount", [0, -500, 12.5, 1000.0, True, "1000"])
def test_amounts_must_be_positive_whole_numbers(amount, refused):
    t = new_table()
    refused(t, PlaceBet(player="ann", spot="rouge", amount=amount), ANN, "invalid_amount")


def test_maximum_sums_every_chip_of_the_player_on_the_combination(refused):
    t = new_table()
    place(t, ANN, "plein 17", 300 * CHF)
    err = refused(t, PlaceBet(player="ann", spot="plein 17", amount=201 * CHF), ANN, "over_maximum")
    assert err.details["room"] == 200 * CHF
    assert "200.00 CHF" in err.message
    place(t, BOB, "plein 17", 500 * CHF)  # each player has his own maximum
    place(t, ANN, "plein 17", 200 * CHF)


def test_announced_pieces_count_toward_the_maxima(refused):
    t = new_table()
    place(t, ANN, "cheval 17/20", 990 * CHF)
    # orphelins puts one unit on 17/20: 990 + 20 > 1,000
    err = refused(t, PlaceAnnounced(player="ann", announce="orphelins", unit=20 * CHF), ANN, "over_maximum")
    assert err.details["spot"] == "cheval 17/20" and err.details["room"] == 10 * CHF
    t.handle(PlaceAnnounced(player="ann", announce="orphelins", unit=10 * CHF), ANN)
    # voisins puts two units on 0-2-3: a unit of 751 would need 1,502 > 1,500
    refused(t, PlaceAnnounced(player="ann", announce="voisins du zéro", unit=751 * CHF), ANN, "over_maximum")
    t.handle(PlaceAnnounced(player="ann", announce="voisins du zéro", unit=750 * CHF), ANN)
    # and then a direct bet on a piece's combination sees them
    refused(t, PlaceBet(player="ann", spot="transversale 0-2-3", amount=500), ANN, "over_maximum")


def test_announced_neighbours_overlapping_a_plein(refused):
    t = new_table()
    t.handle(PlaceAnnounced(player="ann", announce="17 et 2 voisins", unit=300 * CHF), ANN)
    refused(t, PlaceAnnounced(player="ann", announce="25 et 1 voisins", unit=201 * CHF), ANN, "over_maximum")
    t.handle(PlaceAnnounced(player="ann", announce="25 et 1 voisins", unit=200 * CHF), ANN)


def test_societa_members_share_one_maximum(refused):
    t = new_table()
    place(t, ANN, "douzaine 2", 3000 * CHF)
    assert t.handle(RegisterSocieta(name="fratelli", members=["ann", "bob"]), CHEF) == [
        SocietaRegistered("fratelli", ["ann", "bob"], "h1")
    ]
    err = refused(t, PlaceBet(player="bob", spot="douzaine 2", amount=2001 * CHF), BOB, "over_maximum")
    assert err.details["room"] == 2000 * CHF and "società" in err.message
    place(t, BOB, "douzaine 2", 2000 * CHF)
    place(t, Actor("cy"), "douzaine 2", 5000 * CHF)  # not a member


def test_societa_registration_rules(refused):
    t = new_table()
    place(t, ANN, "rouge", 6000 * CHF)
    place(t, BOB, "rouge", 6000 * CHF)
    refused(t, RegisterSocieta(name="x", members=["ann", "cy"]), CROUPIER, "not_allowed")
    refused(t, RegisterSocieta(name="x", members=["ann"]), CHEF, "invalid_societa")
    refused(t, RegisterSocieta(name="x", members=["ann", "bob"]), CHEF, "societa_over_maximum")
    t.handle(RegisterSocieta(name="x", members=["ann", "cy"]), CHEF)
    refused(t, RegisterSocieta(name="y", members=["cy", "dan"]), CHEF, "invalid_societa")
    refused(t, RegisterSocieta(name="x", members=["eve", "dan"]), CHEF, "invalid_societa")


def test_doubled_plein(refused):
    t = new_table(doubled_plein=True)
    place(t, ANN, "plein 5", 1000 * CHF)
    refused(t, PlaceBet(player="ann", spot="plein 6", amount=1001 * CHF), ANN, "over_maximum")
    place(t, ANN, "cheval 5/6", 1000 * CHF)  # the cheval is not doubled
    refused(t, PlaceBet(player="ann", spot="cheval 5/8", amount=1001 * CHF), ANN, "over_maximum")


def test_director_raise_names_who_authorised_it_and_applies_from_next_spin(refused):
    t = new_table()
    refused(t, RaiseLimit(kind="plein", maximum=1500 * CHF, control_officer="m. rossi"), CHEF, "not_allowed")
    refused(t, RaiseLimit(kind="plein", maximum=1500 * CHF, control_officer=""), DIRECTOR, "missing_authorisation")
    refused(t, RaiseLimit(kind="plein", maximum=1501 * CHF, control_officer="m. rossi"), DIRECTOR, "raise_out_of_range")
    refused(t, RaiseLimit(kind="cheval", maximum=2001 * CHF, control_officer="m. rossi"), DIRECTOR,
            "raise_out_of_range")  # fmt: skip
    refused(t, RaiseLimit(kind="carre", maximum=2001 * CHF, control_officer="m. rossi"), DIRECTOR, "raise_not_allowed")
    events = t.handle(RaiseLimit(kind="plein", maximum=1500 * CHF, control_officer="m. rossi"), DIRECTOR)
    assert events[0] == LimitRaised("plein", 1500 * CHF, 2, "d1", "m. rossi", "plein maximum raised")
    assert isinstance(events[1], SettingsAnnounced) and events[1].effective_spin == 2
    t.handle(RaiseLimit(kind="cheval", maximum=2000 * CHF, control_officer="m. rossi"), DIRECTOR)
    # this spin still runs on the old limits
    refused(t, PlaceBet(player="ann", spot="plein 5", amount=501 * CHF), ANN, "over_maximum")
    settle_on(t, 1)
    t.handle(OpenSpin(), CROUPIER)
    assert t.state.settings.maximum("plein") == 1500 * CHF
    assert t.state.settings.maximum("cheval") == 2000 * CHF
    place(t, ANN, "plein 5", 1500 * CHF)
    place(t, ANN, "cheval 5/8", 2000 * CHF)
    refused(t, PlaceBet(player="ann", spot="plein 5", amount=500), ANN, "over_maximum")


def test_settings_change_from_the_next_spin_and_are_announced(refused):
    t = new_table()
    new = msgspec.structs.replace(t.state.settings, minimum=25 * CHF, prison_on_zero="stay")
    refused(t, ChangeSettings(settings=new), CHEF, "not_allowed")
    bad = msgspec.structs.replace(new, minimum=0)
    refused(t, ChangeSettings(settings=bad), DIRECTOR, "invalid_settings")
    refused(t, ChangeSettings(settings=msgspec.structs.replace(new, currency="EUR")), DIRECTOR, "invalid_settings")
    assert t.handle(ChangeSettings(settings=new, reason="evening"), DIRECTOR) == [
        SettingsAnnounced(new, 2, "d1", "evening")
    ]
    place(t, ANN, "rouge", 5 * CHF)  # the old minimum still holds this spin
    assert t.view().pending_settings == new
    settle_on(t, 3)
    t.handle(OpenSpin(), CROUPIER)
    assert t.state.settings == new and t.state.pending_settings is None
    refused(t, PlaceBet(player="ann", spot="rouge", amount=5 * CHF), ANN, "below_minimum")


def test_a_raise_comes_only_through_the_directors_raise(refused):
    # A settings change may not grant or stretch a raise: that would skip the control
    # officer Art. 5 requires and the 1,500 / 2,000 ceilings.
    t = new_table()
    s = t.state.settings
    sneaky = msgspec.structs.replace(s, raised={"plein": 1500 * CHF})
    refused(t, ChangeSettings(settings=sneaky), DIRECTOR, "missing_authorisation")
    wider = msgspec.structs.replace(s, raise_ceilings={"plein": 10_000 * CHF, "cheval": 2000 * CHF})
    refused(t, ChangeSettings(settings=wider), DIRECTOR, "missing_authorisation")
    odd = msgspec.structs.replace(s, raise_ceilings={"foo": 10}, raised={"foo": 5})
    refused(t, ChangeSettings(settings=odd), DIRECTOR, "invalid_settings")
    t.handle(RaiseLimit(kind="plein", maximum=1200 * CHF, control_officer="m. rossi"), DIRECTOR)
    # a later change of the minimum (as the server's limits console sends it) keeps the raise
    later = msgspec.structs.replace(t.state.pending_settings, minimum=10 * CHF)
    t.handle(ChangeSettings(settings=later), DIRECTOR)
    settle_on(t, 1)
    t.handle(OpenSpin(), CROUPIER)
    assert t.state.settings.maximum("plein") == 1200 * CHF and t.state.settings.minimum == 10 * CHF


def test_player_over_maximum_is_refused_with_the_room_left(refused):
    t = new_table()
    err = refused(t, PlaceBet(player="ann", spot="sixain 1-6", amount=3001 * CHF), ANN, "over_maximum")
    assert err.details == {"spot": "sixain 1-6", "room": 3000 * CHF, "maximum": 3000 * CHF, "units": 0}


@pytest.mark.parametrize(
    "number, expected", [(5, (700 * CHF, 700 * CHF, 500 * CHF * 35)), (6, (700 * CHF, 200 * CHF, 0))]
)
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
    t.handle(WithdrawBet(wager=w), ANN)
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
    err = refused(t, ChangeSettings(settings=high), DIRECTOR, "above_regulation_maximum")
    assert err.details == {"kind": kind, "ceiling": ceiling * CHF}
    assert f"{ceiling:,}.00 CHF" in err.message and "Art. 5" in err.message
    assert ("RaiseLimit" in err.message) == (kind in ("plein", "cheval"))
    # bets at the refused maximum still do not play
    refused(t, PlaceBet(player="ann", spot="rouge" if kind == "simple" else "plein 5",
                        amount=(ceiling + 1) * CHF), ANN, "over_maximum")  # fmt: skip


def test_maxima_may_be_lowered_and_raised_back_up_to_the_regulation(refused):
    t = new_table()
    s = t.state.settings
    low = msgspec.structs.replace(s, maxima={**s.maxima, "plein": 200 * CHF, "simple": 2_000 * CHF})
    t.handle(ChangeSettings(settings=low, reason="quiet evening"), DIRECTOR)
    settle_on(t, 3)
    t.handle(OpenSpin(), CROUPIER)
    refused(t, PlaceBet(player="ann", spot="plein 5", amount=201 * CHF), ANN, "over_maximum")
    back = msgspec.structs.replace(low, maxima=s.maxima)
    t.handle(ChangeSettings(settings=back), DIRECTOR)
    settle_on(t, 3)
    t.handle(OpenSpin(), CROUPIER)
    place(t, ANN, "plein 5", 500 * CHF)
    place(t, ANN, "rouge", 10_000 * CHF)
    # above the regulation: only the director's raise with the control officer (Art. 5)
    t.handle(RaiseLimit(kind="plein", maximum=1_500 * CHF, control_officer="m. rossi"), DIRECTOR)
    # a settings change keeping that raise is still within the regulation's maxima
    t.handle(ChangeSettings(settings=msgspec.structs.replace(t.state.pending_settings, minimum=10 * CHF)), DIRECTOR)


def test_the_doubled_plein_doubles_the_plein_ceiling(refused):
    t = new_table()
    s = t.state.settings
    # granting the doubled plein (Art. 5: "consentito il raddoppio a Frs. 1.000")
    t.handle(ChangeSettings(settings=msgspec.structs.replace(s, doubled_plein=True)), DIRECTOR)
    doubled = new_table(doubled_plein=True)
    ds = doubled.state.settings
    over = msgspec.structs.replace(ds, maxima={**ds.maxima, "plein": 501 * CHF})  # plays as 1,002
    err = refused(doubled, ChangeSettings(settings=over), DIRECTOR, "above_regulation_maximum")
    assert err.details == {"kind": "plein", "ceiling": 1_000 * CHF}


def test_live_and_currency_are_fixed_for_the_tables_life(refused):
    t = new_table()
    rng = msgspec.structs.replace(t.state.settings, live=False)
    refused(t, ChangeSettings(settings=rng), DIRECTOR, "invalid_settings")
    r = RouletteTable("r", default_settings(live=False))
    live = msgspec.structs.replace(r.state.settings, live=True)
    refused(r, ChangeSettings(settings=live), DIRECTOR, "invalid_settings")


@pytest.mark.parametrize(
    "change, code",
    [({"maxima": {"plein": -1}}, "invalid_command"),  # the audit's negative maximum
     ({"maxima": {"plein": 2**70}}, "invalid_command"),  # beyond int64
     ({"minimum": 600 * CHF}, "invalid_settings")],  # the minimum above the plein maximum
)  # fmt: skip
def test_maxima_are_bounded_amounts(change, code, refused):
    t = new_table()
    s = t.state.settings
    maxima = {**s.maxima, **change.get("maxima", {})}
    new = msgspec.structs.replace(s, minimum=change.get("minimum", s.minimum), maxima=maxima)
    refused(t, ChangeSettings(settings=new), DIRECTOR, code)


# ---------------------------------------------------------------- entry limit (issue 12, item 21)

FLOOR_BLUE = Actor("floor:blue")


def test_an_entered_pile_plays_up_to_ten_times_the_maximum(refused):
    t = new_table()
    # plein maximum CHF 500: the console takes a pile up to CHF 5,000 (Art. 8 excess 4,500)
    events = place(t, FLOOR_BLUE, "plein 5", 5_000 * CHF, by=CROUPIER)
    assert events[1] == OverMaximumEntered(events[0].wager, "floor:blue", "plein 5", 500 * CHF, 4_500 * CHF, "c1")
    err = refused(t, PlaceBet(player="floor:blue", spot="plein 6", amount=5_000 * CHF + 1), CROUPIER,
                  "above_entry_limit")  # fmt: skip
    assert err.details == {"spot": "plein 6", "maximum": 500 * CHF, "limit": 5_000 * CHF}
    assert "5,000.00 CHF" in err.message
    refused(t, PlaceBet(player="floor:blue", spot="plein 6", amount=MAX_AMOUNT), CROUPIER, "above_entry_limit")
    # beyond int64 it is not an amount at all (the state could no longer be saved)
    refused(t, PlaceBet(player="floor:blue", spot="plein 6", amount=2**70), CROUPIER, "invalid_command")
    refused(t, PlaceBet(player="floor:blue", spot="rouge", amount=2**64), CHEF, "invalid_command")
    # the pile on the maximum settles: 500 x 35 won, the 4,500 excess returned with the 500 staked
    assert settle_on(t, 5) == {events[0].wager: (5_000 * CHF, 5_000 * CHF, 500 * CHF * 35)}
    msgspec.msgpack.encode(t.state)


def test_the_entry_limit_holds_for_each_announced_piece_and_follows_a_raise(refused):
    t = new_table()
    # voisins puts 2 units on transversale 0-2-3 (maximum CHF 1,500, so at most CHF 15,000)
    err = refused(t, PlaceAnnounced(player="floor:blue", announce="voisins", unit=750_001), CROUPIER,
                  "above_entry_limit")  # fmt: skip
    assert err.details["spot"] == "transversale 0-2-3" and err.details["limit"] == 15_000 * CHF
    placed = t.handle(PlaceAnnounced(player="floor:blue", announce="voisins", unit=750_000), CROUPIER)
    assert len([e for e in placed if isinstance(e, OverMaximumEntered)]) == 7  # every piece is over
    t.handle(RaiseLimit(kind="plein", maximum=1_500 * CHF, control_officer="m. rossi"), DIRECTOR)
    settle_on(t, 1)
    t.handle(OpenSpin(), CROUPIER)
    place(t, FLOOR_BLUE, "plein 5", 15_000 * CHF, by=CROUPIER)
    refused(t, PlaceBet(player="floor:blue", spot="plein 6", amount=15_000 * CHF + 1), CROUPIER, "above_entry_limit")
