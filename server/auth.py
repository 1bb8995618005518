"""Who is calling: password hashing (argon2id), the login throttle, JWT tokens (Litestar's),
how a websocket presents its token. (Who may do what: ``server.policy``.)"""

from __future__ import annotations

import asyncio
import math
import os
import secrets
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

import msgspec
from argon2 import PasswordHasher
from argon2.exceptions import InvalidHashError, VerificationError
from litestar.exceptions import NotAuthorizedException
from litestar.security.jwt import JWTAuth, JWTCookieAuth, Token

from games.errors import GameError

_hasher = PasswordHasher()
# argon2 costs about 0.1 s of CPU (on up to 4 lanes) and releases the GIL: a few threads
# off the event loop, so a burst of logins never delays a socket's frames.
HASH_THREADS = int(os.environ.get("CASINO_LOGIN_HASH_THREADS", 0)) or min(4, max(1, (os.cpu_count() or 2) // 2))
_hashing = ThreadPoolExecutor(HASH_THREADS, thread_name_prefix="argon2")
# What an unknown name's password is checked against: made now, so that even the first
# unknown name costs exactly a check.
_dummy_hash = _hashing.submit(_hasher.hash, secrets.token_urlsafe(24))


async def hash_password(password: str) -> str:
    return await asyncio.get_running_loop().run_in_executor(_hashing, _hasher.hash, password)


def _verify(hashed: str, password: str) -> bool:
    try:
        return _hasher.verify(hashed, password)
    except (VerificationError, InvalidHashError):
        return False


async def verify_password(hashed: str | None, password: str) -> bool:
    """Whether ``password`` matches ``hashed``; ``None`` (no such user) is checked against a
    fixed hash of the same parameters, so it costs what a wrong password costs, and fails."""
    loop = asyncio.get_running_loop()
    if hashed is None:
        await loop.run_in_executor(_hashing, _verify, await asyncio.wrap_future(_dummy_hash), password)
        return False
    return await loop.run_in_executor(_hashing, _verify, hashed, password)


# ---- the login throttle ------------------------------------------------------------------


def _env(name: str, default: float) -> float:
    return float(os.environ.get(name, default))


@dataclass(frozen=True)
class LoginLimits:
    """Failed logins per user name and per client address (``login_throttle``, migration 0104).

    Past ``user_failures`` failures of one name (``address_failures`` from one address), each
    further failure makes the next attempt wait ``delay_seconds``, doubling each time (at most
    ``lock_seconds``): 429 ``too_many_attempts`` with Retry-After. At ``lock_failures``
    failures of one name the account is locked for ``lock_seconds`` (429 ``account_locked``,
    in the audit log). A refused attempt checks no password. Failures older than
    ``window_seconds`` are forgotten; a successful login clears its user's."""

    user_failures: int = 5
    address_failures: int = 20
    delay_seconds: float = 30.0
    lock_failures: int = 10
    lock_seconds: float = 900.0
    window_seconds: float = 3600.0

    @classmethod
    def from_env(cls) -> LoginLimits:
        d = cls()
        return cls(
            user_failures=int(_env("CASINO_LOGIN_USER_FAILURES", d.user_failures)),
            address_failures=int(_env("CASINO_LOGIN_ADDRESS_FAILURES", d.address_failures)),
            delay_seconds=_env("CASINO_LOGIN_DELAY_SECONDS", d.delay_seconds),
            lock_failures=int(_env("CASINO_LOGIN_LOCK_FAILURES", d.lock_failures)),
            lock_seconds=_env("CASINO_LOGIN_LOCK_SECONDS", d.lock_seconds),
            window_seconds=_env("CASINO_LOGIN_WINDOW_SECONDS", d.window_seconds),
        )


LOGIN_LIMITS = LoginLimits.from_env()


class Throttled(GameError):
    """A login refused before any password is checked: 429 with Retry-After."""

    def __init__(self, code: str, retry_after: float) -> None:
        message = ("Too many failed logins: this account is locked for now." if code == "account_locked"
                   else "Too many failed logins: wait before trying again.")
        super().__init__(code, message)
        self.retry_after = max(1, math.ceil(retry_after))  # whole seconds, as Retry-After says


# ---- how a websocket presents its token (never in the URL: URLs are logged) -------------------

SUBPROTOCOL = "casino.v1"
BEARER_PREFIX = "bearer."  # browsers: Sec-WebSocket-Protocol: casino.v1, bearer.<token>
WS_AUTH_SECONDS = _env("CASINO_WS_AUTH_SECONDS", 5.0)  # for the first frame {"type": "auth", ...}


def bearer_from_subprotocols(offered: list[str]) -> str | None:
    for p in offered:
        if p.startswith(BEARER_PREFIX) and len(p) > len(BEARER_PREFIX):
            return p[len(BEARER_PREFIX):]
    return None


class Principal(msgspec.Struct, frozen=True):
    """The authenticated caller, as the token and the users table say."""

    id: str
    role: str
    currency: str = "CHF"


# The server's own actor, as events, recall and the audit name it: ``SERVER`` where no table
# or tournament is its own, ``system_actor`` at each of them. No user may take such a name
# (``server.store.users.new_user``).
SYSTEM = "system"
SYSTEM_PREFIX = "system-"
SERVER = Principal(SYSTEM, "system")


def system_actor(of: str, currency: str) -> Principal:
    """The server itself at a table or a tournament ``of``: its timers, recovery and seat
    releases, as events, recall and the audit name it."""
    return Principal(f"{SYSTEM_PREFIX}{of}", "system", currency)


class Tokens:
    """Issues the bearer tokens that Litestar's JWT middleware (``make_jwt_auth``) checks."""

    def __init__(self, jwt_auth: JWTAuth[Principal], minutes: int) -> None:
        self.jwt_auth = jwt_auth
        self.minutes = minutes

    def issue(self, who: Principal) -> tuple[str, datetime]:
        """A token for ``who`` (the role rides along, for clients) and when it expires."""
        lifetime = timedelta(minutes=self.minutes)
        # Its own id (``jti``): what a logout revokes (``token_key``).
        token = self.jwt_auth.create_token(identifier=who.id, token_expiration=lifetime,
                                           token_extras={"role": who.role},
                                           token_unique_jwt_id=secrets.token_urlsafe(16))
        return token, datetime.now(UTC) + lifetime


def token_key(token: Token) -> str:
    """What names ``token`` in ``revoked_tokens`` (a logout, ``server.sessions``): its ``jti``.
    A token issued before tokens had one (migration 0113) is named by its signed user and
    issue second, ``<user>@<iat>`` (no jti can hold an ``@``), so it can be logged out too;
    two such tokens of one user issued within the same second share the name."""
    jti = token.jti
    if isinstance(jti, str) and jti:
        return jti
    return f"{token.sub}@{int(token.iat.timestamp())}"


# ---- the pages' session: the token in a cookie no script can read ------------------------------

# The web pages (``server.web``) never hold the token: ``POST /auth/session`` puts it in this
# HttpOnly, SameSite=Strict cookie, which the browser sends to this origin only (HTTP and the
# websocket's handshake); a script, ours or anyone's, cannot read it.
SESSION_COOKIE = "casino_session"
SAFE_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})


