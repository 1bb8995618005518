"""The phase table and the role rules (roulette.phases, roulette.roles): every phase
refuses what the table says it refuses, with the table's code; ``legal_commands`` lists
exactly what an actor may send now, and agrees with ``handle``."""

from __future__ import annotations

import msgspec
import pytest

from games.commands import Actor
from games.errors import GameError
from helpers.actors import ANN, CHEF, CROUPIER, DIRECTOR
from roulette import phases, roles
from roulette.commands import (
    TAG,
    TAGS,
    CloseTable,
    LastSpin,
    LaunchBall,
    NoMoreBets,
    OpenSpin,
    PlaceAnnounced,
    PlaceBet,
    Result,
    Suspend,
    VoidSpin,
)
from roulette.engine import RouletteTable
from roulette.limits import default_settings
from roulette.phases import ALLOWED, Phase

SYSTEM = Actor("system:t1", "system")
CHIPS = ["place_bet", "place_announced", "same_again", "withdraw_bet"]
PRISONERS = ["choose_partage", "set_partage_preference", "move_prisoner"]


def at(phase: Phase, live: bool = True) -> RouletteTable:
    """A table in ``phase`` with a bet of Ann's where bets can be held; the wheel is the
    croupier's at a live table and the server's at an RNG table."""
    t = RouletteTable("t1", default_settings(live=live))
    wheel = CROUPIER if live else SYSTEM
    if phase == Phase.CLOSED:
        return t
    t.handle(OpenSpin(), wheel)
    t.handle(PlaceBet(spot="rouge", amount=1000), ANN)
    steps = {
        Phase.OPEN: [], Phase.LAUNCHED: [LaunchBall()], Phase.NO_MORE_BETS: [LaunchBall(), NoMoreBets()],
        Phase.SETTLED: [LaunchBall(), NoMoreBets(), Result(number=3)],
    }  # fmt: skip
    if phase == Phase.SUSPENDED:
        t.handle(Suspend(reason="inspection"), DIRECTOR)
    for c in steps.get(phase, []):
        t.handle(c, wheel)
    assert t.state.phase == phase
    return t


def test_the_table_speaks_the_commands_vocabulary():
    assert set(ALLOWED) == set(Phase)
    for accepted in ALLOWED.values():
        assert accepted <= set(TAGS)
    # every refusal the table can give is written down
    for phase in Phase:
        for tag in TAGS:
            for live in (True, False):
                why = phases.refusal(phase, tag, live=live)
                assert (why is None) == phases.accepts(phase, tag, live=live)
    assert set(roles.CONSOLE) | roles.CHIPS == set(TAGS)
    assert roles.SYSTEM.issubset(roles.CONSOLE)


# A rightful actor and a well-formed command for each type whose refusal comes from the
# phase alone (the others name a wager or a player's chips first: test_engine).
SAMPLES = {
    "open_spin": (OpenSpin(), DIRECTOR),
    "place_bet": (PlaceBet(spot="noir", amount=1000), ANN),
    "place_announced": (PlaceAnnounced(announce="tiers", unit=500), ANN),
    "launch_ball": (LaunchBall(), CROUPIER),
    "no_more_bets": (NoMoreBets(), CROUPIER),
    "result": (Result(number=5), CROUPIER),
    "void_spin": (VoidSpin(reason="a chip in the wheel"), CHEF),
    "last_spin": (LastSpin(), CROUPIER),
    "suspend": (Suspend(reason="x"), DIRECTOR),
    "close_table": (CloseTable(reason="x"), DIRECTOR),
}


@pytest.mark.parametrize("phase", list(Phase))
@pytest.mark.parametrize("tag", list(SAMPLES))
def test_each_phase_refuses_what_the_table_refuses_with_its_code(phase, tag, refused):
    t = at(phase)
    command, actor = SAMPLES[tag]
    why = phases.refusal(phase, tag, live=True)
    if why is None:
        t.handle(command, actor)  # accepted
        return
    err = refused(t, command, actor, why.code)
    assert err.message == why.message


def test_an_rng_table_takes_no_late_bet_from_the_table(refused):
    t = at(Phase.LAUNCHED, live=False)
    err = refused(t, PlaceBet(spot="noir", amount=1000), ANN, "no_more_bets")
    assert err.message == phases.RNG_LATE.message


