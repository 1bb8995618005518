"""Zero (Art. 3): en prison, partage, freeing, losing, second zeros, moving a prisoner."""

from __future__ import annotations

import pytest

from games.commands import Actor
from games.wagers import WagerPlaced, WagerSettled
from helpers.actors import ANN, BOB, CHEF, CROUPIER
from roulette.commands import (
    ChoosePartage,
    LaunchBall,
    MovePrisoner,
    NoMoreBets,
    OpenSpin,
    PlaceBet,
    Result,
    SetPartagePreference,
    VoidSpin,
    WithdrawBet,
)  # fmt: skip
from roulette.engine import RouletteTable
from roulette.events import PrisonerMoved, PrisonerStays, WagerImprisoned
from roulette.limits import default_settings


def new_table(policy: str = "lose") -> RouletteTable:
    t = RouletteTable("t1", default_settings(prison_on_zero=policy))
    t.handle(OpenSpin(), CROUPIER)
    return t


def bet(t: RouletteTable, who: Actor, spot: str, amount: int) -> str:
    (ev,) = [e for e in t.handle(PlaceBet(player=who.id, spot=spot, amount=amount), who) if isinstance(e, WagerPlaced)]
    return ev.wager


def spin_and_reopen(t: RouletteTable, number: int) -> list:
    t.handle(LaunchBall(), CROUPIER)
    t.handle(NoMoreBets(), CROUPIER)
    events = t.handle(Result(number=number), CROUPIER)
    t.handle(OpenSpin(), CROUPIER)
    return events


def settled(events) -> dict[str, tuple[int, int, str]]:
    return {e.wager: (e.returned, e.won, e.reason) for e in events if isinstance(e, WagerSettled)}


def test_zero_imprisons_simple_chances_and_takes_multiples_without_zero():
    t = new_table()
    w_red = bet(t, ANN, "rouge", 1000)
    w_doz = bet(t, ANN, "douzaine 1", 1000)
    w_col = bet(t, ANN, "colonne 2", 1000)
    w_4p = bet(t, ANN, "quatre premiers", 1000)
    w_c = bet(t, ANN, "cheval 0/2", 1000)
    events = spin_and_reopen(t, 0)
    assert settled(events) == {
        w_doz: (0, 0, "lost"), w_col: (0, 0, "lost"),
        w_4p: (1000, 8000, "won"), w_c: (1000, 17000, "won"),
    }  # fmt: skip
    assert [e.wager for e in events if isinstance(e, WagerImprisoned)] == [w_red]
    assert t.view().prisoners == [w_red]
    assert t.state.bets[0].prison


@pytest.mark.parametrize("number, outcome", [(3, (1000, 0, "freed")), (2, (0, 0, "prison_lost"))])
def test_prisoner_freed_unpaid_or_lost_on_the_next_decisive_spin(number, outcome):
    t = new_table()
    w = bet(t, ANN, "rouge", 1000)
    spin_and_reopen(t, 0)
    assert settled(spin_and_reopen(t, number)) == {w: outcome}
    assert t.state.bets == []


def test_second_zero_loses_by_default():
    t = new_table("lose")
    w = bet(t, ANN, "pair", 1000)
    spin_and_reopen(t, 0)
    assert settled(spin_and_reopen(t, 0)) == {w: (0, 0, "prison_lost")}


def test_second_zero_stays_when_the_table_says_so():
    t = new_table("stay")
    w = bet(t, ANN, "pair", 1000)
    spin_and_reopen(t, 0)
    events = spin_and_reopen(t, 0)
    assert settled(events) == {}
    assert [e.wager for e in events if isinstance(e, PrisonerStays)] == [w]
    assert settled(spin_and_reopen(t, 0)) == {}
    assert settled(spin_and_reopen(t, 36)) == {w: (1000, 0, "freed")}


def test_standing_partage_preference_returns_half_at_once():
    t = new_table()
    t.handle(SetPartagePreference(player="ann", partage=True), ANN)
    w_even = bet(t, ANN, "manque", 1000)
    w_odd = bet(t, ANN, "passe", 1001)
    w_bob = bet(t, BOB, "passe", 1000)
    events = spin_and_reopen(t, 0)
    # odd stake: the player gets the larger half (the bank takes half, never more)
    assert settled(events) == {w_even: (500, 0, "partage"), w_odd: (501, 0, "partage")}
    assert [e.wager for e in events if isinstance(e, WagerImprisoned)] == [w_bob]
    t.handle(SetPartagePreference(player="ann", partage=False), ANN)
    bet(t, ANN, "manque", 1000)
    assert len([e for e in spin_and_reopen(t, 0) if isinstance(e, WagerImprisoned)]) == 1


def test_a_preference_names_its_player(refused):
    t = new_table()
    refused(t, SetPartagePreference(player="", partage=True), Actor("c1", "croupier"), "unknown_player")


