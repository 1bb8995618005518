"""Who may move whose chips (issue 12, items 1, 9 and 22): only a player stakes his own
money; staff enter chips only for floor players at a live table; an RNG table takes no
late bets; suspending or closing is for the Direzione Giochi (Art. 15)."""

from __future__ import annotations

import msgspec
import pytest

from games.wagers import ChipsUnclaimed, WagerPlaced, WagerSettled, WagerVoided
from roulette import events as E
from roulette.commands import (
    ChoosePartage, CloseTable, LaunchBall, MarkUnclaimed, MovePrisoner, NoMoreBets, OpenSpin,
    PlaceAnnounced, PlaceBet, Result, SameAgain, SetPartagePreference, Suspend, WithdrawBet,
)  # fmt: skip
from roulette.engine import RouletteTable
from roulette.limits import default_settings
from roulette.state import Actor

CROUPIER = Actor("c1", "croupier")
CHEF = Actor("h1", "chef")
DIRECTOR = Actor("d1", "director")
STAFF = {"croupier": CROUPIER, "chef": CHEF, "director": DIRECTOR}
ANN = Actor("ann")
BOB = Actor("bob")
FLOOR_BOB = "floor:bob"


def _wager(events, spot: str) -> str:
    return next(e.wager for e in events if isinstance(e, WagerPlaced) and e.spot == spot)


def prepared() -> tuple[RouletteTable, dict[str, dict[str, str]]]:
    """Spin 2 open at a live table. The online player bob (by his own commands) and the
    floor player floor:bob (entered by the croupier) each have: rouge CHF 10 en prison
    from spin 1's zero, spin 1's bets to restate, and douzaine 1 CHF 10 on the layout."""
    t = RouletteTable("t1")
    t.handle(OpenSpin(by=CROUPIER))
    for by, player in ((BOB, "bob"), (CROUPIER, FLOOR_BOB)):
        t.handle(PlaceBet(by=by, player=player, spot="rouge", amount=1000))
        t.handle(PlaceBet(by=by, player=player, spot="plein 17", amount=500))
    t.handle(LaunchBall(by=CROUPIER))
    t.handle(NoMoreBets(by=CROUPIER))
    t.handle(Result(by=CROUPIER, number=0))
    t.handle(OpenSpin(by=CROUPIER))
    wagers = {}
    for by, player in ((BOB, "bob"), (CROUPIER, FLOOR_BOB)):
        prisoner = next(b.wager for b in t.state.bets if b.player == player and b.prison)
        douzaine = _wager(t.handle(PlaceBet(by=by, player=player, spot="douzaine 1", amount=1000)), "douzaine 1")
        wagers[player] = {"prisoner": prisoner, "douzaine": douzaine}
    return t, wagers


# Every command that places, restates, withdraws, splits, moves, sets a preference for or
# records a player's chips, made by ``by`` for ``player``.
MONEY_COMMANDS = {
    "PlaceBet": lambda by, p, w: PlaceBet(by=by, player=p, spot="plein 5", amount=500),
    "PlaceAnnounced": lambda by, p, w: PlaceAnnounced(by=by, player=p, announce="tiers", unit=500),
    "SameAgain": lambda by, p, w: SameAgain(by=by, player=p),
    "WithdrawBet": lambda by, p, w: WithdrawBet(by=by, wager=w[p]["douzaine"]),
    "ChoosePartage": lambda by, p, w: ChoosePartage(by=by, wager=w[p]["prisoner"]),
    "MovePrisoner": lambda by, p, w: MovePrisoner(by=by, wager=w[p]["prisoner"], to="noir"),
    "SetPartagePreference": lambda by, p, w: SetPartagePreference(by=by, player=p, partage=True),
    "MarkUnclaimed": lambda by, p, w: MarkUnclaimed(by=by, player=p),
}
ACTORS = {
    "bob": BOB, "ann": ANN, "floor-id": Actor(FLOOR_BOB),
    "croupier": CROUPIER, "chef": CHEF, "director": DIRECTOR,
}  # fmt: skip


