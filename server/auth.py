"""Who is calling: password hashing (argon2id), JWT tokens (Litestar's), roles and guards."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone
from typing import Any

import msgspec
from argon2 import PasswordHasher
from argon2.exceptions import InvalidHashError, VerificationError
from litestar.connection import ASGIConnection
from litestar.exceptions import NotAuthorizedException
from litestar.handlers.base import BaseRouteHandler
from litestar.security.jwt import JWTAuth, Token

from games.errors import GameError

ROLES = ("player", "croupier", "chef", "inspector", "director", "admin")
# Who may run the floor: a chef de table (pit boss) may do what a croupier does.
CONSOLE_ROLES = ("croupier", "chef")
MANAGER_ROLES = ("director", "admin")

_hasher = PasswordHasher()


def hash_password(password: str) -> str:
    return _hasher.hash(password)


def verify_password(hashed: str, password: str) -> bool:
    try:
        return _hasher.verify(hashed, password)
    except (VerificationError, InvalidHashError):
        return False


class Principal(msgspec.Struct, frozen=True):
    """The authenticated caller, as the token and the users table say."""

    id: str
    role: str
    currency: str = "CHF"


def make_jwt_auth(secret: str, minutes: int, retrieve_user) -> JWTAuth[Principal]:
    return JWTAuth[Principal](
        retrieve_user_handler=retrieve_user,
        token_secret=secret,
        default_token_expiration=timedelta(minutes=minutes),
        # The websocket authenticates itself (header or ?token=), to answer with a close code.
        exclude=["/auth/login", "/auth/register", "/schema", "/asyncapi.json", "/health", "/ws"],
    )


def decode_token(secret: str, encoded: str) -> Token:
    """Decode and verify (signature, expiry); GameError('token_expired'/'unauthorized')."""
    try:
        return Token.decode(encoded, secret, "HS256")
    except NotAuthorizedException as exc:
        detail = f"{exc.detail} {exc.__cause__}".lower()
        if "expired" in detail:
            raise GameError("token_expired", "Your session has expired: log in again.") from None
        raise GameError("unauthorized", "Invalid token: log in again.") from None


def token_expiry(token: Token) -> datetime:
    exp = token.exp
    return exp if exp.tzinfo else exp.replace(tzinfo=timezone.utc)


def require_roles(*roles: str):
    """A Litestar guard: the caller's role must be one of ``roles``."""

    def guard(connection: ASGIConnection[Any, Principal, Any, Any], _: BaseRouteHandler) -> None:
        if connection.user.role not in roles:
            raise GameError("forbidden", f"This needs one of the roles: {', '.join(roles)}.")

    return guard
