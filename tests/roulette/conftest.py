from __future__ import annotations

import pytest

from games.commands import Actor
from games.errors import GameError
from helpers.actors import CROUPIER
from helpers.refusals import assert_refused
from roulette.commands import LaunchBall, NoMoreBets, OpenSpin, Result
from roulette.engine import RouletteTable


@pytest.fixture
def refused():
    """refused(table, command, actor, code): the command, given by ``actor``, raises
    GameError(code) and the table's state (and its derived index) is exactly as before."""

    def check(table: RouletteTable, command, actor: Actor, code: str) -> GameError:
        totals = dict(table._totals)
        error = assert_refused(table, command, actor, code)
        assert {k: v for k, v in table._totals.items() if v} == {k: v for k, v in totals.items() if v}
        return error

    return check


@pytest.fixture
def table() -> RouletteTable:
    t = RouletteTable("t1")
    t.handle(OpenSpin(), CROUPIER)
    return t


def spin(t: RouletteTable, number: int) -> list:
    """Launch, close and settle on ``number``; returns the result's events."""
    t.handle(LaunchBall(), CROUPIER)
    t.handle(NoMoreBets(), CROUPIER)
    return t.handle(Result(number=number), CROUPIER)


@pytest.fixture
def run_spin():
    return spin
