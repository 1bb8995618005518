"""The spin lifecycle (Art. 9-15), late bets, void spins, la dernière, suspension,
same again (Art. 18), the unclaimed register (Art. 19), replay and the state contract."""

from __future__ import annotations

import msgspec
import pytest

from games.commands import Actor
from games.wagers import ChipsUnclaimed, WagerPlaced, WagerSettled, WagerVoided
from helpers.actors import ANN, BOB, CHEF, CROUPIER, DIRECTOR, FLOOR_ANN, FLOOR_BOB
from roulette import events as E
from roulette.commands import (
    AcceptLate,
    ChangeSettings,
    CloseTable,
    LastSpin,
    LaunchBall,
    MarkUnclaimed,
    NoMoreBets,
    OpenSpin,
    PlaceAnnounced,
    PlaceBet,
    RaiseLimit,
    RefuseLate,
    Result,
    SameAgain,
    Suspend,
    VoidSpin,
    WithdrawBet,
)  # fmt: skip
from roulette.engine import RouletteTable
from roulette.limits import default_settings
from roulette.settlement import settle
from roulette.state import RouletteState

# Floor players (cash chips on a live felt): only staff enter their chips, so these
# actors only ever name the player (``bet(FLOOR_ANN, by=CROUPIER)``).
# A command travels with the actor who gives it: ``t.handle(*OPEN)``, ``t.handle(*bet())``.

OPEN = (OpenSpin(), CROUPIER)
LAUNCH = (LaunchBall(), CROUPIER)
RNVP = (NoMoreBets(), CROUPIER)


def bet(who=ANN, spot="plein 17", amount=1000, by=None):
    """Ann's (or ``who``'s) plein 17 CHF 10, and who gives it: ``who`` himself, or ``by``."""
    return (PlaceBet(player=who.id, spot=spot, amount=amount), by or who)


def at(phase: str) -> RouletteTable:
    """A table in ``phase`` holding one bet of Ann's (where bets can be held)."""
    t = RouletteTable("t1")
    if phase == "closed":
        return t
    t.handle(*OPEN)
    t.handle(*bet())
    steps = {
        "open": [], "launched": [LAUNCH], "no_more_bets": [LAUNCH, RNVP],
        "settled": [LAUNCH, RNVP, (Result(number=3), CROUPIER)],
        "suspended": [(Suspend(reason="wheel fault", authorised_by="d1"), CHEF)],
    }[phase]  # fmt: skip
    for c in steps:
        t.handle(*c)
    assert t.state.phase == phase
    return t


def test_full_cycle_closed_to_open_again():
    t = RouletteTable("t1")
    assert t.state.phase == "closed"
    assert t.handle(*OPEN) == [E.SpinOpened(1, t.state.settings, [])]
    (placed,) = t.handle(*bet(amount=1000))
    assert t.handle(*LAUNCH) == [E.BallLaunched(1)]
    assert t.handle(*RNVP) == [E.BetsClosed(1)]
    events = t.handle(Result(number=17, source="wheel_reader", turns=9, ball_direction="opposite"), CROUPIER)
    assert events[0] == E.SpinResult(1, 17, "black", "wheel_reader", [t_bet(placed)], "lose", [])
    assert events[1:] == [
        WagerSettled(placed.wager, "ann", 1000, 1000, 35000, "won"),
        E.SpinSettled(1, 17, 1000, 1000, 35000),
    ]
    assert t.state.phase == "settled" and t.state.last_numbers == [17] and t.state.bets == []
    assert t.handle(*OPEN)[0].spin == 2 and t.state.phase == "open"


def t_bet(placed: WagerPlaced):
    from roulette.state import Bet

    return Bet(placed.wager, placed.player, placed.spot, placed.amount, 1, 0, placed.player)