LEGAL = [
    # (phase, live, actor, the exact list)
    (Phase.CLOSED, True, ANN, ["set_partage_preference"]),
    (Phase.CLOSED, True, CROUPIER, ["open_spin", "set_partage_preference"]),
    (Phase.CLOSED, True, CHEF, ["open_spin", "set_partage_preference", "register_societa", "mark_unclaimed"]),
    (Phase.OPEN, True, ANN, [*CHIPS, *PRISONERS]),
    (Phase.OPEN, True, CROUPIER, [*CHIPS, "launch_ball", "last_spin", *PRISONERS]),
    # Once the ball runs a prisoner stays as it is (Art. 12): its standing preference alone.
    (Phase.LAUNCHED, True, ANN, ["place_bet", "place_announced", "same_again", "set_partage_preference"]),
    (Phase.LAUNCHED, True, CHEF, ["place_bet", "place_announced", "same_again", "accept_late", "refuse_late",
                                  "no_more_bets", "void_spin", "last_spin", "suspend", "close_table",
                                  "set_partage_preference", "register_societa"]),
    (Phase.NO_MORE_BETS, True, CROUPIER, ["result", "last_spin", "set_partage_preference"]),
    (Phase.SETTLED, True, DIRECTOR, ["open_spin", "last_spin", "suspend", "close_table", *PRISONERS,
                                     "register_societa", "change_settings", "raise_limit", "mark_unclaimed"]),
    (Phase.SUSPENDED, True, CROUPIER, ["set_partage_preference"]),  # the director alone resumes
    (Phase.SUSPENDED, True, DIRECTOR, ["open_spin", "close_table", "set_partage_preference", "register_societa",
                                       "change_settings", "raise_limit", "mark_unclaimed"]),
    # An RNG table: the server runs the wheel, only players stake, no late bets.
    (Phase.OPEN, False, SYSTEM, ["launch_ball", "refund_spin"]),
    (Phase.OPEN, False, CROUPIER, ["last_spin"]),
    (Phase.LAUNCHED, False, ANN, ["set_partage_preference"]),
    (Phase.LAUNCHED, False, SYSTEM, ["no_more_bets", "void_spin"]),
    (Phase.LAUNCHED, False, DIRECTOR, ["accept_late", "refuse_late", "last_spin", "suspend", "close_table",
                                       "register_societa", "change_settings", "raise_limit"]),
    (Phase.NO_MORE_BETS, False, SYSTEM, ["result", "void_spin"]),
    (Phase.SETTLED, False, SYSTEM, ["open_spin"]),
    (Phase.SUSPENDED, False, SYSTEM, []),  # a timer never lifts the Direzione's suspension
    # Nobody else: the server at a live table, a floor id, an unknown role.
    (Phase.OPEN, True, SYSTEM, []),
    (Phase.OPEN, True, Actor("floor:blue"), []),
    (Phase.OPEN, True, Actor("x", "janitor"), []),  # type: ignore[arg-type]
]  # fmt: skip


@pytest.mark.parametrize("phase, live, actor, expected", LEGAL)
def test_legal_commands(phase, live, actor, expected):
    assert at(phase, live).legal_commands(actor) == expected


def test_the_view_carries_the_viewers_legal_commands():
    t = at(Phase.OPEN)
    assert t.view("ann", ANN).legal == [*CHIPS, *PRISONERS]
    assert t.view(actor=ANN).viewer == "ann"
    assert t.view("ann").legal == [] and t.view(None).legal == []
    assert msgspec.json.decode(msgspec.json.encode(t.view("ann", ANN)))["legal"] == [*CHIPS, *PRISONERS]


ACTORS = [ANN, CROUPIER, CHEF, DIRECTOR, SYSTEM]


@pytest.mark.parametrize("live", [True, False], ids=["live", "rng"])
@pytest.mark.parametrize("phase", list(Phase))
def test_legal_commands_agree_with_handle(phase, live):
    """What ``legal_commands`` lists, ``handle`` accepts; what it leaves out, ``handle``
    refuses (for the commands a console sends as they are)."""
    wrong = []
    for actor in ACTORS:
        legal = at(phase, live).legal_commands(actor)
        for tag, (command, _) in SAMPLES.items():
            if isinstance(command, (Suspend, CloseTable)) and actor.role == "chef":
                command = msgspec.structs.replace(command, authorised_by="d1")  # the server's record
            if isinstance(command, (PlaceBet, PlaceAnnounced)) and actor.role != "player":
                command = msgspec.structs.replace(command, player="floor:blue")  # staff name the player
            try:
                at(phase, live).handle(command, actor)
                accepted = True
            except GameError:
                accepted = False
            if accepted != (tag in legal):
                wrong.append((actor.id, tag, accepted))
    assert wrong == []


def test_every_command_class_has_its_tag():
    assert list(TAG.values()) == list(TAGS) and len(set(TAGS)) == len(TAGS) == 22
