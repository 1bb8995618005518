"""People: ``users``, the login throttle (``login_throttle``, migration ``server/0104``) and
the tokens ended by a logout (``revoked_tokens``, ``server/0113``)."""

from __future__ import annotations

import asyncio
import re
from datetime import datetime
from typing import NamedTuple

import asyncpg

from games.errors import GameError
from server.auth import SERVER, SYSTEM, SYSTEM_PREFIX, Principal, hash_password, verify_password

# Lowercase ASCII only: no two names a person reads as one ("Alice" and "alice", a Cyrillic
# "а"), and every name usable in a ledger account id (never a colon: floor players' ids have one).
_USER_NAME = re.compile(r"[a-z0-9][a-z0-9._-]{0,63}")

# Attempts given up while their password was being checked: their release, still running.
_releasing: set[asyncio.Future[str]] = set()


class NewUser(NamedTuple):
    """A checked name and its password's hash, ready to insert (``new_user``)."""

    id: str
    password_hash: str


async def new_user(user_id: str, password: str) -> NewUser:
    """A new account's name checked and its password hashed: before a connection is taken, since
    argon2 spends ≈ 0.1 s on a thread the logins share, and a connection held meanwhile is one a
    worker's table batches (its pool may be as small as 2) wait for."""
    if not isinstance(user_id, str) or not _USER_NAME.fullmatch(user_id):
        raise GameError("invalid_username", "A user name is 1-64 lowercase letters (a-z), digits, '-', '_' or '.', "
                                            "starting with a letter or digit.")
    if user_id == SYSTEM or user_id.startswith(SYSTEM_PREFIX):
        # The server's own actor is "system" (unclaimed expiries, the jackpots, a login lock in
        # the audit) or "system-<id>" at each table and tournament, in events, recall and the
        # audit: no person may go by such a name.
        raise GameError("reserved_username", f"{SYSTEM!r} and names beginning with {SYSTEM_PREFIX!r} are the "
                                             "server's own.")
    if len(password) < 8:
        raise GameError("weak_password", "A password has at least 8 characters.")
    return NewUser(user_id, await hash_password(password))


async def create_user(conn: asyncpg.Connection, user: NewUser, role: str,
                      currency: str = "CHF", *, verified: bool = True) -> Principal:
    """A new account; ``verified``: its age and identity checked (created by staff, or the
    demo); a player who registers himself starts unverified (``server.responsible``)."""
    try:
        await conn.execute(
            "INSERT INTO users (id, password_hash, role, currency, verified_at) "
            "VALUES ($1, $2, $3, $4, CASE WHEN $5 THEN now() END)",
            user.id, user.password_hash, role, currency, verified,
        )
    except asyncpg.UniqueViolationError:
        raise GameError("user_exists", f"The user {user.id!r} already exists.") from None
    return Principal(user.id, role, currency)


# An exclusion in force (a player's row ``e`` of player_exclusions): a self-exclusion until
# the desk lifts it, even past its end; a cool-off until it ends. The rule is SQL's
# (migration 0122), where a batch's stakes are checked too.
EXCLUSION_IN_FORCE = "exclusion_in_force(e.kind, e.until)"


async def get_user(conn: asyncpg.Connection | asyncpg.Pool, user_id: str, *,
                   playing: bool = False, token: str | None = None) -> Principal | None:
    """The user, if he exists and is enabled. ``playing`` (a request or socket of his own):
    a player under a cool-off or self-exclusion is refused (``self_excluded``/``cooling_off``).
    ``token`` (its ``auth.token_key``): a token ended by a logout is refused (``unauthorized``),
    looked up in the same statement."""
    row = await conn.fetchrow(
        f"""SELECT id, role, currency, EXISTS (SELECT 1 FROM player_exclusions e WHERE e.user_id = users.id
                  AND {EXCLUSION_IN_FORCE}) AS excluded,
                  EXISTS (SELECT 1 FROM revoked_tokens r WHERE r.jti = $2) AS revoked
           FROM users WHERE id = $1 AND NOT disabled""", user_id, token)
    if row is None:
        return None
    if row["revoked"]:
        raise GameError("unauthorized", "This session has ended (logged out): log in again.")
    if playing and row["excluded"]:
        from server.responsible import check_not_excluded

        await check_not_excluded(conn, user_id)
    return Principal(row["id"], row["role"], row["currency"])