def same_origin(headers: Any) -> bool:
    """Whether a request that carries the session cookie comes from one of our own pages: its
    ``Origin`` (a browser sends one with every websocket handshake and every POST, PUT and
    DELETE) names the host it was sent to. Another site's page cannot forge it, so it can
    neither play with a visitor's cookie (cross-site websocket hijacking) nor post with it
    (CSRF), even where a browser would send a SameSite cookie."""
    origin = headers.get("origin")
    host = headers.get("host")
    if not origin or not host:
        return False
    scheme, _, rest = origin.partition("://")
    return scheme in ("http", "https") and rest == host


def make_jwt_auth(secret: str, minutes: int, retrieve_user) -> JWTAuth[Principal]:
    """Bearer tokens in ``Authorization`` (scripts, apps, consoles), or the pages' session
    cookie (``SESSION_COOKIE``): Litestar's cookie flavour of its JWT middleware reads both."""
    return JWTCookieAuth[Principal](
        key=SESSION_COOKIE,
        samesite="strict",
        retrieve_user_handler=retrieve_user,
        token_secret=secret,
        default_token_expiration=timedelta(minutes=minutes),
        # The websocket authenticates itself (header, subprotocol or first frame), to answer
        # with a close code.
        # /metrics: operators' scrapers (``server.api.metrics``; an optional scrape token of its own).
        # Anchored: Litestar searches each pattern anywhere in the path, and "/ws" unanchored
        # would also let /accounts/wsmith/balance or /tables/ws-1/staff past the token (a 500).
        # (POST /auth/session, the pages' login, is excluded by its handler's opt; DELETE is not.)
        exclude=["^/auth/(login|register)/?$", "^/$", "^/app(/|$)", "^/schema(/|$)", r"^/asyncapi\.json$",
                 "^/health(/|$)", "^/metrics/?$", "^/ws(/|$)"],
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
    return exp if exp.tzinfo else exp.replace(tzinfo=UTC)