def expected(actor: str, player: str, command: str) -> str:
    """The role x command matrix: "ok" or the refusal's code."""
    if actor in ("bob", "ann", "floor-id"):
        if command == "MarkUnclaimed" or actor != "bob" or player != "bob":
            return "not_allowed"  # the chef's register; another's chips; a floor id is nobody's login
        return "ok"
    if command == "MarkUnclaimed" and actor == "croupier":
        return "not_allowed"
    return "ok" if player == FLOOR_BOB else "floor_only"


@pytest.mark.parametrize("command", MONEY_COMMANDS)
@pytest.mark.parametrize("player", ["bob", FLOOR_BOB])
@pytest.mark.parametrize("actor", ACTORS)
def test_role_by_command_matrix(actor, player, command, refused):
    t, wagers = prepared()
    cmd = MONEY_COMMANDS[command](ACTORS[actor], player, wagers)
    code = expected(actor, player, command)
    if code != "ok":
        refused(t, cmd, code)
        return
    events = t.handle(cmd)
    assert events
    # whatever moved, moved the named player's chips only
    assert {e.player for e in events if isinstance(e, (WagerPlaced, WagerSettled, WagerVoided))} <= {player}


def test_a_croupier_can_no_longer_stake_an_online_wallet(refused):
    # The audit's request: as croupier, place_bet plein 17 CHF 5 for bob.
    t, _ = prepared()
    err = refused(t, PlaceBet(by=CROUPIER, player="bob", spot="plein 17", amount=500), "floor_only")
    assert err.details == {"player": "bob"}
    refused(t, PlaceAnnounced(by=CROUPIER, player="bob", announce="voisins du zéro", unit=500), "floor_only")
    # malformed floor ids are not floor players either
    refused(t, PlaceBet(by=CROUPIER, player="floor:", spot="plein 17", amount=500), "floor_only")
    refused(t, PlaceBet(by=CROUPIER, player="floor:Blue", spot="plein 17", amount=500), "floor_only")


def test_staff_enter_a_floor_players_chips_and_he_is_paid_on_the_felt():
    t = RouletteTable("t1")
    t.handle(OpenSpin(by=CROUPIER))
    (placed,) = t.handle(PlaceBet(by=CROUPIER, player="floor:blue", spot="plein 17", amount=500))
    assert placed == WagerPlaced(placed.wager, "floor:blue", 500, "plein 17")
    t.handle(LaunchBall(by=CROUPIER))
    t.handle(NoMoreBets(by=CROUPIER))
    events = t.handle(Result(by=CROUPIER, number=17))
    assert WagerSettled(placed.wager, "floor:blue", 500, 500, 35 * 500, "won") in events
    assert t.handle(MarkUnclaimed(by=CHEF, player="floor:blue")) == [
        ChipsUnclaimed("floor:blue", 1, "wins", 500 + 35 * 500, [], "h1")
    ]


def rng_table() -> RouletteTable:
    t = RouletteTable("rng-1", default_settings(live=False))
    t.handle(OpenSpin(by=Actor("system-rng-1", "chef")))
    return t


@pytest.mark.parametrize("role", STAFF)
def test_no_staff_chips_at_an_rng_table(role, refused):
    t = rng_table()
    by = STAFF[role]
    t.handle(PlaceBet(by=ANN, player="ann", spot="rouge", amount=1000))  # players play for themselves
    refused(t, PlaceBet(by=by, player="floor:blue", spot="rouge", amount=1000), "rng_table")
    refused(t, PlaceAnnounced(by=by, player="floor:blue", announce="tiers", unit=500), "rng_table")
    refused(t, SameAgain(by=by, player="floor:blue"), "rng_table")
    refused(t, SetPartagePreference(by=by, player="floor:blue", partage=True), "rng_table")
    # and never for an online player's wallet
    refused(t, PlaceBet(by=by, player="ann", spot="rouge", amount=1000), "floor_only")
    refused(t, WithdrawBet(by=by, wager=t.state.bets[0].wager), "floor_only")
    if role != "croupier":
        refused(t, MarkUnclaimed(by=by, player="floor:blue"), "rng_table")
        refused(t, MarkUnclaimed(by=by, player="ann"), "floor_only")


