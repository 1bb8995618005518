"""The edge's three forms of the one text rule (decoded text, JSON escapes, query bytes)
agree with each other and with the engines' ``games.validation.Text`` on every character;
and every route's body has a strict decoder."""

from __future__ import annotations

import json

import msgspec
import pytest

from games.errors import GameError
from games.validation import Text
from server import edge
from server.app import create_app
from server.config import Settings


class _Note(msgspec.Struct):
    text: Text


def _refused(check, value) -> bool:
    try:
        check(value)
    except GameError:
        return True
    return False


@pytest.mark.parametrize("code", range(0x80))
def test_every_ascii_character_gets_one_answer_everywhere(code):
    ch = chr(code)
    by_engine = _refused(lambda v: _validated(v), ch)
    assert _refused(edge.check_text, f"a{ch}b") == by_engine
    assert _refused(edge.check_json, json.dumps({"t": f"a{ch}b"}).encode()) == by_engine  # \\u00XX, \\b, \\f...
    assert bool(edge._BAD_BYTE.search(f"a{ch}b".encode())) == by_engine


def test_lone_surrogates_are_refused_as_text_and_by_the_decoder():
    assert _refused(edge.check_text, "a\ud800") and _refused(_validated, "\udfff")
    with pytest.raises(msgspec.DecodeError):
        msgspec.json.decode(b'"\\ud800"')


def _validated(value: str) -> None:
    try:
        msgspec.convert({"text": value}, _Note)
    except msgspec.ValidationError:
        raise GameError("invalid_text", "") from None


@pytest.mark.filterwarnings("ignore::litestar.exceptions.LitestarDeprecationWarning")
def test_every_route_body_has_a_strict_decoder():
    """The edge reads every JSON body as its route's type strictly (``server.edge``): each
    route's ``data`` type is one msgspec can decode, so none answers 500 at its first call."""
    app = create_app(Settings(jwt_secret="x" * 40))
    handlers = [h for route in app.routes for h in getattr(route, "route_handlers", [])]
    with_body = [h for h in handlers if "data" in h.parsed_fn_signature.parameters]
    assert len(with_body) >= 15  # (cashier, credit, accounts, tables, limits, tournaments, ...)
    for handler in with_body:
        assert edge.strict_decoder(handler) is not None, handler
    decoder = edge.strict_decoder(next(h for h in with_body if h.paths == {"/cashier/deposit"}))
    assert decoder is not None
    with pytest.raises(msgspec.ValidationError, match=r"Expected `int`, got `str` - at `\$.amount`"):
        decoder.decode(b'{"user": "ann", "amount": "500"}')
