"""What anyone may see of a tournament: the settings, who entered (never a bank transfer's
reference), the pool, the phase in play with its tables, the live standings and, once it
is over, the prizes. A player viewing it also sees his own place and points."""

from __future__ import annotations

import msgspec

from blackjack.tournament.events import Standing
from blackjack.tournament.ranking import cut_line, stage_standings
from blackjack.tournament.spec import TournamentSpec
from blackjack.tournament.state import TournamentState


class EntrantView(msgspec.Struct):
    player: str
    ticket: int
    checked_in: bool
    not_admitted: bool


class SeatView(msgspec.Struct):
    box: int
    player: str
    points: int  # his points in this phase (0 once out)
    out: str  # "", "eliminated", "expelled"


class TableView(msgspec.Struct):
    table: str
    hand: int  # the last hand it reported
    done: bool
    seats: list[SeatView]


class PhaseView(msgspec.Struct):
    number: int
    kind: str
    shoes: int
    tables: list[TableView]


class MyView(msgspec.Struct):
    place: int
    points: int  # in the phase in play if he plays it, else those he is ranked on
    out: str


class TournamentView(msgspec.Struct):
    tournament_id: str
    spec: TournamentSpec
    status: str
    paused: bool
    entrants: list[EntrantView]
    pool: int  # the buy-ins in the prize pool now
    phase: PhaseView | None
    standings: list[Standing]
    cut_line: int
    me: MyView | None
    prizes: dict[str, int]
    legal: list[str] = []  # what the viewer may send now (``Coordinator.legal``), filled by the server


def _pool(s: TournamentState) -> int:
    if s.status in ("running", "finished"):
        return s.pool
    return s.spec.buy_in * sum(not e.buy_in_refunded for e in s.entrants)


def _phase(s: TournamentState) -> PhaseView | None:
    if not s.phases or s.status != "running":
        return None
    phase = s.phases[-1]
    tables = []
    for t in phase.tables:
        run = s.tables[t]
        seats = [SeatView(box=box, player=p, points=phase.results[p].points if phase.results[p].out == "" else 0,
                          out=phase.results[p].out) for p, box in run.seats.items()]
        tables.append(TableView(table=t, hand=run.hand, done=run.done, seats=seats))
    return PhaseView(number=phase.number, kind=phase.kind, shoes=phase.shoes, tables=tables)


def tournament_view(s: TournamentState, viewer: str | None) -> TournamentView:
    standings, cut = list(s.standings), 0
    if s.status == "running":
        standings = stage_standings(s, s.stages[-1])
        cut = cut_line(s, s.stages[-1], standings)
    me = None
    mine = next((x for x in standings if x.player == viewer), None)
    if mine is not None:
        now = s.phases[-1].results.get(mine.player) if s.status == "running" else None
        points = now.points if now is not None and now.out == "" else mine.points
        me = MyView(place=mine.place, points=points, out=mine.out)
    return TournamentView(
        tournament_id=s.tournament_id, spec=s.spec, status=s.status, paused=s.paused,
        entrants=[EntrantView(player=e.player, ticket=e.ticket, checked_in=e.checked_in, not_admitted=e.not_admitted)
                  for e in s.entrants],
        pool=_pool(s), phase=_phase(s), standings=standings, cut_line=cut, me=me, prizes=dict(s.prizes),
    )
