"""Who may move whose chips (issue 12, items 1, 9 and 22): only a player stakes his own
money; staff enter chips only for floor players at a live table; an RNG table takes no
late bets; suspending or closing is for the Direzione Giochi (Art. 15)."""

from __future__ import annotations

import msgspec
import pytest

from games.commands import Actor
from games.wagers import ChipsUnclaimed, WagerPlaced, WagerSettled, WagerVoided
from helpers.actors import ANN, BOB, CHEF, CROUPIER, DIRECTOR
from roulette import events as E
from roulette.commands import (
    ChoosePartage,
    CloseTable,
    LaunchBall,
    MarkUnclaimed,
    MovePrisoner,
    NoMoreBets,
    OpenSpin,
    PlaceAnnounced,
    PlaceBet,
    Result,
    SameAgain,
    SetPartagePreference,
    Suspend,
    WithdrawBet,
)  # fmt: skip
from roulette.engine import RouletteTable
from roulette.limits import default_settings

STAFF = {"croupier": CROUPIER, "chef": CHEF, "director": DIRECTOR}
FLOOR_BOB = "floor:bob"


def _wager(events, spot: str) -> str:
    return next(e.wager for e in events if isinstance(e, WagerPlaced) and e.spot == spot)


def prepared() -> tuple[RouletteTable, dict[str, dict[str, str]]]:
    """Spin 2 open at a live table. The online player bob (by his own commands) and the
    floor player floor:bob (entered by the croupier) each have: rouge CHF 10 en prison
    from spin 1's zero, spin 1's bets to restate, and douzaine 1 CHF 10 on the layout."""
    t = RouletteTable("t1")
    t.handle(OpenSpin(), CROUPIER)
    for by, player in ((BOB, "bob"), (CROUPIER, FLOOR_BOB)):
        t.handle(PlaceBet(player=player, spot="rouge", amount=1000), by)
        t.handle(PlaceBet(player=player, spot="plein 17", amount=500), by)
    t.handle(LaunchBall(), CROUPIER)
    t.handle(NoMoreBets(), CROUPIER)
    t.handle(Result(number=0), CROUPIER)
    t.handle(OpenSpin(), CROUPIER)
    wagers = {}
    for by, player in ((BOB, "bob"), (CROUPIER, FLOOR_BOB)):
        prisoner = next(b.wager for b in t.state.bets if b.player == player and b.prison)
        douzaine = _wager(t.handle(PlaceBet(player=player, spot="douzaine 1", amount=1000), by), "douzaine 1")
        wagers[player] = {"prisoner": prisoner, "douzaine": douzaine}
    return t, wagers