ILLEGAL = {
    # phase: [(command, code)]
    "closed": [(LAUNCH, "wrong_phase"), (RNVP, "wrong_phase"), (bet(), "table_closed"),
               ((Result(number=1), CROUPIER), "wrong_phase"), ((VoidSpin(reason="x"), CHEF), "wrong_phase"),
               ((LastSpin(), CROUPIER), "table_closed"), ((Suspend(authorised_by="d1"), CHEF), "wrong_phase"),
               ((CloseTable(authorised_by="d1"), CHEF), "table_closed")],
    "open": [(OPEN, "wrong_phase"), (RNVP, "wrong_phase"), ((Result(number=1), CROUPIER), "wrong_phase"),
             ((VoidSpin(reason="x"), CHEF), "wrong_phase"), ((AcceptLate(late="x"), CHEF), "wrong_phase")],
    "launched": [(OPEN, "wrong_phase"), (LAUNCH, "wrong_phase"), ((Result(number=1), CROUPIER), "wrong_phase"),
                 ((AcceptLate(late="nope"), CHEF), "unknown_late_bet"),
                 ((RefuseLate(late="nope"), CHEF), "unknown_late_bet")],
    "no_more_bets": [(OPEN, "wrong_phase"), (LAUNCH, "wrong_phase"), (RNVP, "wrong_phase"),
                     (bet(BOB), "wrong_phase"),
                     ((PlaceAnnounced(player="bob", announce="tiers", unit=500), BOB), "wrong_phase"),
                     ((SameAgain(player="ann"), ANN), "no_previous_bets"),
                     ((AcceptLate(late="x"), CHEF), "wrong_phase"),
                     ((Result(number=37), CROUPIER), "number_out_of_range"),
                     ((Result(number=-1), CROUPIER), "number_out_of_range"),
                     ((Result(number=1.0), CROUPIER), "number_out_of_range"),
                     ((Result(number=1, turns=-1), CROUPIER), "invalid_wheel_data"),
                     ((VoidSpin(reason=""), CHEF), "missing_reason"),
                     ((VoidSpin(reason="x"), CROUPIER), "not_allowed")],
    "settled": [(LAUNCH, "wrong_phase"), (RNVP, "wrong_phase"), (bet(BOB), "wrong_phase"),
                ((Result(number=1), CROUPIER), "wrong_phase"), ((VoidSpin(reason="x"), CHEF), "wrong_phase")],
    "suspended": [(bet(BOB), "table_suspended"), (LAUNCH, "wrong_phase"),
                  ((Suspend(authorised_by="d1"), CHEF), "wrong_phase"), ((LastSpin(), CROUPIER), "table_closed")],
}  # fmt: skip


@pytest.mark.parametrize(
    "phase, command, code",
    [(p, c, code) for p, cases in ILLEGAL.items() for c, code in cases],
    ids=lambda x: x if isinstance(x, str) else type(x[0]).__name__,
)
def test_illegal_transitions_change_nothing(phase, command, code, refused):
    refused(at(phase), *command, code)


@pytest.mark.parametrize(
    "command",
    [(OpenSpin(), ANN), (LaunchBall(), ANN), (Suspend(), CROUPIER), (CloseTable(), CROUPIER),
     (ChangeSettings(settings=RouletteTable().state.settings), CHEF),
     (RaiseLimit(kind="plein", maximum=100000, control_officer="x"), CHEF),
     (MarkUnclaimed(player="ann"), CROUPIER), bet(BOB, by=ANN)],
    ids=lambda c: type(c[0]).__name__,
)  # fmt: skip
def test_roles(command, refused):
    t = RouletteTable("t1")
    if not isinstance(command[0], OpenSpin):
        t.handle(*OPEN)
    refused(t, *command, "not_allowed")


def test_commands_need_an_actor_and_a_known_command(refused):
    t = at("open")
    refused(t, PlaceBet(player="x", spot="rouge", amount=500), Actor("x", "janitor"), "not_allowed")
    refused(t, "spin!", ANN, "unknown_command")


def test_withdraw_only_before_the_launch(refused):
    t = at("open")
    w = t.state.bets[0].wager
    refused(t, WithdrawBet(wager=w), BOB, "not_allowed")
    refused(t, WithdrawBet(wager="s1-w999"), ANN, "unknown_wager")
    t.handle(*LAUNCH)
    refused(t, WithdrawBet(wager=w), ANN, "wrong_phase")
    t.handle(*RNVP)
    refused(t, WithdrawBet(wager=w), ANN, "wrong_phase")


def test_withdrawing_a_piece_withdraws_its_announcement():
    t = at("open")
    placed = t.handle(PlaceAnnounced(player="bob", announce="tiers", unit=500), BOB)
    assert isinstance(placed[0], E.AnnouncedBetPlaced) and len(placed[0].pieces) == 6
    pieces = [e.wager for e in placed if isinstance(e, WagerPlaced)]
    voided = t.handle(WithdrawBet(wager=pieces[2]), BOB)
    assert [e.wager for e in voided] == pieces and all(e.reason == "withdrawn" for e in voided)
    assert [b.player for b in t.state.bets] == ["ann"] and "bob" not in t.state.placed or not t.state.placed["bob"]


