"""Registration, check-in, the start, the Sit&Go, cancellation: the money events and every
refusal (each leaves the state unchanged to the byte)."""

from __future__ import annotations

import msgspec
import pytest

from blackjack.commands import TournamentEnd
from blackjack.tournament import commands as C
from blackjack.tournament import events as E
from blackjack.tournament.coordinator import Coordinator
from blackjack.tournament.spec import sit_and_go
from blackjack.tournament.state import TournamentState
from games.commands import Actor
from games.errors import GameError

ANN, BOB = Actor("ann"), Actor("bob")


def test_a_new_tournament_is_scheduled(kit):
    cup = kit.Cup()
    assert cup.s.status == "scheduled" and not cup.s.paused
    with pytest.raises(GameError) as info:
        Coordinator("x" * 101, kit.spec())
    assert info.value.code == "invalid_tournament"
    with pytest.raises(GameError) as info:
        Coordinator("cup", kit.spec(prizes=[50, 30]))
    assert info.value.code == "invalid_tournament"


def test_registration_flow_and_its_money(kit):
    cup = kit.Cup(buy_in=50_000)
    assert cup.do(C.OpenRegistration()) == [E.RegistrationOpened(by="dir")]
    assert cup.do(C.Register(), ANN) == [
        E.Registered(player="ann", ticket=1, source="wallet", reference="", by="ann"),
        E.EntryPaid(player="ann", buy_in=50_000, fee=5_000, source="wallet", reference=""),
    ]
    assert cup.do(C.Register(player="bob", source="cashier"), kit.CASHIER)[1] == E.EntryPaid(
        player="bob", buy_in=50_000, fee=5_000, source="cashier", reference="")
    # Art. 23: paid ahead by bank transfer, the ticket collected at the desk on the day.
    ev = cup.do(C.Register(player="cy", source="bank_transfer", reference="TRN-0042"), kit.CASHIER)
    assert ev[0] == E.Registered(player="cy", ticket=3, source="bank_transfer", reference="TRN-0042", by="desk")
    assert cup.do(C.CheckIn(), ANN) == [E.CheckedIn(player="ann", by="ann")]
    assert cup.do(C.CheckIn(player="bob"), kit.CROUPIER) == [E.CheckedIn(player="bob", by="cr")]
    assert cup.do(C.CloseRegistration(reason="deadline"), kit.SYSTEM) == [
        E.RegistrationClosed(by="server", reason="deadline")]
    # Closed, not started: he may still hand in his ticket.
    assert cup.do(C.CheckIn(player="cy"), kit.CASHIER) == [E.CheckedIn(player="cy", by="desk")]
    view = cup.c.view("ann")
    assert [(e.player, e.ticket, e.checked_in) for e in view.entrants] == [("ann", 1, True), ("bob", 2, True),
                                                                           ("cy", 3, True)]
    assert view.pool == 150_000 and view.status == "closed" and view.me is None


def test_registration_refusals(kit):
    cup = kit.Cup(max_entrants=3)
    cup.refused(C.Register(), ANN, "not_open")
    cup.refused(C.OpenRegistration(), ANN, "forbidden")
    cup.refused(C.OpenRegistration(), kit.SYSTEM, "forbidden")
    cup.refused(C.CloseRegistration(), kit.DIRECTOR, "not_open")
    cup.do(C.OpenRegistration())
    cup.refused(C.OpenRegistration(), kit.DIRECTOR, "registration_open")
    cup.refused(C.Register(player="bob"), ANN, "players_only")
    cup.refused(C.Register(source="cashier"), ANN, "source_not_allowed")
    cup.refused(C.Register(player="bob"), kit.CASHIER, "source_not_allowed")  # not the player's wallet
    cup.refused(C.Register(source="cashier"), kit.CASHIER, "player_missing")
    cup.refused(C.Register(player="bob", source="bank_transfer"), kit.CASHIER, "reference_missing")
    cup.refused(C.Register(player="bob", source="cashier"), kit.DIRECTOR, "forbidden")
    cup.refused(C.Register(player="bob", source="cashier"), kit.CROUPIER, "forbidden")
    cup.refused(C.Register(), Actor("floor:blue"), "floor_id_reserved")
    cup.refused(C.Register(player="x\n"), ANN, "invalid_command")
    cup.do(C.Register(), ANN)
    cup.refused(C.Register(), ANN, "already_registered")
    cup.refused(C.Register(player="ann", source="cashier"), kit.CASHIER, "already_registered")
    cup.do(C.Register(), BOB)
    # Art. 23: the maximum closes registration by itself.
    assert cup.do(C.Register(), Actor("cy"))[-1] == E.RegistrationClosed(by="cy", reason="full")
    cup.refused(C.Register(), Actor("dee"), "registration_closed")
    cup.refused(C.CloseRegistration(), kit.DIRECTOR, "registration_closed")


