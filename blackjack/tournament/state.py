"""The coordinator's whole state: one msgspec Struct that round-trips through JSON, so a
tournament is stored, reloaded (``Coordinator.from_state``) and replayed exactly.

A tournament is played in *stages* (Art. 24): the elimination and the final (a Sit&Go, or
a field no larger than the final table, has only the final). Each stage has one main
*phase* (6 shoes) and then as many tie-break phases (1 shoe) as Art. 25 needs; every phase
is played at its own tables, each named ``<tournament>-<phase>-<k>``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Literal

import msgspec

from blackjack.commands import TournamentEnd, TournamentExpel, TournamentPause, TournamentSeat
from blackjack.tournament.events import Event, Standing, TableOrdered
from blackjack.tournament.spec import TournamentSpec

Status = Literal["scheduled", "registration", "closed", "running", "finished", "cancelled"]
PhaseKind = Literal["elimination", "final", "tiebreak"]
Out = Literal["", "eliminated", "expelled"]
Order = TournamentSeat | TournamentPause | TournamentExpel | TournamentEnd


class Entrant(msgspec.Struct, gc=False):
    """A registered player and what his entry's money has done (so nothing moves twice)."""

    player: str
    ticket: int
    source: str
    reference: str = ""
    checked_in: bool = False
    not_admitted: bool = False  # absent at the start (Art. 23)
    buy_in_refunded: bool = False
    fee_refunded: bool = False


class Result(msgspec.Struct, gc=False):
    """One player's standing in one phase: his points while in; how he went out."""

    player: str
    table: str
    points: int
    out: Out = ""
    hand: int = 0  # eliminated after this hand (the phase's hand number at his table)
    stack_before: int = 0  # his points when that hand opened


class TableRun(msgspec.Struct, gc=False):
    table: str
    phase: int
    seats: dict[str, int]  # player -> box
    issued: int = 0  # the last order number issued to this table
    applied: int = 0  # the last order its reports said it applied
    seq: int = -1  # the last report seq taken (-1: none yet)
    hand: int = 0  # the last hand it reported
    done: bool = False


class PhaseRun(msgspec.Struct, gc=False):
    number: int
    kind: PhaseKind
    shoes: int
    tables: list[str]
    stacks: dict[str, int]  # the points issued at its start
    results: dict[str, Result]  # every player seated in it, in seating order


class Stage(msgspec.Struct, gc=False):
    """The elimination or the final, with its tie-breaks. Once the main phase is over
    (``settled``) the ranking is ``blocks``: players in order, each block still tied (a
    block of one is placed); a tie-break replaces its block by the blocks it produced."""

    kind: Literal["elimination", "final"]
    phase: int  # its main phase
    settled: bool = False
    blocks: list[list[str]] = []
    points: dict[str, int] = {}  # each player's latest points (issued again in a tie-break)
    over: bool = False
    advancing: list[str] = []  # to the final (an elimination stage that is over)


class TournamentState(msgspec.Struct, gc=False):
    tournament_id: str
    spec: TournamentSpec
    status: Status = "scheduled"
    paused: bool = False
    entrants: list[Entrant] = []
    draw: str = ""
    order: list[str] = []  # the admitted players in drawn order (Started.order)
    pool: int = 0
    phases: list[PhaseRun] = []
    stages: list[Stage] = []
    tables: dict[str, TableRun] = {}
    orders: list[TableOrdered] = []  # issued and not yet applied, in order
    expelled: list[str] = []  # in order of expulsion
    standings: list[Standing] = []  # when finished
    prizes: dict[str, int] = {}

    @property
    def phase(self) -> int:
        """The number of the phase in play, or last played (0 before the start)."""
        return len(self.phases)


def entrant(s: TournamentState, player: str) -> Entrant | None:
    return next((e for e in s.entrants if e.player == player), None)


def current_phase(s: TournamentState) -> PhaseRun | None:
    return s.phases[-1] if s.phases else None


def open_tables(s: TournamentState) -> list[str]:
    """The current phase's tables still playing (while running or cancelled)."""
    phase = current_phase(s)
    if phase is None or s.status == "finished":
        return []
    return [t for t in phase.tables if not s.tables[t].done]


def issue(s: TournamentState, table: str, make: Callable[[int], Order], out: list[Event]) -> None:
    """Number the next order for ``table`` (from 1) and keep it until the table applies it."""
    run = s.tables[table]
    run.issued += 1
    ordered = TableOrdered(table=table, order=run.issued, command=make(run.issued))
    s.orders.append(ordered)
    out.append(ordered)


def acknowledge(s: TournamentState, table: str, upto: int) -> None:
    """The table applied every order numbered up to ``upto``: stop delivering them."""
    s.orders = [o for o in s.orders if o.table != table or o.order > upto]