def test_late_bets_wait_for_the_chef(refused):
    t = at("launched")
    (pending,) = t.handle(*bet(BOB, "rouge", 2000))
    assert isinstance(pending, E.LateBetPending) and t.state.late
    assert [b.player for b in t.state.bets] == ["ann"]  # not on the layout yet
    refused(t, AcceptLate(late=pending.late), CROUPIER, "not_allowed")
    (pending2,) = t.handle(PlaceAnnounced(player="bob", announce="orphelins", unit=500), BOB)
    accepted = t.handle(AcceptLate(late=pending.late), CHEF)
    assert accepted[0] == E.LateBetAccepted(pending.late, "bob", "h1")
    assert isinstance(accepted[1], WagerPlaced) and accepted[1].spot == "rouge"
    assert t.handle(RefuseLate(late=pending2.late, reason="too late"), CHEF) == [
        E.LateBetRefused(pending2.late, "bob", "too late", "h1")
    ]
    refused(t, AcceptLate(late=pending2.late), CHEF, "unknown_late_bet")
    # a late bet is validated when made, too
    refused(t, *bet(BOB, "plein 40", 500), "number_out_of_range")


def test_rien_ne_va_plus_refuses_undecided_late_bets():
    t = at("launched")
    (pending,) = t.handle(*bet(BOB, "rouge", 2000))
    events = t.handle(*RNVP)
    assert events == [E.BetsClosed(1), E.LateBetRefused(pending.late, "bob", "rien ne va plus before the chef decided")]
    assert t.state.late == []


@pytest.mark.parametrize(
    "result",
    [(Result(number=17, turns=2), CROUPIER), (Result(number=17, ball_direction="same"), CROUPIER),
     (Result(number=17, turns=0, source="wheel_reader"), CROUPIER)],
)  # fmt: skip
def test_wheel_reader_data_voids_the_spin(result):
    t = at("no_more_bets")
    bets_before = list(t.state.bets)
    (voided,) = t.handle(*result)
    assert isinstance(voided, E.SpinVoided) and "Art. 10" in voided.reason
    assert t.state.phase == "open" and t.state.bets == bets_before and t.state.last_numbers == []
    t.handle(*LAUNCH)
    t.handle(*RNVP)
    assert any(isinstance(e, WagerSettled) for e in t.handle(Result(number=17, turns=3), CROUPIER))


@pytest.mark.parametrize("phase", ["launched", "no_more_bets"])
def test_rien_va_returns_to_before_the_launch(phase):
    t = at(phase)
    if phase == "launched":
        t.handle(*bet(BOB, "rouge", 2000))
    before = list(t.state.bets)
    events = t.handle(VoidSpin(reason="a chip fell in the wheel"), CHEF)
    assert events[0] == E.SpinVoided(1, "a chip fell in the wheel")
    assert t.state.phase == "open" and t.state.bets == before and t.state.late == []
    assert t.state.spin == 1


@pytest.mark.parametrize("policy, carried_back", [("lose", 0), ("stay", 1501)])
def test_la_derniere_zero_splits_what_would_go_en_prison_then_closes(policy, carried_back):
    # No later spin can free a prisoner, so the last spin's zero is a partage for every
    # simple chance: returning them whole would make that spin free of house edge.
    t = RouletteTable("t1", default_settings(prison_on_zero=policy))
    t.handle(*OPEN)
    t.handle(*bet(ANN, "pair", 3001))
    t.handle(*LAUNCH), t.handle(*RNVP), t.handle(Result(number=0), CROUPIER)
    (carried,) = t.state.bets  # Ann's pair, en prison since spin 1
    t.handle(*OPEN)
    t.handle(*bet(ANN, "plein 17", 1000))
    t.handle(*bet(BOB, "rouge", 2000))
    assert t.handle(LastSpin(), CROUPIER) == [E.LastSpinAnnounced(2)]
    t.handle(*LAUNCH)
    t.handle(*RNVP)
    events = t.handle(Result(number=0), CROUPIER)
    assert events[0].last_spin is True
    settled = {e.wager: e for e in events if isinstance(e, WagerSettled)}
    rouge = next(b.wager for b in events[0].bets if b.spot == "rouge")
    assert settled[rouge] == WagerSettled(rouge, "bob", 2000, 1000, 0, "partage")
    carried_how = "prison_lost" if policy == "lose" else "partage"
    assert settled[carried.wager] == WagerSettled(carried.wager, "ann", 3001, carried_back, 0, carried_how)
    assert not any(isinstance(e, (E.WagerImprisoned, E.PrisonerStays, WagerVoided)) for e in events)
    assert events[-2] == E.SpinSettled(2, 0, 6001, 1000 + carried_back, 0)
    assert events[-1] == E.TableClosed(2, "la dernière", "c1")
    assert t.state.phase == "closed" and t.state.bets == [] and t.state.derniere_spin == 0