def test_check_in_refusals(kit):
    cup = kit.Cup()
    cup.refused(C.CheckIn(), ANN, "not_open")
    cup.enter(["ann", "bob"], check_in=False)
    cup.refused(C.CheckIn(), Actor("zed"), "not_registered")
    cup.refused(C.CheckIn(player="bob"), ANN, "players_only")
    cup.refused(C.CheckIn(), kit.CROUPIER, "player_missing")
    cup.refused(C.CheckIn(player="ann"), Actor("h1", "chef"), "forbidden")
    cup.refused(C.CheckIn(player="ann"), kit.SYSTEM, "forbidden")
    cup.do(C.CheckIn(player="ann"), kit.DIRECTOR)
    cup.refused(C.CheckIn(), ANN, "already_checked_in")
    cup.do(C.CheckIn(), BOB)
    cup.do(C.Start(draw="01"))
    cup.refused(C.CheckIn(), Actor("cy"), "tournament_started")


def test_start_refusals(kit):
    cup = kit.Cup()
    cup.refused(C.Start(draw="01"), kit.DIRECTOR, "not_open")
    cup.enter(["ann"])
    cup.enter(["bob"], check_in=False)
    cup.refused(C.Start(draw="01"), ANN, "forbidden")
    cup.refused(C.Start(draw="01"), kit.SYSTEM, "forbidden")
    cup.refused(C.Start(), kit.DIRECTOR, "draw_missing")
    cup.refused(C.Start(draw="abc"), kit.DIRECTOR, "draw_invalid")
    cup.refused(C.Start(draw="01"), kit.DIRECTOR, "too_few_players")  # one checked in
    cup.do(C.CheckIn(), BOB)
    cup.do(C.Start(draw="01"))
    cup.refused(C.Start(draw="01"), kit.DIRECTOR, "tournament_started")
    cup.refused(C.OpenRegistration(), kit.DIRECTOR, "tournament_started")
    cup.refused(C.Register(), Actor("cy"), "registration_closed")


def test_a_late_arrival_loses_the_fee(kit):
    """Art. 23 and RULES.md: not checked in at the start, not admitted; the buy-in comes
    back, the fee stays with the house; the pool is the admitted players' buy-ins."""
    cup = kit.Cup()
    cup.enter(kit.names(3))
    cup.enter(["late"], check_in=False)
    ev = cup.do(C.Start(draw="77"))
    assert ev[:3] == [E.RegistrationClosed(by="dir", reason="started"), E.NotAdmitted(player="late"),
                      E.BuyInRefunded(player="late", amount=10_000, reason="not checked in (Art. 23)")]
    assert not kit.of(ev, E.FeeRefunded)
    started = kit.of(ev, E.Started)[0]
    assert sorted(started.order) == kit.names(3) and started.pool == 30_000
    # Three fit the final table: no elimination, the final at once (one table, 6 shoes, 200 each).
    phase = kit.of(ev, E.PhaseStarted)[0]
    assert (phase.phase, phase.kind, phase.shoes, phase.stacks) == (1, "final", 6, dict.fromkeys(started.order, 200))
    assert phase.tables == [E.TableSeating(table="cup-1-1", seats={p: i for i, p in enumerate(started.order, 1)})]
    assert cup.c.view(None).entrants[3].not_admitted


def test_sit_and_go_starts_itself_at_the_fifth_entry(kit):
    """Appendix 1: one table, registering is taking part, it starts at 5 entries."""
    cup = kit.Cup(sit_and_go("SnG", 5_000))
    cup.do(C.OpenRegistration())
    for p in kit.names(4):
        ev = cup.do(C.Register(), Actor(p))
        assert ev[1].fee == 1_000 and len(ev) == 2
    cup.refused(C.CheckIn(), Actor("p01"), "no_check_in")
    cup.refused(C.Start(draw="01"), kit.DIRECTOR, "starts_by_itself")
    cup.refused(C.Register(), Actor("p05"), "draw_missing")  # the 5th entry is seated by its draw
    ev = cup.do(C.Register(draw="c0ffee"), Actor("p05"))
    assert [type(e) for e in ev[:5]] == [E.Registered, E.EntryPaid, E.RegistrationClosed, E.Started, E.PhaseStarted]
    assert ev[2] == E.RegistrationClosed(by="p05", reason="started")
    started, phase = ev[3], ev[4]
    assert started.draw == "c0ffee" and started.pool == 25_000 and sorted(started.order) == kit.names(5)
    assert phase.kind == "final" and phase.shoes == 6 and len(phase.tables) == 1
    assert len(kit.of(ev, E.TableOrdered)) == 1
    cup.refused(C.Register(draw="01"), Actor("p06"), "registration_closed")
    # One winner takes the whole pool.
    ev = cup.play({"p01": 900, "p02": 100, "p03": 50}, {"p04": (40, 30), "p05": (22, 10)})
    assert kit.of(ev, E.PrizePaid) == [E.PrizePaid(player="p01", place=1, amount=25_000)]
    assert kit.of(ev, E.Finished)[0].prizes == {"p01": 25_000}