@pytest.mark.parametrize(
    "make",
    [lambda: PlaceBet(by=ANN, player="ann", spot="rouge", amount=1000),
     lambda: PlaceAnnounced(by=ANN, player="ann", announce="orphelins", unit=500),
     lambda: SameAgain(by=BOB, player="bob")],
    ids=["PlaceBet", "PlaceAnnounced", "SameAgain"],
)  # fmt: skip
def test_an_rng_table_refuses_a_late_bet_at_once(make, refused):
    # Art. 9's late bets need a chef de table to accept them: an RNG table has none.
    t = RouletteTable("rng-1", default_settings(live=False))
    system = Actor("system-rng-1", "chef")
    t.handle(OpenSpin(by=system))
    t.handle(PlaceBet(by=BOB, player="bob", spot="noir", amount=1000))
    for c in (LaunchBall(by=system), NoMoreBets(by=system), Result(by=system, number=2), OpenSpin(by=system)):
        t.handle(c)
    t.handle(LaunchBall(by=system))
    err = refused(t, make(), "no_more_bets")
    assert "Art. 9" in err.message
    assert t.state.late == []


def test_a_live_table_still_queues_late_bets_for_the_chef():
    t = RouletteTable("t1")
    t.handle(OpenSpin(by=CROUPIER))
    t.handle(LaunchBall(by=CROUPIER))
    (pending,) = t.handle(PlaceBet(by=ANN, player="ann", spot="rouge", amount=1000))
    assert isinstance(pending, E.LateBetPending) and pending.entered_by == "ann"
    (floor,) = t.handle(PlaceBet(by=CROUPIER, player="floor:blue", spot="noir", amount=1000))
    assert isinstance(floor, E.LateBetPending) and (floor.player, floor.entered_by) == ("floor:blue", "c1")


# ---------------------------------------------------------------- Art. 15


@pytest.mark.parametrize("how", ["suspend", "close"])
def test_a_chef_alone_may_not_suspend_or_close(how, refused):
    t, _ = prepared()
    make = Suspend if how == "suspend" else CloseTable
    refused(t, make(by=CROUPIER, reason="fault", authorised_by="d1"), "not_allowed")
    err = refused(t, make(by=CHEF, reason="fault"), "missing_authorisation")
    assert "Art. 15" in err.message
    refused(t, make(by=CHEF, reason="fault", authorised_by="  "), "missing_authorisation")
    held = len(t.state.bets)
    events = t.handle(make(by=CHEF, reason="fault", authorised_by="d1"))
    assert len([e for e in events if isinstance(e, WagerVoided)]) == held == 4
    ev = E.TableSuspended if how == "suspend" else E.TableClosed
    assert events[-1] == ev(2, "fault", "h1", "d1")


@pytest.mark.parametrize("how", ["suspend", "close"])
def test_the_director_suspends_or_closes_on_his_own_authority(how):
    t, _ = prepared()
    if how == "suspend":
        assert t.handle(Suspend(by=DIRECTOR))[-1] == E.TableSuspended(2, "", "d1", "d1")
    else:
        assert t.handle(CloseTable(by=DIRECTOR, reason="end"))[-1] == E.TableClosed(2, "end", "d1", "d1")


def test_events_stored_before_the_authorisation_still_decode():
    old = (
        b'[{"type":"table_suspended","spin":3,"reason":"x","by":"h1"},'
        b'{"type":"table_closed","spin":3,"reason":"","by":"h1"}]'
    )
    assert msgspec.json.decode(old, type=list[E.Event]) == [
        E.TableSuspended(3, "x", "h1", ""), E.TableClosed(3, "", "h1", "")
    ]


def test_only_the_director_resumes_a_suspended_table(refused):
    """Art. 15: the Direzione suspends the game; a croupier or chef may not lift it."""
    t = RouletteTable("t1")
    t.handle(OpenSpin(by=CROUPIER))
    t.handle(Suspend(by=DIRECTOR, reason="inspection"))
    refused(t, OpenSpin(by=CROUPIER), "not_allowed")
    refused(t, OpenSpin(by=CHEF), "not_allowed")
    assert [type(e).__name__ for e in t.handle(OpenSpin(by=DIRECTOR))] == ["SpinOpened"]
