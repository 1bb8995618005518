"""The one error mapper: every refusal leaves as an RFC 9457 problem details document.

``GameError`` (engines, ledger, server) keeps its stable code; Litestar's own HTTP
errors (validation, auth, not found) get a code too, so clients match on ``code`` only.
"""

from __future__ import annotations

from typing import Any

import msgspec
from litestar import Request, Response
from litestar.exceptions import HTTPException, ValidationException

from games.errors import GameError

MEDIA_TYPE = "application/problem+json"

# Codes that are not "the request was understood but refused" (422).
STATUS_BY_CODE = {
    "unauthorized": 401,
    "token_expired": 401,
    "bad_credentials": 401,
    "forbidden": 403,
    "not_your_table": 403,
    "not_your_seat": 403,
    "unknown_table": 404,
    "unknown_user": 404,
    "unknown_round": 404,
    "unknown_account": 404,
    "user_exists": 409,
    "table_exists": 409,
    "id_conflict": 409,
    "internal_error": 500,
}

HTTP_CODES = {400: "bad_request", 401: "unauthorized", 403: "forbidden", 404: "not_found",
              405: "method_not_allowed", 409: "conflict", 413: "too_large", 429: "too_many_requests"}


class Problem(msgspec.Struct, omit_defaults=True):
    type: str
    title: str
    status: int
    detail: str
    code: str
    instance: str = ""
    errors: list[Any] = []


def problem_for(exc: Exception) -> Problem:
    if isinstance(exc, GameError):
        status = STATUS_BY_CODE.get(exc.code, 422)
        return Problem(f"/errors/{exc.code}", exc.code.replace("_", " ").capitalize(), status,
                       exc.message, exc.code)
    if isinstance(exc, ValidationException):
        errors = exc.extra if isinstance(exc.extra, list) else []
        return Problem("/errors/invalid_request", "Invalid request", 400,
                       str(exc.detail), "invalid_request", errors=errors)
    if isinstance(exc, HTTPException):
        code = HTTP_CODES.get(exc.status_code, "http_error")
        return Problem(f"/errors/{code}", code.replace("_", " ").capitalize(), exc.status_code,
                       str(exc.detail), code)
    return Problem("/errors/internal_error", "Internal error", 500,
                   "Something went wrong on our side; nothing was changed.", "internal_error")


def problem_handler(request: Request, exc: Exception) -> Response:
    p = problem_for(exc)
    p.instance = request.url.path
    if p.status >= 500:
        request.logger.exception("unhandled error", exc_info=exc)
    return Response(msgspec.json.encode(p), status_code=p.status, media_type=MEDIA_TYPE)