def test_cancel_before_the_start_refunds_everything(kit):
    cup = kit.Cup()
    cup.enter(["ann", "bob"])
    cup.refused(C.Cancel(), ANN, "forbidden")
    ev = cup.do(C.Cancel(reason="storm"))
    assert ev == [E.BuyInRefunded(player="ann", amount=10_000, reason="storm"),
                  E.FeeRefunded(player="ann", amount=2_000),
                  E.BuyInRefunded(player="bob", amount=10_000, reason="storm"),
                  E.FeeRefunded(player="bob", amount=2_000),
                  E.Cancelled(by="dir", reason="storm")]
    cup.refused(C.Cancel(), kit.DIRECTOR, "tournament_cancelled")
    cup.refused(C.Register(), Actor("cy"), "registration_closed")
    assert cup.c.view(None).pool == 0


def test_cancel_while_running_ends_the_tables_and_pays_nothing_twice(kit):
    cup = kit.Cup()
    cup.enter(kit.names(10))
    cup.enter(["late"], check_in=False)
    cup.do(C.Start(draw="0a"))
    t1, t2 = cup.tables()
    cup.report(t1, done=True, final=dict.fromkeys(cup.seated(t1), 200))
    ev = cup.do(C.Cancel(reason="fire alarm"))
    assert kit.of(ev, E.FeeRefunded)[0] == E.FeeRefunded(player="p01", amount=2_000)
    assert len(kit.of(ev, E.BuyInRefunded)) == 10  # "late" had his back at the start
    assert [e.player for e in kit.of(ev, E.FeeRefunded)] == [*kit.names(10), "late"]
    ends = kit.of(ev, E.TableOrdered)
    assert [(o.table, o.command) for o in ends] == [(t2, TournamentEnd(order=2, reason="fire alarm"))]
    assert ev[-1] == E.Cancelled(by="dir", reason="fire alarm")
    assert [(o.table, o.order) for o in cup.c.pending_orders()] == [(t2, 1), (t2, 2)]  # its seating, its end
    # The table acknowledges its end; the report changes nothing else now.
    assert cup.report(t2, done=True, final=dict.fromkeys(cup.seated(t2), 150)) == []
    assert cup.c.pending_orders() == []
    cup.refused(C.Pause(), kit.DIRECTOR, "not_running")


def test_state_round_trips_through_json(kit):
    cup = kit.Cup()
    cup.start(kit.names(9))
    raw = msgspec.json.encode(cup.s)
    again = Coordinator.from_state(msgspec.json.decode(raw, type=TournamentState))
    assert msgspec.json.encode(again.state) == raw
    assert again.pending_orders() == cup.c.pending_orders()


def test_legal_follows_the_refusals(kit):
    cup = kit.Cup()
    assert cup.c.legal(kit.DIRECTOR) == ["open_registration", "cancel"]
    assert cup.c.legal(ANN) == []
    cup.do(C.OpenRegistration())
    assert cup.c.legal(ANN) == ["register"]
    assert cup.c.legal(kit.CASHIER) == ["register"]
    assert cup.c.legal(kit.SYSTEM) == ["close_registration"]
    cup.do(C.Register(), ANN)
    assert cup.c.legal(ANN) == ["check_in"]
    assert cup.c.legal(kit.CROUPIER) == ["check_in"]
    assert cup.c.legal(kit.DIRECTOR) == ["close_registration", "check_in", "cancel"]  # start: too few
    cup.do(C.Register(), BOB)
    cup.do(C.CheckIn(), ANN)
    cup.do(C.CheckIn(), BOB)
    assert cup.c.legal(kit.CROUPIER) == []
    assert cup.c.legal(kit.DIRECTOR) == ["close_registration", "start", "cancel"]
    cup.do(C.Start(draw="01"))
    assert cup.c.legal(kit.DIRECTOR) == ["pause", "expel", "cancel"]
    assert cup.c.legal(kit.SYSTEM) == ["pause", "table_report"]
    assert cup.c.legal(ANN) == []
    cup.do(C.Pause())
    assert cup.c.legal(kit.DIRECTOR) == ["resume", "expel", "cancel"]


def test_guards_no_command_reaches_by_itself(kit):
    cup = kit.Cup(max_entrants=2)
    cup.enter(["ann", "bob"], check_in=False)  # full: registration closed by itself
    cup.s.status = "registration"  # a stored state from elsewhere: the full check still holds
    cup.refused(C.Register(), Actor("cy"), "tournament_full")
    cup.refused(TournamentEnd(order=1), kit.DIRECTOR, "malformed_command")
