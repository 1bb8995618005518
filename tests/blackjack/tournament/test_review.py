"""An outsider's review of the coordinator: the Sit&Go's rules (Appendix 1) and the money
the tournament holds (Art. 26) at the edges the other tests do not reach."""

from __future__ import annotations

import msgspec
import pytest

from blackjack.tournament import commands as C
from blackjack.tournament import events as E
from blackjack.tournament.spec import TournamentSpec, checked
from games.commands import Actor
from games.errors import GameError


def _sng(**kw: object) -> dict:
    return {"name": "Sit&Go 50", "format": "sit_and_go", "buy_in": 5000, "max_entrants": 7, "max_tables": 1,
            "prizes": [100], **kw}


@pytest.mark.parametrize("min_entrants", [None, 2, 3, 4])
def test_a_sit_and_go_never_starts_below_five(min_entrants):
    """Appendix 1: "una partita Sit&Go comincia non appena si raggiungono il minimo di 5 iscrizioni":
    a Sit&Go that would start with fewer than 5 entries is refused (the REST default is 2)."""
    raw = _sng() if min_entrants is None else _sng(min_entrants=min_entrants)
    with pytest.raises(GameError) as info:
        checked(msgspec.convert(raw, TournamentSpec))
    assert info.value.code == "invalid_tournament"


def test_a_sit_and_go_is_one_game_with_no_elimination_stage(kit):
    """Appendix 1 (and seating.start_play's own docstring: "a Sit&Go always" plays only the
    final): one sprint game at one table, whatever ``finalists`` says."""
    cup = kit.Cup(checked(msgspec.convert(_sng(min_entrants=5, finalists=3), TournamentSpec)), tid="sng")
    cup.do(C.OpenRegistration())
    ev = []
    for p in kit.names(5):
        ev += cup.do(C.Register(draw="5eed"), Actor(p))
    (phase,) = kit.of(ev, E.PhaseStarted)
    assert phase.kind == "final"


def test_a_final_whose_players_are_all_expelled_still_pays_out_its_pool(kit):
    """Art. 26 / the money invariant: a finished tournament's prize pool is paid out to the
    last peso (prizes, or refunds); it never stays in prize_pool:<id> for good. Here both
    finalists are expelled (Art. 27) and the pool of 2 x 100.00 is neither paid nor refunded."""
    cup = kit.Cup()
    cup.start(["ann", "bob"])
    (table,) = cup.tables()
    cup.do(C.Expel(player="ann"))
    cup.do(C.Expel(player="bob"))
    ev = cup.report(table, expelled=["ann", "bob"], done=True, final={})
    assert cup.s.status == "finished"
    paid = sum(e.amount for e in kit.of(ev, E.PrizePaid)) + sum(e.amount for e in kit.of(ev, E.BuyInRefunded))
    forfeited = sum(e.amount for e in kit.of(ev, E.PoolForfeited))  # nobody may be paid: to the house
    assert paid + forfeited == cup.s.pool == 20_000 and forfeited == 20_000


def test_a_second_cancel_and_a_late_report_move_nothing(kit):
    """Cancel refunds each entry once; a second cancel is refused and the tables' last reports
    (their stacks handed back) add no prize, refund or standings."""
    cup = kit.Cup()
    cup.start(kit.names(9))
    ev = cup.do(C.Cancel(reason="storm"))
    assert len(kit.of(ev, E.BuyInRefunded)) == 9 and len(kit.of(ev, E.FeeRefunded)) == 9
    cup.refused(C.Cancel(), kit.DIRECTOR, "tournament_cancelled")
    for t in cup.tables():
        run = cup.s.tables[t]
        late = cup.report(t, hands=[(1, {p: 190 for p in run.seats})], done=True,
                          final={p: 190 for p in run.seats}, order=run.issued)
        assert not [e for e in late if not isinstance(e, E.TableOrdered)], late
    assert cup.c.current_tables() == [] and cup.c.pending_orders() == []


def test_an_expulsion_racing_an_elimination_does_not_block_the_tables_orders(kit):
    """The orders' contract (docs/tournaments.md): the server delivers a table's orders in
    order until its reports say they were applied. The director expels a player whose
    elimination the table has recorded but the coordinator not yet taken: the table refuses
    that order for good (not_in_tournament), nothing ever acknowledges it, and the driver
    (server/tournaments.py ``_deliver``: the first pending order per table) resends it for
    ever, so the pause ordered after it never reaches the table."""
    from blackjack import commands as BC
    from blackjack import events as BE
    from blackjack.table import BlackjackTable
    from games.shoe import rigged_shoe
    from helpers.blackjack import actor
    from tests.blackjack.test_tournament_table import ONE_DECK, SERVER

    cup = kit.Cup(stack=10, min_bet=10, max_bet=10)
    cup.start(["ann", "bob"])
    (table,) = cup.tables()
    t = BlackjackTable(table, ONE_DECK, min_bet=10, max_bet=10, tournament=True)
    t.handle(cup.c.pending_orders()[0].command, actor(SERVER))
    cup.report(table, order=1)
    seats = cup.s.tables[table].seats
    loser, winner = sorted(seats, key=seats.get)  # box 1 loses, box 2 wins
    order, at = rigged_shoe(t.state.profile, "10 10 10 6 10 8")
    t.handle(BC.Shuffle(order=order), actor(SERVER))
    t.handle(BC.Cut(random_at=at), actor(SERVER))
    for p in (loser, winner):
        t.handle(BC.PlaceBet(box=seats[p], amount=10), actor(Actor(p)))
    t.handle(BC.CloseBets(), actor(SERVER))
    events = []
    for p in (loser, winner):
        events += t.handle(BC.Stand(box=seats[p], hand=0), actor(Actor(p)))
    assert any(isinstance(e, BE.PlayerEliminated) and e.player == loser for e in events)
    # Before the table's report reaches the coordinator, the director expels the loser, then pauses.
    cup.do(C.Expel(player=loser))
    cup.do(C.Pause(reason="review"))
    expel_order = cup.c.pending_orders()[0]
    try:
        t.handle(expel_order.command, actor(SERVER))
        applied = True
    except GameError as exc:
        assert exc.code == "not_in_tournament"
        applied = False
    cup.report(table, hands=[(1, {winner: 20})], eliminated=[(loser, 1, 10)], order=1)
    pending = [o.order for o in cup.c.pending_orders()]
    assert applied or expel_order.order not in pending, (pending, "the pause waits behind a refused order")
