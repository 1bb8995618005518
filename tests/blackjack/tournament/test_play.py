"""A tournament played through fabricated table reports: the seating, the ranking (Art.
25), the tie-breaks, the final (Art. 24) and the prizes (Art. 26)."""

from __future__ import annotations

import pytest

from blackjack.commands import TournamentEntry, TournamentExpel, TournamentPause, TournamentSeat
from blackjack.tournament import commands as C
from blackjack.tournament import events as E
from blackjack.tournament.events import Standing

# The draw "5eed" orders p01..p15 so (tests/blackjack/tournament/test_seating.py pins it):
DRAWN = ["p13", "p11", "p10", "p03", "p04", "p09", "p14", "p01", "p08", "p06", "p07", "p12", "p15", "p02", "p05"]
ELIMINATION = {  # the points after 6 shoes: p07, p08, p09 tied across the cut (7th to 9th)
    "p01": 900, "p02": 800, "p03": 700, "p04": 600, "p05": 500, "p06": 400, "p07": 300, "p08": 300, "p09": 300,
    "p10": 250, "p11": 200, "p12": 150,
}
OUT = {"p13": (30, 40), "p14": (30, 20), "p15": (12, 60)}  # player: (hand, stack before it)


def _fifteen(kit, **kw):
    cup = kit.Cup(**kw)
    ev = cup.start(kit.names(15))
    return cup, ev


def test_fifteen_players_sit_five_five_five_in_drawn_order(kit):
    cup, ev = _fifteen(kit)
    assert kit.of(ev, E.Started)[0].order == DRAWN
    phase = kit.of(ev, E.PhaseStarted)[0]
    assert (phase.phase, phase.kind, phase.shoes) == (1, "elimination", 6)
    assert [t.seats for t in phase.tables] == [{p: i for i, p in enumerate(DRAWN[k:k + 5], 1)} for k in (0, 5, 10)]
    assert [t.table for t in phase.tables] == ["cup-1-1", "cup-1-2", "cup-1-3"]
    orders = kit.of(ev, E.TableOrdered)
    assert orders[0] == E.TableOrdered(table="cup-1-1", order=1, command=TournamentSeat(
        order=1, tournament="cup", phase=1, shoes=6, min_bet=10, max_bet=100,
        seats=_entries(DRAWN[:5])))
    assert cup.c.pending_orders() == orders


def _entries(players, stack=200):
    return [TournamentEntry(box=i, player=p, stack=stack) for i, p in enumerate(players, 1)]


