"""The one error mapper: every refusal leaves as an RFC 9457 problem details document.

``GameError`` (engines, ledger, server) keeps its stable code; Litestar's own HTTP
errors (validation, auth, not found) get a code too, so clients match on ``code`` only.
"""

from __future__ import annotations

from typing import Any

import msgspec
from litestar import Litestar, Request, Response
from litestar.exceptions import HTTPException, ValidationException
from litestar.handlers import HTTPRouteHandler
from litestar.openapi.datastructures import ResponseSpec

from games.errors import GameError

MEDIA_TYPE = "application/problem+json"

# Codes that are not "the request was understood but refused" (422).
STATUS_BY_CODE = {
    "invalid_text": 400,
    "invalid_request": 400,
    "unauthorized": 401,
    "token_expired": 401,
    "bad_credentials": 401,
    "forbidden": 403,
    "not_your_table": 403,
    "not_your_seat": 403,
    # The engines' role refusals: the command is understood, the caller may not give it.
    "not_allowed": 403,
    "floor_only": 403,
    "staff_only": 403,
    "players_only": 403,
    "missing_authorisation": 403,
    "unknown_table": 404,
    "unknown_user": 404,
    "unknown_round": 404,
    "unknown_account": 404,
    "unknown_unclaimed": 404,
    "user_exists": 409,
    "table_exists": 409,
    "table_archived": 409,
    "wagers_in_play": 409,
    "table_closing": 409,
    "id_conflict": 409,
    "already_claimed": 409,
    "already_expired": 409,
    "already_countersigned": 409,  # the unclaimed register: another inspector signed the item
    "own_unclaimed": 403,  # ... and nobody countersigns an item he recorded himself
    "table_unavailable": 503,
    "outcome_unknown": 504,  # the table's server took it and did not answer in time: it may apply it
    "too_many_attempts": 429,
    "account_locked": 429,
    "internal_error": 500,
    # Responsible gaming (server.responsible): the player's own exclusion refuses him; the
    # rest are the rules' refusals (422), listed here to be found.
    "self_excluded": 403,
    "cooling_off": 403,
    "not_verified": 422,
    "deposit_limit": 422,
    "stake_limit": 422,
    "loss_limit": 422,
    "invalid_period": 422,
    "invalid_limit": 422,
    "invalid_verification": 422,
    "not_excluded": 404,
    "exclusion_in_force": 409,
}

HTTP_CODES = {400: "bad_request", 401: "unauthorized", 403: "forbidden", 404: "not_found",
              405: "method_not_allowed", 409: "conflict", 413: "too_large", 429: "too_many_requests"}


class ProblemDetails(msgspec.Struct, omit_defaults=True):
    """An RFC 9457 document; ``code`` is the stable one clients match on."""

    type: str
    title: str
    status: int
    detail: str
    code: str
    instance: str = ""
    errors: list[Any] = []
    until: str | None = None  # self_excluded, cooling_off, exclusion_in_force: when it ends
    allowed: int | None = None  # deposit_limit, stake_limit, loss_limit: what may still be deposited or bet now
    period: str | None = None  # deposit_limit: the window whose limit it is


def problem_for(exc: Exception) -> ProblemDetails:
    if isinstance(exc, GameError):
        status = STATUS_BY_CODE.get(exc.code, 422)
        d = getattr(exc, "details", None) or {}
        return ProblemDetails(f"/errors/{exc.code}", exc.code.replace("_", " ").capitalize(), status,
                              exc.message, exc.code, until=d.get("until"), allowed=d.get("allowed"),
                              period=d.get("period"))
    if isinstance(exc, ValidationException):
        errors = exc.extra if isinstance(exc.extra, list) else []
        return ProblemDetails("/errors/invalid_request", "Invalid request", 400,
                              str(exc.detail), "invalid_request", errors=errors)
    if isinstance(exc, HTTPException):
        code = HTTP_CODES.get(exc.status_code, "http_error")
        return ProblemDetails(f"/errors/{code}", code.replace("_", " ").capitalize(), exc.status_code,
                              str(exc.detail), code)
    return ProblemDetails("/errors/internal_error", "Internal error", 500,
                          "Something went wrong on our side; nothing was changed.", "internal_error")


def problem_handler(request: Request, exc: Exception) -> Response:
    p = problem_for(exc)
    p.instance = request.url.path
    if p.status >= 500:
        request.logger.exception("unhandled error", exc_info=exc)
    # A refusal that says when to come back (a throttled login): Retry-After, in seconds.
    retry_after = getattr(exc, "retry_after", None)
    headers = {"Retry-After": str(retry_after)} if retry_after is not None else None
    return Response(msgspec.json.encode(p), status_code=p.status, media_type=MEDIA_TYPE, headers=headers)


# What each status means on this API, for the OpenAPI document.
_REFUSALS = {
    400: "Malformed request: bad JSON, a field of the wrong type, unknown fields, forbidden text",
    401: "Not logged in, or the token expired or was logged out",
    403: "Your role (or your assignment) does not allow this",
    404: "No such user, table, round or account",
    409: "It exists already, or the id was used with other content",
    422: "Understood but refused by the rules (the code says which)",
    429: "Too many attempts: wait for Retry-After seconds",
    500: "Something went wrong on our side; nothing was changed",
    503: "The table is not being served right now (it is moving to another process, or starting): retry",
    504: "The table's server (another process) took the request and did not answer in time: it may yet "
         "apply it; look before retrying",
}
_PUBLIC = ("/auth/", "/schema", "/asyncapi", "/health")


def document_refusals(app: Litestar) -> None:
    """List every route's possible refusals in the OpenAPI document as problem details
    (``application/problem+json``), from the route's shape: who may call it, its path
    parameters, its method. Handlers may declare more of their own."""
    for route in app.routes:
        for handler in getattr(route, "route_handlers", ()):
            if not isinstance(handler, HTTPRouteHandler) or not handler.include_in_schema:
                continue
            statuses = {400, 422, 500}
            if not route.path.startswith(_PUBLIC):
                statuses |= {401, 403}
            if "{table_id" in route.path:
                statuses |= {404, 409, 503, 504}  # no such table; archived; moving; its owner did not answer
            elif "{" in route.path:
                statuses.add(404)
            if handler.http_methods & {"POST", "PUT"}:
                statuses.add(409)
            if route.path == "/auth/login":
                statuses |= {401, 429}
            if route.path == "/auth/session":  # the pages' login (and from another origin: 403), and logout
                statuses |= {401, 403, 429}
            if route.path == "/auth/logout":  # the caller's own token (a revoked one: 401)
                statuses.add(401)
            handler.responses = {
                **{status: ResponseSpec(ProblemDetails, description=_REFUSALS[status], media_type=MEDIA_TYPE,
                                        generate_examples=False)
                   for status in sorted(statuses)},
                **(handler.responses or {}),
            }
