"""Commands are bounded wherever they come from (issue 12, items 12 and 18): unknown
fields are refused, amounts are int64 minor units, ids are non-empty names, text has no
control characters; commands built in Python get the same checks as decoded ones."""

from __future__ import annotations

import msgspec
import pytest

from roulette.commands import (
    Command, LaunchBall, NoMoreBets, OpenSpin, PlaceAnnounced, PlaceBet, RaiseLimit,
    RefuseLate, RegisterSocieta, Result, SetPartagePreference, Suspend, VoidSpin, WithdrawBet,
)  # fmt: skip
from roulette.engine import RouletteTable
from roulette.state import Actor

CROUPIER = Actor("c1", "croupier")
CHEF = Actor("h1", "chef")
DIRECTOR = Actor("d1", "director")
ANN = Actor("ann")


@pytest.mark.parametrize(
    "wire",
    [b'{"type":"place_bet","by":{"id":"ann"},"player":"ann","spot":"rouge","amount":500,"stake":1}',
     b'{"type":"open_spin","by":{"id":"c1","role":"croupier","seat":1}}',
     b'{"type":"suspend","by":{"id":"h1","role":"chef"},"authorized_by":"d1"}',
     b'{"type":"change_settings","by":{"id":"d1","role":"director"},'
     b'"settings":{"minimum":500,"maxima":{},"maximum":100}}'],
)  # fmt: skip
def test_unknown_fields_are_refused_on_the_wire(wire):
    with pytest.raises(msgspec.ValidationError, match="unknown field"):
        msgspec.json.decode(wire, type=Command)


@pytest.mark.parametrize(
    "wire",
    [b'{"type":"place_bet","by":{"id":"ann"},"player":"ann","spot":"rouge","amount":9223372036854775808}',
     b'{"type":"place_bet","by":{"id":"ann"},"player":"","spot":"rouge","amount":500}',
     b'{"type":"place_bet","by":{"id":""},"player":"ann","spot":"rouge","amount":500}',
     b'{"type":"void_spin","by":{"id":"h1","role":"chef"},"reason":"a\\u0000b"}',
     b'{"type":"result","by":{"id":"c1","role":"croupier"},"number":3,"turns":-1}'],
)  # fmt: skip
def test_out_of_bounds_fields_are_refused_on_the_wire(wire):
    with pytest.raises(msgspec.ValidationError):
        msgspec.json.decode(wire, type=Command)


def test_a_valid_command_decodes_as_before():
    wire = b'{"type":"suspend","by":{"id":"h1","role":"chef"},"reason":"wheel","authorised_by":"d1"}'
    assert msgspec.json.decode(wire, type=Command) == Suspend(by=CHEF, reason="wheel", authorised_by="d1")


@pytest.fixture
def launched() -> RouletteTable:
    t = RouletteTable("t1")
    t.handle(OpenSpin(by=CROUPIER))
    t.handle(PlaceBet(by=ANN, player="ann", spot="rouge", amount=1000))
    t.handle(LaunchBall(by=CROUPIER))
    return t


@pytest.mark.parametrize(
    "command",
    [PlaceBet(by=ANN, player="ann", spot="rouge", amount=2**70),
     PlaceBet(by=ANN, player="ann", spot="rouge", amount=2**63),
     PlaceAnnounced(by=ANN, player="ann", announce="tiers", unit=2**64),
     PlaceBet(by=ANN, player="ann", spot="rouge\x00", amount=500),
     PlaceBet(by=Actor("ann\x00"), player="ann\x00", spot="rouge", amount=500),
     PlaceBet(by=ANN, player="ann", spot="x" * 129, amount=500),
     PlaceBet(by=ANN, player="ann", spot=17, amount=500),
     PlaceBet(by=ANN, player="ann", spot=object(), amount=500),
     WithdrawBet(by=ANN, wager=""),
     RefuseLate(by=CHEF, late="s1-l9", reason="x" * 501),
     VoidSpin(by=CHEF, reason="wheel\x00fault"),
     Suspend(by=CHEF, reason="fault", authorised_by="d1\x07"),
     Result(by=CROUPIER, number=3, turns=10**6),
     Result(by=CROUPIER, number=3, source="dice"),
     RaiseLimit(by=DIRECTOR, kind="plein", maximum=2**70, control_officer="m. rossi"),
     RaiseLimit(by=DIRECTOR, kind="plein", maximum=150_000, control_officer="m.\x00rossi"),
     RegisterSocieta(by=CHEF, name="", members=["ann", "bob"]),
     RegisterSocieta(by=CHEF, name="many", members=[f"p{i}" for i in range(65)])],
    ids=lambda c: type(c).__name__,
)  # fmt: skip
def test_commands_built_in_python_get_the_same_bounds(command, launched, refused):
    err = refused(launched, command, "invalid_command")
    assert err.message  # msgspec's account of the field


def test_a_rien_ne_va_plus_after_a_refused_command_still_works(launched, refused):
    # the refused command changed nothing, so the table plays on
    refused(launched, PlaceBet(by=ANN, player="ann", spot="noir", amount=2**70), "invalid_command")
    launched.handle(NoMoreBets(by=CROUPIER))
    assert launched.state.phase == "no_more_bets"


@pytest.mark.parametrize(
    "command, code",
    # precise codes the engine has always given for these, kept ahead of the generic check
    [(PlaceBet(by=ANN, player="ann", spot="rouge", amount=1000.5), "invalid_amount"),
     (PlaceAnnounced(by=ANN, player="ann", announce="tiers", unit=0), "invalid_amount"),
     (SetPartagePreference(by=ANN, player="ann", partage="yes"), "invalid_preference"),
     (SetPartagePreference(by=CROUPIER, player="", partage=True), "unknown_player"),
     (RaiseLimit(by=DIRECTOR, kind="carre", maximum=300_000, control_officer="m. rossi"), "raise_not_allowed"),
     (RaiseLimit(by=DIRECTOR, kind="plein", maximum=150_000, control_officer=" "), "missing_authorisation")],
    ids=lambda x: x if isinstance(x, str) else type(x).__name__,
)  # fmt: skip
def test_precise_codes_are_kept(command, code, refused):
    t = RouletteTable("t1")
    t.handle(OpenSpin(by=CROUPIER))
    refused(t, command, code)