def test_a_tie_across_the_cut_is_broken_then_the_final_and_the_prizes(kit):
    cup, _ = _fifteen(kit, buy_in=3_333)
    ev = cup.play(ELIMINATION, OUT)
    assert not kit.of(ev, E.PhaseEnded)  # not before the tie is settled
    # The tied players in drawn order (p09 was drawn before p08, p08 before p07).
    assert kit.of(ev, E.TieBreak) == [E.TieBreak(phase=2, players=["p09", "p08", "p07"], points=300, places=[7, 8, 9])]
    tb = kit.of(ev, E.PhaseStarted)[0]
    assert (tb.phase, tb.kind, tb.shoes, tb.stacks) == (2, "tiebreak", 1, {"p09": 300, "p08": 300, "p07": 300})
    assert kit.of(ev, E.TableOrdered)[0].command.seats == _entries(["p09", "p08", "p07"], 300)

    ev = cup.report("cup-2-1", hands=[(4, {"p08": 460, "p07": 320, "p09": 20})], eliminated=[("p09", 5, 20)],
                    done=True, final={"p08": 460, "p07": 320})
    ended = kit.of(ev, E.PhaseEnded)[0]
    assert (ended.phase, ended.kind) == (1, "elimination")
    assert ended.advancing == ["p01", "p02", "p03", "p04", "p05", "p06", "p08"]
    assert [(x.place, x.player, x.points, x.out) for x in ended.standings[5:10]] == [
        (6, "p06", 400, ""), (7, "p08", 300, ""), (8, "p07", 300, "cut"), (9, "p09", 300, "cut"),
        (10, "p10", 250, "cut")]
    final = kit.of(ev, E.PhaseStarted)[-1]
    finalists = [p for p in DRAWN if p in ended.advancing]  # seated in drawn order (Art. 24)
    assert (final.phase, final.kind, final.shoes) == (3, "final", 6)
    assert final.tables == [E.TableSeating(table="cup-3-1", seats={p: i for i, p in enumerate(finalists, 1)})]
    assert final.stacks == dict.fromkeys(finalists, 200)  # "una nuova dotazione di 200"

    ev = cup.play({"p03": 1200, "p06": 700, "p08": 400, "p01": 300},
                  {"p02": (40, 10), "p04": (41, 10), "p05": (41, 50)})
    # Art. 26: 49,995 cents; 2nd 25% = 12,498.75 -> 12,498; 3rd 15% = 7,499.25 -> 7,499; 1st the rest.
    assert kit.of(ev, E.PrizePaid) == [E.PrizePaid(player="p03", place=1, amount=29_998),
                                      E.PrizePaid(player="p06", place=2, amount=12_498),
                                      E.PrizePaid(player="p08", place=3, amount=7_499)]
    done = ev[-1]
    assert isinstance(done, E.Finished) and done.prizes == {"p03": 29_998, "p06": 12_498, "p08": 7_499}
    assert [x.player for x in done.standings] == [
        "p03", "p06", "p08", "p01", "p05", "p04", "p02",  # the final
        "p07", "p09", "p10", "p11", "p12", "p13", "p14", "p15"]  # then the elimination's order
    assert done.standings[4] == Standing(place=5, player="p05", points=0, out="eliminated", table="cup-3-1")
    assert done.standings[7] == Standing(place=8, player="p07", points=300, out="cut", table="cup-1-3")
    assert done.standings[-1] == Standing(place=15, player="p15", points=0, out="eliminated", table="cup-1-3")
    assert cup.s.status == "finished" and cup.c.pending_orders() == []
    view = cup.c.view("p06")
    assert view.prizes == done.prizes and view.me is not None and (view.me.place, view.me.points) == (2, 700)
    cup.refused(C.Cancel(), kit.DIRECTOR, "tournament_finished")
    cup.refused(C.TableReport(table="cup-3-1", phase=3, seq=99), kit.SYSTEM, "not_running")


def test_a_tie_that_needs_two_tie_breaks(kit):
    cup, _ = _fifteen(kit)
    points = dict(ELIMINATION, p06=300, p07=300, p08=300, p09=290)  # p06, p07, p08 tied 6th to 8th
    ev = cup.play(points, OUT)
    assert kit.of(ev, E.TieBreak) == [E.TieBreak(phase=2, players=["p08", "p06", "p07"], points=300, places=[6, 7, 8])]
    # p08 wins 6th; p06 and p07 end the shoe level again, across the cut: one more shoe.
    ev = cup.play({"p08": 500, "p06": 350, "p07": 350})
    assert kit.of(ev, E.TieBreak) == [E.TieBreak(phase=3, players=["p06", "p07"], points=350, places=[7, 8])]
    assert kit.of(ev, E.PhaseStarted)[0].stacks == {"p06": 350, "p07": 350}  # the points they are tied on
    ev = cup.play({"p07": 400}, {"p06": (3, 350)})
    ended = kit.of(ev, E.PhaseEnded)[0]
    assert ended.advancing == ["p01", "p02", "p03", "p04", "p05", "p08", "p07"]
    assert [x.player for x in ended.standings[:9]] == ["p01", "p02", "p03", "p04", "p05", "p08", "p07", "p06", "p09"]
    assert kit.of(ev, E.PhaseStarted)[0].phase == 4


def test_the_eliminated_rank_by_hand_then_stack_before_then_draw(kit):
    """Art. 25: a later hand ranks higher; in the same hand (at any table: hands are
    numbered per table, all tables play at once) more points before it; then the draw."""
    cup, _ = _fifteen(kit)
    out = {"p13": (30, 20), "p14": (30, 20), "p15": (30, 50), "p12": (12, 90), "p11": (31, 5)}
    assert len({cup.table_of(p) for p in out}) == 3
    points = {p: 200 + 10 * i for i, p in enumerate(kit.names(15))} | {"p10": 1}
    ev = cup.play(points, out)
    standings = kit.of(ev, E.PhaseEnded)[0].standings
    # p13 was drawn before p14: he ranks higher when all else is equal.
    assert [x.player for x in standings[-6:]] == ["p10", "p11", "p15", "p13", "p14", "p12"]
    assert [x.out for x in standings[-6:]] == ["cut", "eliminated", "eliminated", "eliminated", "eliminated",
                                               "eliminated"]