@pytest.mark.parametrize("phase", ["launched", "no_more_bets", "settled"])
def test_la_derniere_announced_once_bets_are_closed_is_the_next_spin(phase, refused):
    # Art. 14: players hear it before they bet on the last spin
    t = at(phase)
    assert t.handle(LastSpin(), CROUPIER) == [E.LastSpinAnnounced(2)]
    assert t.view().derniere and t.view().derniere_spin == 2
    refused(t, LastSpin(), CROUPIER, "already_announced")
    if phase != "settled":
        if phase == "launched":
            t.handle(*RNVP)
        events = t.handle(Result(number=4), CROUPIER)
        assert events[0].last_spin is False and t.state.phase == "settled"
    t.handle(*OPEN)
    t.handle(*LAUNCH)
    t.handle(*RNVP)
    events = t.handle(Result(number=4), CROUPIER)
    assert events[0].last_spin is True and events[-1] == E.TableClosed(2, "la dernière", "c1")


@pytest.mark.parametrize("phase", ["open", "launched", "no_more_bets", "settled"])
@pytest.mark.parametrize("how", ["suspend", "close"])
def test_suspend_or_close_returns_every_open_bet(phase, how):
    t = at(phase)
    if phase == "launched":
        t.handle(*bet(BOB, "rouge", 2000))  # a pending late bet is refused
    if how == "suspend":
        cmd = (Suspend(reason="fault", authorised_by="d1"), CHEF)  # Art. 15: on the director's authorisation
    else:
        cmd = (CloseTable(reason="end"), DIRECTOR)
    events = t.handle(*cmd)
    held = [] if phase == "settled" else [(b.wager, b.amount) for b in [t_bet_any(t, events)]]
    assert [(e.wager, e.amount) for e in events if isinstance(e, WagerVoided)] == held
    assert t.state.phase == ("suspended" if how == "suspend" else "closed")
    assert t.state.bets == [] and t.state.late == []
    t.handle(*(OPEN if how == "close" else (OpenSpin(), DIRECTOR)))  # the Direzione lifts a suspension
    assert t.state.spin == 2 and t.state.phase == "open"


def t_bet_any(t, events):
    (e,) = [e for e in events if isinstance(e, WagerVoided)]
    return e


def test_same_again_restates_last_spins_bets_against_todays_limits(refused):
    t = at("open")  # ann: plein 17 CHF 10
    t.handle(PlaceAnnounced(player="ann", announce="voisins", unit=500), ANN)
    t.handle(*bet(ANN, "rouge", 3000))
    w = t.state.bets[-1].wager
    t.handle(WithdrawBet(wager=w), ANN)  # withdrawn: not part of the spin
    t.handle(*LAUNCH)
    t.handle(*RNVP)
    t.handle(Result(number=26), CROUPIER)
    refused(t, SameAgain(player="ann"), ANN, "wrong_phase")
    t.handle(*OPEN)
    refused(t, SameAgain(player="bob"), BOB, "no_previous_bets")
    events = t.handle(SameAgain(player="ann"), ANN)
    assert isinstance(events[0], E.BetsRestated)
    assert [(s.spot, s.amount, s.announced) for s in events[0].stakes] == [
        ("plein 17", 1000, False), ("voisins du zéro", 500, True)
    ]
    assert sorted(b.spot for b in t.state.bets) == sorted(
        ["plein 17", "transversale 0-2-3", "cheval 4/7", "cheval 12/15", "cheval 18/21",
         "cheval 19/22", "cheval 32/35", "carré 25-26-28-29"]
    )  # fmt: skip
    # tomorrow's minimum is higher: the restated voisins unit no longer qualifies
    t.handle(ChangeSettings(settings=msgspec.structs.replace(t.state.settings, minimum=800)), DIRECTOR)
    t.handle(*LAUNCH)
    t.handle(*RNVP)
    t.handle(Result(number=26), CROUPIER)
    t.handle(*OPEN)
    refused(t, SameAgain(player="ann"), ANN, "below_minimum")


def floor_at_open() -> RouletteTable:
    """An open table where the croupier entered plein 17, CHF 10 for the floor player
    ``floor:ann`` (Art. 19 concerns chips on a live felt: floor players)."""
    t = RouletteTable("t1")
    t.handle(*OPEN)
    t.handle(*bet(FLOOR_ANN, by=CROUPIER))
    return t


