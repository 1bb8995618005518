"""A tournament driven by hand: the commands a director, players and the server would
send, and table reports fabricated from the points each test chooses."""

from __future__ import annotations

import sys
from collections import defaultdict

import msgspec
import pytest

from blackjack.tournament import commands as C
from blackjack.tournament import events as E
from blackjack.tournament.coordinator import Coordinator
from blackjack.tournament.spec import TournamentSpec, checked
from games.commands import Actor
from games.errors import GameError

DIRECTOR = Actor("dir", "director")
SYSTEM = Actor("server", "system")
CASHIER = Actor("desk", "cashier")  # a server role, not a table's (games.commands.Role)
CROUPIER = Actor("cr", "croupier")
START = 1_760_000_000


def spec(**kw: object) -> TournamentSpec:
    return checked(msgspec.convert({"name": "Spring Cup", "buy_in": 10_000, "starts_at": START, **kw}, TournamentSpec))


def names(n: int) -> list[str]:
    return [f"p{i:02d}" for i in range(1, n + 1)]


def of(events: list[E.Event], kind: type) -> list:
    return [e for e in events if isinstance(e, kind)]


class Cup:
    """One tournament and the hand that drives it."""

    def __init__(self, tournament: TournamentSpec | None = None, tid: str = "cup", **kw: object) -> None:
        self.c = Coordinator(tid, tournament or spec(**kw))

    @property
    def s(self):
        return self.c.state

    def do(self, command, by: Actor = DIRECTOR) -> list[E.Event]:
        return self.c.handle(command, by)

    def refused(self, command, by: Actor, code: str) -> GameError:
        """Refused with ``code``, the state unchanged to the byte."""
        before = msgspec.json.encode(self.s)
        with pytest.raises(GameError) as info:
            self.c.handle(command, by)
        assert info.value.code == code, info.value.message
        assert msgspec.json.encode(self.s) == before
        return info.value

    def enter(self, players: list[str], check_in: bool = True) -> list[E.Event]:
        out: list[E.Event] = []
        if self.s.status == "scheduled":
            out += self.do(C.OpenRegistration())
        for p in players:
            out += self.do(C.Register(draw="5eed"), Actor(p))
        if check_in and self.s.spec.format == "tournament":
            for p in players:
                out += self.do(C.CheckIn(), Actor(p))
        return out

    def start(self, players: list[str], draw: str = "5eed") -> list[E.Event]:
        self.enter(players)
        return self.do(C.Start(draw=draw))

    # -- the tables -----------------------------------------------------------------------

    def tables(self) -> list[str]:
        return list(self.s.phases[-1].tables)

    def seated(self, table: str) -> list[str]:
        return list(self.s.tables[table].seats)

    def table_of(self, player: str) -> str:
        return self.s.phases[-1].results[player].table

    def report(self, table: str, *, hands=(), eliminated=(), expelled=(), done=False, final=None, seq=None,
               order=None, phase=None) -> list[E.Event]:
        run = self.s.tables[table]
        return self.do(C.TableReport(
            table=table, phase=run.phase if phase is None else phase, seq=run.seq + 1 if seq is None else seq,
            order=run.issued if order is None else order,
            hands=[C.HandResult(hand=h, stacks=st) for h, st in hands],
            eliminated=[C.Elimination(player=p, hand=h, stack_before=b) for p, h, b in eliminated],
            expelled=list(expelled), done=done, final=final or {}), SYSTEM)

    def play(self, points: dict[str, int], out: dict[str, tuple[int, int]] | None = None) -> list[E.Event]:
        """End the phase in play: each table reports its eliminations (``out``: player ->
        (hand, stack before)) and is done with ``points`` for everyone else still in."""
        out = out or {}
        events: list[E.Event] = []
        by_table: dict[str, list[str]] = defaultdict(list)
        for p, r in self.s.phases[-1].results.items():
            if r.out == "":
                by_table[r.table].append(p)
        for t in self.tables():
            if self.s.tables[t].done:
                continue
            players = by_table[t]
            events += self.report(t, eliminated=[(p, *out[p]) for p in players if p in out], done=True,
                                  final={p: points[p] for p in players if p not in out})
        return events


@pytest.fixture(scope="session")
def kit():
    """This module: ``kit.Cup``, ``kit.spec``, the actors (test modules cannot import a
    conftest, and this folder shares no helpers module)."""
    return sys.modules[__name__]