def test_ties_for_prizes_in_the_final_each_get_a_table(kit):
    cup = kit.Cup()
    ev = cup.start(kit.names(7))
    assert kit.of(ev, E.PhaseStarted)[0].kind == "final"  # 7 fit the final table
    order = kit.of(ev, E.Started)[0].order
    ev = cup.play({"p01": 500, "p02": 500, "p03": 300, "p04": 300, "p05": 100, "p06": 100, "p07": 50})

    def drawn(*ps):
        return [p for p in order if p in ps]

    # 1st-2nd and 3rd-4th decide prizes; 5th-6th does not (left to the draw).
    assert kit.of(ev, E.TieBreak) == [E.TieBreak(phase=2, players=drawn("p01", "p02"), points=500, places=[1, 2]),
                                      E.TieBreak(phase=2, players=drawn("p03", "p04"), points=300, places=[3, 4])]
    tb = kit.of(ev, E.PhaseStarted)[0]
    assert [sorted(t.seats) for t in tb.tables] == [["p01", "p02"], ["p03", "p04"]]
    assert [t.table for t in tb.tables] == ["cup-2-1", "cup-2-2"]
    first = cup.report("cup-2-1", done=True, final={"p01": 450, "p02": 600})
    assert not kit.of(first, E.Finished)  # the other table still plays
    ev = cup.report("cup-2-2", done=True, final={"p03": 310, "p04": 290})
    finished = ev[-1]
    assert [x.player for x in finished.standings] == ["p02", "p01", "p03", "p04", *drawn("p05", "p06"), "p07"]
    assert finished.prizes == {"p02": 42_000, "p01": 17_500, "p03": 10_500}
    ended = kit.of(ev, E.PhaseEnded)[0]
    assert (ended.phase, ended.kind, ended.advancing) == (1, "final", [])


def test_nobody_left_after_the_elimination_means_no_final(kit):
    cup = kit.Cup()
    cup.start(kit.names(8))
    out = {p: (10 + i, 5) for i, p in enumerate(kit.names(8))}
    ev = cup.play({}, out)
    assert kit.of(ev, E.PhaseEnded)[0].advancing == []
    assert not kit.of(ev, E.PhaseStarted)
    assert ev[-1].prizes == {"p08": 48_000, "p07": 20_000, "p06": 12_000}  # the last out ranks first


def test_a_field_smaller_than_the_prizes_gives_the_rest_to_the_first(kit):
    cup = kit.Cup()
    cup.start(["ann", "bob"])
    ev = cup.play({"ann": 300, "bob": 100})
    assert ev[-1].prizes == {"ann": 15_000, "bob": 5_000}  # 60% + the unfilled 15%


def test_standings_after_each_hand_and_the_cut_line(kit):
    cup, _ = _fifteen(kit)
    ev = cup.report("cup-1-1", hands=[(1, {"p13": 230, "p11": 190, "p10": 200, "p03": 200, "p04": 200}),
                                      (2, {"p13": 500, "p11": 150, "p10": 200, "p03": 200, "p04": 190})])
    (update,) = ev
    assert (update.phase, update.table, update.hand, update.cut_line) == (1, "cup-1-1", 2, 200)
    assert update.standings[0] == Standing(place=1, player="p13", points=500, out="", table="cup-1-1")
    assert [(x.place, x.player) for x in update.standings[-2:]] == [(14, "p04"), (15, "p11")]
    assert cup.report("cup-1-1", done=False) == []  # nothing new: no standings
    view = cup.c.view("p13")
    assert view.cut_line == 200 and (view.me.place, view.me.points) == (1, 500)
    assert [s.points for s in view.phase.tables[0].seats] == [500, 150, 200, 200, 190]