async def revoke_token(conn: asyncpg.Connection | asyncpg.Pool, token: str, user_id: str,
                       expires_at: datetime) -> None:
    """End the token named ``token`` (``auth.token_key``) before its expiry; again is a no-op.
    Rows whose tokens have expired (a minute's grace for the clocks) go in the same statement."""
    await conn.execute(
        """WITH pruned AS (DELETE FROM revoked_tokens WHERE expires_at < now() - interval '1 minute')
           INSERT INTO revoked_tokens (jti, user_id, expires_at) VALUES ($1, $2, $3)
           ON CONFLICT (jti) DO NOTHING""", token, user_id, expires_at)


async def revoked_among(conn: asyncpg.Connection | asyncpg.Pool, tokens: list[str]) -> set[str]:
    """Which of ``tokens`` (``auth.token_key``) were revoked."""
    rows = await conn.fetch("SELECT jti FROM revoked_tokens WHERE jti = ANY($1::text[])", tokens)
    return {r["jti"] for r in rows}


async def excluded_among(conn: asyncpg.Connection | asyncpg.Pool, user_ids: list[str]) -> set[str]:
    """Which of ``user_ids`` are under an exclusion in force."""
    rows = await conn.fetch(f"SELECT e.user_id FROM player_exclusions e WHERE e.user_id = ANY($1::text[]) "
                            f"AND {EXCLUSION_IN_FORCE}", user_ids)
    return {r["user_id"] for r in rows}


async def list_users(conn: asyncpg.Connection | asyncpg.Pool) -> list[Principal]:
    rows = await conn.fetch("SELECT id, role, currency FROM users ORDER BY id")
    return [Principal(r["id"], r["role"], r["currency"]) for r in rows]


async def authenticate(pool: asyncpg.Pool, user_id: str, password: str, address: str) -> Principal:
    """Check a login, throttled per user name and per client ``address`` (``auth.LoginLimits``):
    ``auth.Throttled`` (429) before any password is checked, ``bad_credentials`` for a wrong
    password or an unknown name alike (same answer, same cost). Takes the pool, not a
    connection: none is held while the password is checked (off the event loop)."""
    from server.auth import LOGIN_LIMITS as lim
    from server.auth import Throttled
    from server.store import audit

    row = await pool.fetchrow("SELECT * FROM login_begin($1, $2, $3, $4, $5)", user_id, address,
                              lim.user_failures, lim.address_failures, lim.window_seconds)
    if row["refusal"]:
        raise Throttled(row["refusal"], row["retry_after"])
    try:
        right = await verify_password(row["password_hash"], password)
    except BaseException:  # (cancelled with its client, or the check failed): no longer being checked
        release = asyncio.ensure_future(pool.execute(
            "UPDATE login_throttle SET checking = greatest(checking - 1, 0) WHERE key = ANY($1::text[])",
            [f"user:{user_id}", f"addr:{address}"]))
        _releasing.add(release)
        release.add_done_callback(_releasing.discard)
        raise
    if right:
        await pool.execute("SELECT login_succeeded($1, $2)", user_id, address)
        return Principal(user_id, row["role"], row["currency"])
    async with pool.acquire() as conn:
        async with conn.transaction():  # a lock with its audit record
            failed = await conn.fetchrow("SELECT * FROM login_failed($1, $2, $3, $4, $5, $6, $7, $8)",
                                         user_id, address, lim.user_failures, lim.address_failures,
                                         lim.delay_seconds, lim.lock_seconds, lim.lock_failures, lim.lock_seconds)
            if failed and failed["locked_until"]:
                await audit.record(conn, SERVER, "auth.lock", user_id,
                                   {"failures": failed["failures"], "address": address,
                                    "until": failed["locked_until"].isoformat()})
    raise GameError("bad_credentials", "Wrong user name or password.")
