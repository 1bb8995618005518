"""Commands are bounded wherever they come from (issue 12, items 12 and 18): unknown
fields are refused, amounts are int64 minor units, ids are non-empty names, text has no
control characters; commands built in Python get the same checks as decoded ones. Who
gives a command is never part of it: a ``by`` on the wire is an unknown field."""

from __future__ import annotations

import msgspec
import pytest

from games.commands import Actor
from helpers.actors import ANN, CHEF, CROUPIER, DIRECTOR
from roulette.commands import (
    Command,
    LaunchBall,
    NoMoreBets,
    OpenSpin,
    PlaceAnnounced,
    PlaceBet,
    RaiseLimit,
    RefuseLate,
    RegisterSocieta,
    Result,
    SetPartagePreference,
    Suspend,
    VoidSpin,
    WithdrawBet,
)  # fmt: skip
from roulette.engine import RouletteTable


@pytest.mark.parametrize(
    "wire",
    [b'{"type":"place_bet","player":"ann","spot":"rouge","amount":500,"stake":1}',
     b'{"type":"open_spin","by":{"id":"c1","role":"croupier"}}',
     b'{"type":"open_spin","role":"croupier"}',
     b'{"type":"suspend","authorized_by":"d1"}',
     b'{"type":"change_settings","settings":{"minimum":500,"maxima":{},"maximum":100}}'],
)  # fmt: skip
def test_unknown_fields_are_refused_on_the_wire(wire):
    with pytest.raises(msgspec.ValidationError, match="unknown field"):
        msgspec.json.decode(wire, type=Command)


def test_an_actor_is_refused_with_an_unknown_field_or_an_empty_id():
    # (the server builds the actor from the token; the engine checks it again)
    with pytest.raises(msgspec.ValidationError, match="unknown field"):
        msgspec.json.decode(b'{"id":"c1","role":"croupier","seat":1}', type=Actor)
    with pytest.raises(msgspec.ValidationError):
        msgspec.json.decode(b'{"id":""}', type=Actor)


@pytest.mark.parametrize(
    "wire",
    [b'{"type":"place_bet","player":"ann","spot":"rouge","amount":9223372036854775808}',
     b'{"type":"place_bet","player":"","spot":"rouge","amount":500}',
     b'{"type":"void_spin","reason":"a\\u0000b"}',
     b'{"type":"result","number":3,"turns":-1}'],
)  # fmt: skip
def test_out_of_bounds_fields_are_refused_on_the_wire(wire):
    with pytest.raises(msgspec.ValidationError):
        msgspec.json.decode(wire, type=Command)


def test_a_valid_command_decodes_as_before():
    wire = b'{"type":"suspend","reason":"wheel","authorised_by":"d1"}'
    assert msgspec.json.decode(wire, type=Command) == Suspend(reason="wheel", authorised_by="d1")


@pytest.fixture
def launched() -> RouletteTable:
    t = RouletteTable("t1")
    t.handle(OpenSpin(), CROUPIER)
    t.handle(PlaceBet(player="ann", spot="rouge", amount=1000), ANN)
    t.handle(LaunchBall(), CROUPIER)
    return t


@pytest.mark.parametrize(
    "command",
    [(PlaceBet(player="ann", spot="rouge", amount=2**70), ANN),
     (PlaceBet(player="ann", spot="rouge", amount=2**63), ANN),
     (PlaceAnnounced(player="ann", announce="tiers", unit=2**64), ANN),
     (PlaceBet(player="ann", spot="rouge\x00", amount=500), ANN),
     (PlaceBet(player="ann\x00", spot="rouge", amount=500), Actor("ann\x00")),
     (PlaceBet(player="ann", spot="x" * 129, amount=500), ANN),
     (PlaceBet(player="ann", spot=17, amount=500), ANN),
     (PlaceBet(player="ann", spot=object(), amount=500), ANN),
     (WithdrawBet(wager=""), ANN),
     (RefuseLate(late="s1-l9", reason="x" * 501), CHEF),
     (VoidSpin(reason="wheel\x00fault"), CHEF),
     (Suspend(reason="fault", authorised_by="d1\x07"), CHEF),
     (Result(number=3, turns=10**6), CROUPIER),
     (Result(number=3, source="dice"), CROUPIER),
     (RaiseLimit(kind="plein", maximum=2**70, control_officer="m. rossi"), DIRECTOR),
     (RaiseLimit(kind="plein", maximum=150_000, control_officer="m.\x00rossi"), DIRECTOR),
     (RegisterSocieta(name="", members=["ann", "bob"]), CHEF),
     (RegisterSocieta(name="many", members=[f"p{i}" for i in range(65)]), CHEF)],
    ids=lambda c: type(c[0]).__name__,
)  # fmt: skip
def test_commands_built_in_python_get_the_same_bounds(command, launched, refused):
    err = refused(launched, *command, "invalid_command")
    assert err.message  # msgspec's account of the field


def test_a_rien_ne_va_plus_after_a_refused_command_still_works(launched, refused):
    # the refused command changed nothing, so the table plays on
    refused(launched, PlaceBet(player="ann", spot="noir", amount=2**70), ANN, "invalid_command")
    launched.handle(NoMoreBets(), CROUPIER)
    assert launched.state.phase == "no_more_bets"


@pytest.mark.parametrize(
    "command, code",
    # precise codes the engine has always given for these, kept ahead of the generic check
    [((PlaceBet(player="ann", spot="rouge", amount=1000.5), ANN), "invalid_amount"),
     ((PlaceAnnounced(player="ann", announce="tiers", unit=0), ANN), "invalid_amount"),
     ((SetPartagePreference(player="ann", partage="yes"), ANN), "invalid_preference"),
     ((SetPartagePreference(player="", partage=True), CROUPIER), "unknown_player"),
     ((RaiseLimit(kind="carre", maximum=300_000, control_officer="m. rossi"), DIRECTOR), "raise_not_allowed"),
     ((RaiseLimit(kind="plein", maximum=150_000, control_officer=" "), DIRECTOR), "missing_authorisation")],
    ids=lambda x: x if isinstance(x, str) else type(x[0]).__name__,
)  # fmt: skip
def test_precise_codes_are_kept(command, code, refused):
    t = RouletteTable("t1")
    t.handle(OpenSpin(), CROUPIER)
    refused(t, *command, code)
