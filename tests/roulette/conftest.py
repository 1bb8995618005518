from __future__ import annotations

import msgspec
import pytest

from games.errors import GameError
from roulette.commands import LaunchBall, NoMoreBets, OpenSpin, Result
from roulette.engine import RouletteTable
from roulette.state import Actor

CROUPIER = Actor("c1", "croupier")
CHEF = Actor("h1", "chef")
DIRECTOR = Actor("d1", "director")


@pytest.fixture
def refused():
    """refused(table, command, code): the command raises GameError(code) and the table's
    state (and its derived index) is exactly as before."""

    def check(table: RouletteTable, command, code: str) -> GameError:
        before = msgspec.msgpack.encode(table.state)
        totals = dict(table._totals)
        with pytest.raises(GameError) as info:
            table.handle(command)
        assert info.value.code == code, info.value.message
        assert msgspec.msgpack.encode(table.state) == before
        assert {k: v for k, v in table._totals.items() if v} == {k: v for k, v in totals.items() if v}
        return info.value

    return check


@pytest.fixture
def table() -> RouletteTable:
    t = RouletteTable("t1")
    t.handle(OpenSpin(by=CROUPIER))
    return t


def spin(t: RouletteTable, number: int) -> list:
    """Launch, close and settle on ``number``; returns the result's events."""
    t.handle(LaunchBall(by=CROUPIER))
    t.handle(NoMoreBets(by=CROUPIER))
    return t.handle(Result(by=CROUPIER, number=number))


@pytest.fixture
def run_spin():
    return spin