# Every command that places, restates, withdraws, splits, moves, sets a preference for or
# records a player's chips, made by ``by`` for ``player``: (command, actor) pairs.
MONEY_COMMANDS = {
    "PlaceBet": lambda by, p, w: (PlaceBet(player=p, spot="plein 5", amount=500), by),
    "PlaceAnnounced": lambda by, p, w: (PlaceAnnounced(player=p, announce="tiers", unit=500), by),
    "SameAgain": lambda by, p, w: (SameAgain(player=p), by),
    "WithdrawBet": lambda by, p, w: (WithdrawBet(wager=w[p]["douzaine"]), by),
    "ChoosePartage": lambda by, p, w: (ChoosePartage(wager=w[p]["prisoner"]), by),
    "MovePrisoner": lambda by, p, w: (MovePrisoner(wager=w[p]["prisoner"], to="noir"), by),
    "SetPartagePreference": lambda by, p, w: (SetPartagePreference(player=p, partage=True), by),
    "MarkUnclaimed": lambda by, p, w: (MarkUnclaimed(player=p), by),
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
        refused(t, *cmd, code)
        return
    events = t.handle(*cmd)
    assert events
    # whatever moved, moved the named player's chips only
    assert {e.player for e in events if isinstance(e, (WagerPlaced, WagerSettled, WagerVoided))} <= {player}


def test_a_croupier_can_no_longer_stake_an_online_wallet(refused):
    # The audit's request: as croupier, place_bet plein 17 CHF 5 for bob.
    t, _ = prepared()
    err = refused(t, PlaceBet(player="bob", spot="plein 17", amount=500), CROUPIER, "floor_only")
    assert err.details == {"player": "bob"}
    refused(t, PlaceAnnounced(player="bob", announce="voisins du zéro", unit=500), CROUPIER, "floor_only")
    # malformed floor ids are not floor players either
    refused(t, PlaceBet(player="floor:", spot="plein 17", amount=500), CROUPIER, "floor_only")
    refused(t, PlaceBet(player="floor:Blue", spot="plein 17", amount=500), CROUPIER, "floor_only")


def test_staff_enter_a_floor_players_chips_and_he_is_paid_on_the_felt():
    t = RouletteTable("t1")
    t.handle(OpenSpin(), CROUPIER)
    (placed,) = t.handle(PlaceBet(player="floor:blue", spot="plein 17", amount=500), CROUPIER)
    assert placed == WagerPlaced(placed.wager, "floor:blue", 500, "plein 17")
    t.handle(LaunchBall(), CROUPIER)
    t.handle(NoMoreBets(), CROUPIER)
    events = t.handle(Result(number=17), CROUPIER)
    assert WagerSettled(placed.wager, "floor:blue", 500, 500, 35 * 500, "won") in events
    assert t.handle(MarkUnclaimed(player="floor:blue"), CHEF) == [
        ChipsUnclaimed("floor:blue", 1, "wins", 500 + 35 * 500, [], "h1")
    ]


def rng_table() -> RouletteTable:
    t = RouletteTable("rng-1", default_settings(live=False))
    t.handle(OpenSpin(), Actor("system:rng-1", "system"))  # the server's clock
    return t


@pytest.mark.parametrize("role", STAFF)
def test_no_staff_chips_at_an_rng_table(role, refused):
    t = rng_table()
    by = STAFF[role]
    t.handle(PlaceBet(player="ann", spot="rouge", amount=1000), ANN)  # players play for themselves
    refused(t, PlaceBet(player="floor:blue", spot="rouge", amount=1000), by, "rng_table")
    refused(t, PlaceAnnounced(player="floor:blue", announce="tiers", unit=500), by, "rng_table")
    refused(t, SameAgain(player="floor:blue"), by, "rng_table")
    refused(t, SetPartagePreference(player="floor:blue", partage=True), by, "rng_table")
    # and never for an online player's wallet
    refused(t, PlaceBet(player="ann", spot="rouge", amount=1000), by, "floor_only")
    refused(t, WithdrawBet(wager=t.state.bets[0].wager), by, "floor_only")
    if role != "croupier":
        refused(t, MarkUnclaimed(player="floor:blue"), by, "rng_table")
        refused(t, MarkUnclaimed(player="ann"), by, "floor_only")


@pytest.mark.parametrize(
    "make",
    [lambda: (PlaceBet(player="ann", spot="rouge", amount=1000), ANN),
     lambda: (PlaceAnnounced(player="ann", announce="orphelins", unit=500), ANN),
     lambda: (SameAgain(player="bob"), BOB)],
    ids=["PlaceBet", "PlaceAnnounced", "SameAgain"],
)  # fmt: skip
def test_an_rng_table_refuses_a_late_bet_at_once(make, refused):
    # Art. 9's late bets need a chef de table to accept them: an RNG table has none.
    t = RouletteTable("rng-1", default_settings(live=False))
    system = Actor("system:rng-1", "system")  # the server's clock
    t.handle(OpenSpin(), system)
    t.handle(PlaceBet(player="bob", spot="noir", amount=1000), BOB)
    for c in (LaunchBall(), NoMoreBets(), Result(number=2), OpenSpin()):
        t.handle(c, system)
    t.handle(LaunchBall(), system)
    err = refused(t, *make(), "no_more_bets")
    assert "Art. 9" in err.message
    assert t.state.late == []


def test_a_live_table_still_queues_late_bets_for_the_chef():
    t = RouletteTable("t1")
    t.handle(OpenSpin(), CROUPIER)
    t.handle(LaunchBall(), CROUPIER)
    (pending,) = t.handle(PlaceBet(player="ann", spot="rouge", amount=1000), ANN)
    assert isinstance(pending, E.LateBetPending) and pending.entered_by == "ann"
    (floor,) = t.handle(PlaceBet(player="floor:blue", spot="noir", amount=1000), CROUPIER)
    assert isinstance(floor, E.LateBetPending) and (floor.player, floor.entered_by) == ("floor:blue", "c1")


# ---------------------------------------------------------------- Art. 15


@pytest.mark.parametrize("how", ["suspend", "close"])
def test_a_chef_alone_may_not_suspend_or_close(how, refused):
    t, _ = prepared()
    make = Suspend if how == "suspend" else CloseTable
    refused(t, make(reason="fault", authorised_by="d1"), CROUPIER, "not_allowed")
    err = refused(t, make(reason="fault"), CHEF, "missing_authorisation")
    assert "Art. 15" in err.message
    refused(t, make(reason="fault", authorised_by="  "), CHEF, "missing_authorisation")
    held = len(t.state.bets)
    events = t.handle(make(reason="fault", authorised_by="d1"), CHEF)
    assert len([e for e in events if isinstance(e, WagerVoided)]) == held == 4
    ev = E.TableSuspended if how == "suspend" else E.TableClosed
    assert events[-1] == ev(2, "fault", "h1", "d1")


@pytest.mark.parametrize("how", ["suspend", "close"])
def test_the_director_suspends_or_closes_on_his_own_authority(how):
    t, _ = prepared()
    if how == "suspend":
        assert t.handle(Suspend(), DIRECTOR)[-1] == E.TableSuspended(2, "", "d1", "d1")
    else:
        assert t.handle(CloseTable(reason="end"), DIRECTOR)[-1] == E.TableClosed(2, "end", "d1", "d1")


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
    t.handle(OpenSpin(), CROUPIER)
    t.handle(Suspend(reason="inspection"), DIRECTOR)
    refused(t, OpenSpin(), CROUPIER, "not_allowed")
    refused(t, OpenSpin(), CHEF, "not_allowed")
    assert [type(e).__name__ for e in t.handle(OpenSpin(), DIRECTOR)] == ["SpinOpened"]