def test_unclaimed_wins_and_abandoned_bets(refused):
    t = floor_at_open()
    t.handle(*bet(FLOOR_BOB, "rouge", 2000, by=CROUPIER))
    t.handle(*LAUNCH)
    t.handle(*RNVP)
    t.handle(Result(number=17), CROUPIER)  # floor:ann wins 35x on plein 17; floor:bob loses
    refused(t, MarkUnclaimed(player="floor:bob"), CHEF, "nothing_unclaimed")
    assert t.handle(MarkUnclaimed(player="floor:ann"), CHEF) == [
        ChipsUnclaimed("floor:ann", 1, "wins", 36000, [], "h1")
    ]
    refused(t, MarkUnclaimed(player="floor:ann"), CHEF, "nothing_unclaimed")
    t.handle(*OPEN)
    t.handle(SameAgain(player="floor:ann"), CROUPIER)
    w = t.state.bets[0].wager
    events = t.handle(MarkUnclaimed(player="floor:ann"), CHEF)
    assert events == [
        WagerVoided(w, "floor:ann", 1000, "abandoned"), ChipsUnclaimed("floor:ann", 2, "bets", 1000, [w], "h1")
    ]
    assert t.state.bets == []
    t.handle(*LAUNCH)
    refused(t, MarkUnclaimed(player="floor:ann"), CHEF, "wrong_phase")


def test_wins_of_la_derniere_can_still_be_recorded_unclaimed(refused):
    t = floor_at_open()  # floor:ann: plein 17, CHF 10
    t.handle(LastSpin(), CROUPIER)
    t.handle(*LAUNCH), t.handle(*RNVP), t.handle(Result(number=17), CROUPIER)
    assert t.state.phase == "closed"
    assert t.handle(MarkUnclaimed(player="floor:ann"), CHEF) == [
        ChipsUnclaimed("floor:ann", 1, "wins", 1000 + 35 * 1000, [], "h1")
    ]
    refused(t, MarkUnclaimed(player="floor:ann"), CHEF, "nothing_unclaimed")
    t.handle(*OPEN)  # the next session: last spin's wins are no longer the table's to record
    refused(t, MarkUnclaimed(player="floor:ann"), CHEF, "nothing_unclaimed")


def test_state_round_trips_and_events_replay_the_spin():
    t = at("open")
    t.handle(PlaceAnnounced(player="bob", announce="finale 1/2", unit=500), BOB)
    t.handle(*bet(BOB, "noir", 1500))
    t.handle(*LAUNCH)
    t.handle(*RNVP)
    events = t.handle(Result(number=22), CROUPIER)
    wire = msgspec.json.encode(events)
    decoded = msgspec.json.decode(wire, type=list[E.Event])
    assert decoded == events
    result = decoded[0]
    # the SpinResult alone re-settles to the very same WagerSettled events
    replayed = [
        WagerSettled(b.wager, b.player, b.amount, ret, won, res)
        for b, res, ret, won in settle(
            result.bets, result.number, result.prison_on_zero, result.partage_players, result.last_spin
        )
    ]
    assert replayed == [e for e in decoded if isinstance(e, WagerSettled)]
    copy = RouletteTable.from_state(msgspec.json.decode(msgspec.json.encode(t.state), type=RouletteState))
    assert copy.state == t.state
    copy.handle(*OPEN)
    copy.handle(SameAgain(player="bob"), BOB)
    assert len(copy.state.bets) == 6


def test_view_shows_every_bet_and_the_viewers_own():
    t = at("open")
    t.handle(*bet(BOB, "rouge", 2000))
    v = t.view("bob")
    assert v.phase == "open" and len(v.bets) == 2 and v.viewer_staked == 2000
    assert t.view(None).viewer_staked == 0
    msgspec.json.encode(v)


def test_commands_decode_from_the_wire():
    from roulette.commands import Command

    wire = b'{"type":"place_bet","player":"ann","spot":"cheval 0/3","amount":500}'
    cmd = msgspec.json.decode(wire, type=Command)
    assert cmd == PlaceBet(player="ann", spot="cheval 0/3", amount=500)
    with pytest.raises(msgspec.ValidationError):
        msgspec.json.decode(wire.replace(b"500", b"5.5"), type=Command)
    # who gives it is never on the wire (the server takes him from the token)
    with pytest.raises(msgspec.ValidationError, match="unknown field `by`"):
        msgspec.json.decode(wire.replace(b'"player"', b'"by":{"id":"ann"},"player"'), type=Command)
