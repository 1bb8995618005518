"""The seating draw (Art. 23, Art. 27 "il posto al tavolo sarà assegnato per sorteggio")
and the seating of each phase.

The draw is a permutation derived from the hex seed the server's RNG put in the command,
so it replays exactly: a counter-mode SHA-256 stream (``sha256(seed || counter)``, the
counter as 8 big-endian bytes from 0) read as 64-bit words; ``randbelow(n)`` masks a word
to the bits ``n - 1`` needs and rejects values >= n (unbiased, never ``x % n``); a
Fisher-Yates shuffle of the players in ticket order.

>>> table_sizes(15), table_sizes(16), table_sizes(8), table_sizes(7)
([5, 5, 5], [6, 5, 5], [4, 4], [7])
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Sequence
from typing import Literal, TypeVar

from blackjack.commands import TournamentEntry, TournamentPause, TournamentSeat
from blackjack.tournament.events import Event, PhaseStarted, Started, TableSeating
from blackjack.tournament.state import Order, PhaseKind, PhaseRun, Result, Stage, TableRun, TournamentState, issue

T = TypeVar("T")
SEATS = 7  # boxes at a blackjack table
_WORD = 8  # bytes per word read from the stream


class DrawStream:
    """Uniform integers from a hex seed (the ``games.rng.Rng`` protocol)."""

    def __init__(self, seed: str) -> None:
        self._seed = bytes.fromhex(seed)
        self._counter = 0
        self._buffer = b""

    def word(self) -> int:
        if not self._buffer:
            self._buffer = hashlib.sha256(self._seed + self._counter.to_bytes(8, "big")).digest()
            self._counter += 1
        chunk, self._buffer = self._buffer[:_WORD], self._buffer[_WORD:]
        return int.from_bytes(chunk, "big")

    def randbelow(self, n: int) -> int:
        if not 0 < n <= 1 << (8 * _WORD):
            raise ValueError(f"randbelow({n})")
        mask = (1 << (n - 1).bit_length()) - 1
        while True:  # rejection: each try succeeds with probability > 1/2
            x = self.word() & mask
            if x < n:
                return x


def permutation(seed: str, items: Sequence[T]) -> list[T]:
    """``items`` in drawn order: Fisher-Yates driven by the seed's stream."""
    rng = DrawStream(seed)
    out = list(items)
    for i in range(len(out) - 1, 0, -1):
        j = rng.randbelow(i + 1)
        out[i], out[j] = out[j], out[i]
    return out


def table_sizes(n: int) -> list[int]:
    """Art. 23: as few tables as fit everyone (fewest empty seats), sizes differing by at
    most one, the larger tables first."""
    if n <= 0:
        return []
    tables = -(-n // SEATS)
    base, extra = divmod(n, tables)
    return [base + 1] * extra + [base] * (tables - extra)


def balanced(players: Sequence[str]) -> list[list[str]]:
    """``players`` (in drawn order) filled into balanced tables, table by table."""
    out, start = [], 0
    for size in table_sizes(len(players)):
        out.append(list(players[start:start + size]))
        start += size
    return out


def table_id(tournament: str, phase: int, k: int) -> str:
    """A phase's table: ``<tournament>-<phase>-<k>`` (ids the server keeps for the tournament)."""
    return f"{tournament}-{phase}-{k}"


def tournament_of_table(table: str) -> str:
    """The tournament whose phase tables are named like ``table`` ("" if none could be)."""
    head, _, k = table.rpartition("-")
    tournament, _, phase = head.rpartition("-")
    return tournament if tournament and phase.isdigit() and k.isdigit() else ""


def open_phase(s: TournamentState, kind: PhaseKind, groups: list[list[str]], stacks: dict[str, int],
               shoes: int, out: list[Event]) -> PhaseRun:
    """Seat the next phase: each group (in drawn order) at its own balanced tables, boxes
    1.. in order, each player issued ``stacks[player]``; one ``TournamentSeat`` order per
    table (and a pause order after it while the tournament is paused)."""
    number = len(s.phases) + 1
    seatings: list[TableSeating] = []
    results: dict[str, Result] = {}
    for group in groups:
        for players in balanced(group):
            table = table_id(s.tournament_id, number, len(seatings) + 1)
            seats = {p: box for box, p in enumerate(players, 1)}
            seatings.append(TableSeating(table=table, seats=seats))
            s.tables[table] = TableRun(table=table, phase=number, seats=seats)
            results.update({p: Result(player=p, table=table, points=stacks[p]) for p in players})
    issued = {p: stacks[p] for p in results}
    phase = PhaseRun(number=number, kind=kind, shoes=shoes, tables=[t.table for t in seatings], stacks=issued,
                     results=results)
    s.phases.append(phase)
    out.append(PhaseStarted(phase=number, kind=kind, shoes=shoes, stacks=dict(issued), tables=seatings))
    for seating in seatings:
        entries = [TournamentEntry(box=box, player=p, stack=issued[p]) for p, box in seating.seats.items()]
        issue(s, seating.table, _seat(s, number, shoes, entries), out)
        if s.paused:  # a phase that opens during a pause opens paused
            issue(s, seating.table, lambda n: TournamentPause(order=n, paused=True, reason="paused"), out)
    return phase


def _seat(s: TournamentState, phase: int, shoes: int, entries: list[TournamentEntry]) -> Callable[[int], Order]:
    spec = s.spec
    return lambda n: TournamentSeat(order=n, tournament=s.tournament_id, phase=phase, shoes=shoes,
                                    min_bet=spec.min_bet, max_bet=spec.max_bet, seats=entries)


def begin_stage(s: TournamentState, kind: Literal["elimination", "final"], players: list[str],
                out: list[Event]) -> None:
    """The elimination or the final: its main phase, everyone issued a full stack (Art. 24:
    the final too gets "una nuova dotazione di 200"), ``spec.shoes`` shoes."""
    s.stages.append(Stage(kind=kind, phase=len(s.phases) + 1))
    open_phase(s, kind, [players], {p: s.spec.stack for p in players}, s.spec.shoes, out)


def start_play(s: TournamentState, draw: str, admitted: list[str], out: list[Event]) -> None:
    """The draw orders the admitted players; the pool is their buy-ins (Art. 26); a field
    that fits the final table plays only the final (a Sit&Go always)."""
    order = permutation(draw, admitted)
    s.status, s.draw, s.order, s.pool = "running", draw, order, s.spec.buy_in * len(order)
    out.append(Started(draw=draw, order=list(order), pool=s.pool))
    one_game = s.spec.format == "sit_and_go" or len(order) <= s.spec.finalists
    begin_stage(s, "final" if one_game else "elimination", order, out)