def test_reports_acknowledge_orders_and_are_taken_once(kit):
    cup, _ = _fifteen(kit)
    t1, t2, t3 = cup.tables()
    assert [o.table for o in cup.c.pending_orders()] == [t1, t2, t3]
    cup.report(t1, order=0, seq=5)
    assert [o.table for o in cup.c.pending_orders()] == [t1, t2, t3]
    cup.report(t1, order=1, seq=6)
    assert [o.table for o in cup.c.pending_orders()] == [t2, t3]
    report = C.TableReport(table=t1, phase=1, seq=6, order=1)
    cup.refused(report, kit.SYSTEM, "stale_report")
    cup.refused(C.TableReport(table=t1, phase=1, seq=3), kit.SYSTEM, "stale_report")
    cup.refused(C.TableReport(table=t1, phase=1, seq=7), kit.DIRECTOR, "forbidden")
    cup.refused(C.TableReport(table="cup-9-9", phase=1, seq=1), kit.SYSTEM, "unknown_table")
    cup.refused(C.TableReport(table=t2, phase=2, seq=1), kit.SYSTEM, "wrong_phase")
    cup.refused(C.TableReport(table=t2, phase=1, seq=1, order=2), kit.SYSTEM, "unknown_order")
    cup.refused(C.TableReport(table=t2, phase=1, seq=1, hands=[C.HandResult(hand=1, stacks={"p13": 10})]),
                kit.SYSTEM, "unknown_player")  # p13 sits at table 1
    p = cup.seated(t2)[0]
    cup.refused(C.TableReport(table=t2, phase=1, seq=1, expelled=[p]), kit.SYSTEM, "not_expelled")
    cup.refused(C.TableReport(table=t2, phase=1, seq=1, hands=[C.HandResult(hand=1, stacks={p: 0})]),
                kit.SYSTEM, "zero_stack")
    cup.report(t2, done=True, final=dict.fromkeys(cup.seated(t2), 200))
    cup.refused(C.TableReport(table=t2, phase=1, seq=99, done=True), kit.SYSTEM, "table_done")
    cup.report(t2)  # a done table's report may still acknowledge
    cup.play(dict.fromkeys(kit.names(15), 200) | ELIMINATION, OUT)  # on to the tie-break
    cup.refused(C.TableReport(table=t3, phase=1, seq=99), kit.SYSTEM, "unknown_table")  # its phase is over
    cup.refused(C.TableReport(table=t3, phase=1, seq=0), kit.SYSTEM, "stale_report")  # a resent report


def test_pause_and_resume_order_every_table_still_playing(kit):
    cup, _ = _fifteen(kit)
    cup.refused(C.Resume(), kit.DIRECTOR, "not_paused")
    cup.report("cup-1-2", done=True, final=dict.fromkeys(cup.seated("cup-1-2"), 200))
    ev = cup.do(C.Pause(reason="server restarted"), kit.SYSTEM)
    assert ev == [E.Paused(by="server", reason="server restarted"),
                  E.TableOrdered(table="cup-1-1", order=2, command=TournamentPause(order=2, paused=True,
                                                                                    reason="server restarted")),
                  E.TableOrdered(table="cup-1-3", order=2, command=TournamentPause(order=2, paused=True,
                                                                                    reason="server restarted"))]
    assert cup.s.paused and cup.c.view(None).paused
    cup.refused(C.Pause(), kit.DIRECTOR, "already_paused")
    cup.refused(C.Resume(), kit.SYSTEM, "forbidden")
    cup.refused(C.Pause(), kit.CROUPIER, "forbidden")
    # A phase that opens during the pause opens paused.
    ev = cup.play(ELIMINATION, OUT)
    assert [o.command for o in kit.of(ev, E.TableOrdered)][1] == TournamentPause(order=2, paused=True, reason="paused")
    ev = cup.do(C.Resume())
    assert ev == [E.Resumed(by="dir"),
                  E.TableOrdered(table="cup-2-1", order=3, command=TournamentPause(order=3, paused=False))]
    assert not cup.s.paused


def test_pause_needs_a_running_tournament(kit):
    cup = kit.Cup()
    cup.refused(C.Pause(), kit.DIRECTOR, "not_running")
    cup.refused(C.Resume(), kit.DIRECTOR, "not_running")
    cup.refused(C.Expel(player="ann"), kit.DIRECTOR, "not_running")