@pytest.mark.parametrize(
    "policy, number, expected",
    [
        # fresh rouge 1000, plein 17 100, prisoner pair 3001 (2: black, even; 17: black, odd)
        ("lose", 0, {"r": ("partage", 500, 0), "p": ("lost", 0, 0), "q": ("prison_lost", 0, 0)}),
        ("stay", 0, {"r": ("partage", 500, 0), "p": ("lost", 0, 0), "q": ("partage", 1501, 0)}),
        ("stay", 2, {"r": ("lost", 0, 0), "p": ("lost", 0, 0), "q": ("freed", 3001, 0)}),
        ("stay", 17, {"r": ("lost", 0, 0), "p": ("won", 100, 3500), "q": ("prison_lost", 0, 0)}),
    ],
)
def test_last_spin_settlement_leaves_nothing_en_prison(policy, number, expected):
    from roulette.settlement import settle
    from roulette.state import Bet

    bets = [
        Bet("r", "ann", "rouge", 1000, 5),
        Bet("p", "ann", "plein 17", 100, 5),
        Bet("q", "bob", "pair", 3001, 4, prison=True),
    ]
    got = {b.wager: (result, ret, won) for b, result, ret, won in settle(bets, number, policy, (), last=True)}
    assert got == expected


@pytest.mark.parametrize("reopen", [False, True])
def test_partage_chosen_after_the_zero(reopen, refused):
    t = new_table()
    w = bet(t, ANN, "noir", 2000)
    t.handle(LaunchBall(), CROUPIER)
    t.handle(NoMoreBets(), CROUPIER)
    t.handle(Result(number=0), CROUPIER)
    if reopen:  # still possible once the next spin is open
        t.handle(OpenSpin(), CROUPIER)
    refused(t, ChoosePartage(wager=w), BOB, "not_allowed")
    assert t.handle(ChoosePartage(wager=w), ANN) == [WagerSettled(w, "ann", 2000, 1000, 0, "partage")]
    assert t.state.bets == []


def test_no_choice_once_the_next_spin_is_closed(refused):
    t = new_table()
    w = bet(t, ANN, "noir", 2000)
    spin_and_reopen(t, 0)
    t.handle(LaunchBall(), CROUPIER)
    t.handle(NoMoreBets(), CROUPIER)
    refused(t, ChoosePartage(wager=w), ANN, "wrong_phase")
    refused(t, MovePrisoner(wager=w, to="rouge"), ANN, "wrong_phase")


@pytest.mark.parametrize("live", [True, False], ids=["live", "rng"])
def test_no_partage_and_no_move_once_the_ball_runs(live, refused):
    """Once the ball is launched nothing is taken back (Art. 12): half a prisoner returned by
    partage would be, and a move takes it off its chance and puts it on another with no chef
    to accept it (Art. 9). A player watching the ball at a live wheel could otherwise split
    or switch a prisoner the ball is heading to lose. "Rien va" (a void spin) brings the
    choice back with the bets."""
    wheel = CROUPIER if live else Actor("system:t1", "system")
    t = RouletteTable("t1", default_settings(live=live))
    t.handle(OpenSpin(), wheel)
    noir, pair = bet(t, ANN, "noir", 2000), bet(t, ANN, "pair", 1000)
    t.handle(LaunchBall(), wheel)
    t.handle(NoMoreBets(), wheel)
    t.handle(Result(number=0), wheel)
    t.handle(OpenSpin(), wheel)
    t.handle(LaunchBall(), wheel)
    for command in (ChoosePartage(wager=noir), MovePrisoner(wager=noir, to="rouge"), ChoosePartage(wager=pair)):
        err = refused(t, command, ANN, "wrong_phase")
        assert "once the ball is launched" in err.message
    t.handle(VoidSpin(reason="the ball made fewer than three turns"), wheel if not live else CHEF)
    assert t.handle(MovePrisoner(wager=noir, to="rouge"), ANN) == [PrisonerMoved(noir, "ann", "noir", "rouge")]
    assert t.handle(ChoosePartage(wager=pair), ANN) == [WagerSettled(pair, "ann", 1000, 500, 0, "partage")]


def test_move_a_prisoner_to_another_simple_chance(refused):
    t = new_table()
    w = bet(t, ANN, "rouge", 1000)
    spin_and_reopen(t, 0)
    refused(t, MovePrisoner(wager=w, to="plein 17"), ANN, "not_simple_chance")
    refused(t, MovePrisoner(wager=w, to="rouge"), ANN, "same_spot")
    refused(t, MovePrisoner(wager=w, to="rouge/noir"), ANN, "astride_forbidden")
    refused(t, MovePrisoner(wager=w, to="noir"), BOB, "not_allowed")
    assert t.handle(MovePrisoner(wager=w, to="black"), ANN) == [PrisonerMoved(w, "ann", "rouge", "noir")]
    assert settled(spin_and_reopen(t, 2)) == {w: (1000, 0, "freed")}  # 2 is black


def test_only_a_prisoner_can_be_moved_or_split(refused):
    t = new_table()
    w = bet(t, ANN, "rouge", 1000)
    refused(t, MovePrisoner(wager=w, to="noir"), ANN, "not_imprisoned")
    refused(t, ChoosePartage(wager=w), ANN, "not_imprisoned")
    refused(t, MovePrisoner(wager="s9-w99", to="noir"), ANN, "unknown_wager")


def test_a_prisoner_cannot_be_withdrawn_and_counts_toward_the_maximum(refused):
    t = new_table()
    w = bet(t, ANN, "impair", 1_000_000)  # the full CHF 10,000 maximum
    spin_and_reopen(t, 0)
    refused(t, WithdrawBet(wager=w), ANN, "imprisoned")
    err = refused(t, PlaceBet(player="ann", spot="impair", amount=500), ANN, "over_maximum")
    assert err.details["room"] == 0
    bet(t, ANN, "pair", 500)
    refused(t, MovePrisoner(wager=w, to="pair"), ANN, "over_maximum")
