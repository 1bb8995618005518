"""The one text check every input passes at the edge: HTTP paths, queries and bodies, and
websocket frames, before anything is decoded into a command or reaches PostgreSQL
(``EdgeText`` for paths and queries, ``check_body`` for HTTP bodies, ``check_json`` in the
websocket's receive loop).

Text may hold tab, newline and carriage return but no other control character, and no
lone surrogate: PostgreSQL cannot store NUL at all (one NUL in a reason once failed a whole
table's commit), and the rest only ever hides text from the people who read it. JSON
carries such characters only as escapes (``\\u0000``, ``\\b``, ``\\f``; the decoder refuses
them raw, and refuses escaped lone surrogates), so a frame is checked on its bytes, with no
second decode. The engines' command types check the same rule again for commands built
in Python (``games.validation.Text``).

>>> check_json(b'{"reason": "tab\\\\tnewline\\\\n"}')
>>> check_json(b'{"reason": "nul\\\\u0000"}')  # doctest: +NORMALIZE_WHITESPACE
Traceback (most recent call last):
...
games.errors.GameError: Text may not hold control characters (NUL, \\b, \\f, ...):
    only tab, newline and carriage return.
>>> check_json(b'{"reason": "a backslash then u0000: \\\\\\\\u0000"}')
"""

from __future__ import annotations

import functools
import re
from typing import Any
from urllib.parse import unquote_to_bytes

import msgspec
from litestar import Request
from litestar.enums import RequestEncodingType, ScopeType
from litestar.middleware import ASGIMiddleware
from litestar.types import ASGIApp, Receive, Scope, Send

from games.errors import GameError
from games.validation import FORBIDDEN_ASCII, FORBIDDEN_CHARS

_BAD_CHAR = re.compile(f"[{FORBIDDEN_CHARS}]")  # the rule itself: games.validation
# The same characters as JSON writes them: an escape of one of them after an even number
# of backslashes (after an odd one it is a literal backslash followed by text). Surrogates
# need no check here: the decoder refuses a lone one. (tests/server/test_edge.py proves
# the two agree on every character.)
_BAD_ESCAPE = re.compile(rb"(?<!\\)(?:\\\\)*\\(?:u00(?:0[0-8bBcCeEfF]|1[0-9a-fA-F]|7[fF])|[bf])")
# ... and as a URL's percent-decoded query bytes.
_BAD_BYTE = re.compile(f"[{FORBIDDEN_ASCII}]".encode())
_MESSAGE = "Text may not hold control characters (NUL, \\b, \\f, ...): only tab, newline and carriage return."


def _refuse() -> GameError:
    return GameError("invalid_text", _MESSAGE)


def check_json(raw: bytes) -> None:
    """Refuse a JSON document whose strings would decode to a forbidden character."""
    # (Most frames hold no backslash, hence no escape: the regex's scan, ≈ 6 µs for a bet's
    # frame and more than decoding it, is skipped for them.)
    if b"\x7f" in raw or (b"\\" in raw and _BAD_ESCAPE.search(raw)):
        raise _refuse()


def check_text(text: str) -> None:
    """Refuse decoded text (a path, a header value) holding a forbidden character."""
    if _BAD_CHAR.search(text):
        raise _refuse()


class EdgeText(ASGIMiddleware):
    """Every HTTP request's path and query, before routing, guards or handlers see them."""

    scopes = (ScopeType.HTTP,)

    async def handle(self, scope: Scope, receive: Receive, send: Send, next_app: ASGIApp) -> None:
        check_text(scope["path"])
        if _BAD_BYTE.search(unquote_to_bytes(scope.get("query_string", b""))):
            raise _refuse()
        await next_app(scope, receive, send)


async def check_body(request: Request[Any, Any, Any]) -> None:
    """Litestar ``before_request``: a body, before it is decoded into the handler's data
    (read once and kept for the handler): UTF-8, no forbidden text, and its JSON read as the
    handler's ``data`` type strictly, each value of its own JSON type. Litestar converts
    bodies leniently (``"500"``, ``500.0`` and ``1e3`` all become the integer an amount
    wants), and money is whole minor units: the websocket's commands refuse all three."""
    if request.method in ("POST", "PUT", "PATCH"):
        body = await request.body()
        try:
            body.decode("utf-8")
        except UnicodeDecodeError:
            raise GameError("invalid_request", "The body is not UTF-8 text.") from None
        check_json(body)
        decoder = strict_decoder(request.route_handler)
        if decoder is not None and body.strip():
            try:
                decoder.decode(body)
            except msgspec.ValidationError as exc:
                raise GameError("invalid_request", f"Invalid request body: {exc}") from None
            except msgspec.DecodeError:
                pass  # not JSON: Litestar's own decoding answers it, as before


@functools.cache
def strict_decoder(handler: Any) -> msgspec.json.Decoder | None:
    """The strict JSON decoder of a route's ``data``, made once a route (None: it takes
    none, or a form's). Litestar reads a body as JSON whatever its Content-Type says unless
    the route declares a form, so the check must not lean on the header either."""
    data = handler.parsed_fn_signature.parameters.get("data")
    form = getattr(data.kwarg_definition, "media_type", None) if data is not None else None
    if data is None or form in (RequestEncodingType.URL_ENCODED, RequestEncodingType.MULTI_PART):
        return None
    return msgspec.json.Decoder(data.annotation)  # (strict: msgspec's default)