def test_an_expelled_player_ranks_last_and_wins_nothing(kit):
    cup = kit.Cup()
    cup.start(kit.names(7))
    table = cup.tables()[0]
    cup.refused(C.Expel(player="p01"), kit.CROUPIER, "forbidden")
    cup.refused(C.Expel(player="zed"), kit.DIRECTOR, "not_in_tournament")
    ev = cup.do(C.Expel(player="p01"))
    assert ev == [E.Expelled(player="p01", by="dir", reason="passing chips (Art. 27)"),
                  E.TableOrdered(table=table, order=2, command=TournamentExpel(order=2, player="p01",
                                                                               reason="passing chips (Art. 27)"))]
    cup.refused(C.Expel(player="p01"), kit.DIRECTOR, "not_in_tournament")
    live = cup.c.view(None).standings
    assert live[-1] == Standing(place=7, player="p01", points=0, out="expelled", table=table)
    # The table reports him expelled with the hand in play (his stack went back there).
    cup.report(table, hands=[(9, {"p01": 900, "p02": 300})], expelled=["p01"], order=2)
    assert cup.c.pending_orders() == []
    cup.report(table, eliminated=[("p07", 10, 5)])
    cup.refused(C.Expel(player="p07"), kit.DIRECTOR, "not_in_tournament")  # already out
    ev = cup.report(table, done=True, final={"p02": 300, "p03": 250, "p04": 240, "p05": 230, "p06": 220})
    finished = ev[-1]
    assert [x.player for x in finished.standings] == ["p02", "p03", "p04", "p05", "p06", "p07", "p01"]
    assert finished.standings[-1].out == "expelled" and "p01" not in finished.prizes
    assert sum(finished.prizes.values()) == 70_000


def test_a_player_waiting_for_a_tie_break_can_be_expelled(kit):
    cup, _ = _fifteen(kit)
    cup.play(ELIMINATION, OUT)  # p07, p08, p09 play a tie-break for 7th
    ev = cup.do(C.Expel(player="p01"))
    assert ev == [E.Expelled(player="p01", by="dir", reason="passing chips (Art. 27)")]  # no table to tell
    ev = cup.play({"p08": 460, "p07": 320, "p09": 100})
    # p01 gone, the 7 finalists are p02..p06 and the first two of the tie-break.
    assert kit.of(ev, E.PhaseEnded)[0].advancing == ["p02", "p03", "p04", "p05", "p06", "p08", "p07"]
    assert kit.of(ev, E.PhaseEnded)[0].standings[-1] == Standing(place=15, player="p01", points=0, out="expelled",
                                                                 table="cup-1-2")


@pytest.mark.parametrize("viewer", [None, "nobody"])
def test_the_view_without_a_player(kit, viewer):
    cup, _ = _fifteen(kit)
    view = cup.c.view(viewer)
    assert view.me is None and view.status == "running" and view.pool == 150_000
    assert view.phase.kind == "elimination" and [len(t.seats) for t in view.phase.tables] == [5, 5, 5]
    assert len(view.standings) == 15 and view.cut_line == 200


def test_a_tie_of_more_than_seven_plays_at_balanced_tables(kit):
    cup = kit.Cup()
    cup.start(kit.names(20))
    players = kit.names(20)  # ten level at 300 from 4th to 13th, across the cut after 7th
    points = {"p01": 900, "p02": 800, "p03": 700} | dict.fromkeys(players[3:13], 300) | dict.fromkeys(players[13:], 100)
    ev = cup.play(points)
    (tie,) = kit.of(ev, E.TieBreak)
    assert (tie.points, tie.places) == (300, list(range(4, 14)))
    tables = kit.of(ev, E.PhaseStarted)[0].tables
    assert [len(t.seats) for t in tables] == [5, 5] and cup.c.current_tables() == ["cup-2-1", "cup-2-2"]
    # Both tables' results rank the group together.
    ev = cup.play({p: 300 + 10 * i for i, p in enumerate(tie.players)})
    assert kit.of(ev, E.PhaseEnded)[0].advancing == ["p01", "p02", "p03", *reversed(tie.players[-4:])]


def test_what_the_server_reads_between_commands(kit):
    cup = kit.Cup()
    assert cup.s.phase == 0 and cup.c.current_tables() == [] and cup.c.report_cursor("cup-1-1") == 0
    cup.start(kit.names(9))
    assert cup.s.phase == 1 and cup.c.current_tables() == ["cup-1-1", "cup-1-2"]
    cup.report("cup-1-1", seq=41, done=True, final=dict.fromkeys(cup.seated("cup-1-1"), 200))
    assert cup.c.report_cursor("cup-1-1") == 41 and cup.c.current_tables() == ["cup-1-2"]
    cup.do(C.Cancel())
    assert cup.c.current_tables() == ["cup-1-2"]  # until it acknowledges its end
    cup.report("cup-1-2", done=True)
    assert cup.c.current_tables() == []
