"""Reading and writing the server's rows: users, tables, committed table state, events."""

from __future__ import annotations

import asyncio
import re
from typing import Any

import asyncpg
import msgspec

from games.errors import GameError
from server.auth import Principal, hash_password, verify_password
from server.kinds.base import Authorisation, TableInfo


# ---- users -----------------------------------------------------------------------------


# Lowercase ASCII only: no two names a person reads as one ("Alice" and "alice", a Cyrillic
# "а"), and every name usable in a ledger account id (never a colon: floor players' ids have one).
_USER_NAME = re.compile(r"[a-z0-9][a-z0-9._-]{0,63}")


async def create_user(conn, user_id: str, password: str, role: str, currency: str = "CHF") -> Principal:
    if not isinstance(user_id, str) or not _USER_NAME.fullmatch(user_id):
        raise GameError("invalid_username",
                        "A user name is 1-64 lowercase letters (a-z), digits, '-', '_' or '.', starting with a letter or digit.")
    if len(password) < 8:
        raise GameError("weak_password", "A password has at least 8 characters.")
    try:
        await conn.execute(
            "INSERT INTO users (id, password_hash, role, currency) VALUES ($1, $2, $3, $4)",
            user_id, await hash_password(password), role, currency,
        )
    except asyncpg.UniqueViolationError:
        raise GameError("user_exists", f"The user {user_id!r} already exists.") from None
    return Principal(user_id, role, currency)


async def get_user(conn, user_id: str) -> Principal | None:
    row = await conn.fetchrow("SELECT id, role, currency FROM users WHERE id = $1 AND NOT disabled", user_id)
    return Principal(row["id"], row["role"], row["currency"]) if row else None


async def authenticate(pool, user_id: str, password: str, address: str) -> Principal:
    """Check a login, throttled per user name and per client ``address`` (``auth.LoginLimits``):
    ``auth.Throttled`` (429) before any password is checked, ``bad_credentials`` for a wrong
    password or an unknown name alike (same answer, same cost). Takes the pool, not a
    connection: none is held while the password is checked (off the event loop)."""
    from server import audit
    from server.auth import LOGIN_LIMITS as lim, Throttled

    row = await pool.fetchrow("SELECT * FROM login_begin($1, $2, $3, $4, $5)", user_id, address,
                              lim.user_failures, lim.address_failures, lim.window_seconds)
    if row["refusal"]:
        raise Throttled(row["refusal"], row["retry_after"])
    try:
        right = await verify_password(row["password_hash"], password)
    except BaseException:  # (cancelled with its client, or the check failed): no longer being checked
        asyncio.ensure_future(pool.execute(
            "UPDATE login_throttle SET checking = greatest(checking - 1, 0) WHERE key = ANY($1::text[])",
            [f"user:{user_id}", f"addr:{address}"]))
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
                await audit.record(conn, Principal("system", "system"), "auth.lock", user_id,
                                   {"failures": failed["failures"], "address": address,
                                    "until": failed["locked_until"].isoformat()})
    raise GameError("bad_credentials", "Wrong user name or password.")


async def list_users(conn) -> list[Principal]:
    rows = await conn.fetch("SELECT id, role, currency FROM users ORDER BY id")
    return [Principal(r["id"], r["role"], r["currency"]) for r in rows]


# ---- tables ----------------------------------------------------------------------------


def _info(row, staff: list[str], auths: list[Authorisation]) -> TableInfo:
    return TableInfo(row["id"], row["game"], row["profile"], row["mode"], row["currency"], row["name"],
                     msgspec.json.decode(row["settings"]), staff, row["archived_at"] is not None, auths)


async def load_tables(conn, table_id: str | None = None) -> list[TableInfo]:
    """Every table (or one), archived ones included, with its staff and the chefs'
    authorisations still valid."""
    rows = await conn.fetch(
        """SELECT id, game, profile, mode, currency, name, settings::text AS settings, archived_at
           FROM casino_tables WHERE $1::text IS NULL OR id = $1 ORDER BY id""",
        table_id,
    )
    staff: dict[str, list[str]] = {}
    for r in await conn.fetch(
        "SELECT table_id, user_id FROM table_staff WHERE $1::text IS NULL OR table_id = $1 ORDER BY user_id", table_id
    ):
        staff.setdefault(r["table_id"], []).append(r["user_id"])
    auths: dict[str, list[Authorisation]] = {}
    for r in await conn.fetch(
        """SELECT table_id, action, chef, director, valid_until FROM table_authorisations
           WHERE ($1::text IS NULL OR table_id = $1) AND valid_until > now() ORDER BY id""",
        table_id,
    ):
        auths.setdefault(r["table_id"], []).append(Authorisation(r["action"], r["chef"], r["director"], r["valid_until"]))
    return [_info(r, staff.get(r["id"], []), auths.get(r["id"], [])) for r in rows]


async def insert_table(conn, info: TableInfo, created_by: str) -> None:
    try:
        await conn.execute(
            """INSERT INTO casino_tables (id, game, profile, mode, currency, name, settings, created_by)
               VALUES ($1, $2, $3, $4, $5, $6, $7::jsonb, $8)""",
            info.id, info.game, info.profile, info.mode, info.currency, info.name,
            msgspec.json.encode(info.settings).decode(), created_by,
        )
    except asyncpg.UniqueViolationError:
        raise GameError("table_exists", f"A table {info.id!r} already exists.") from None


async def assign_staff(conn, table_id: str, user_id: str) -> None:
    await conn.execute(
        "INSERT INTO table_staff (table_id, user_id) VALUES ($1, $2) ON CONFLICT DO NOTHING", table_id, user_id
    )


async def grant_authorisation(conn, table_id: str, action: str, chef: str, director: str, reason: str,
                              minutes: int) -> Authorisation:
    row = await conn.fetchrow(
        """INSERT INTO table_authorisations (table_id, action, chef, director, reason, valid_until)
           VALUES ($1, $2, $3, $4, $5, now() + make_interval(mins => $6)) RETURNING valid_until""",
        table_id, action, chef, director, reason, minutes,
    )
    return Authorisation(action, chef, director, row["valid_until"])


async def archive_table(conn, table_id: str, by: str) -> bool:
    """Mark the table archived (once); False if it already was."""
    return await conn.fetchval(
        "UPDATE casino_tables SET archived_at = now(), archived_by = $2 WHERE id = $1 AND archived_at IS NULL "
        "RETURNING true",
        table_id, by,
    ) is not None


# Every process serving tables listens here: a table's staff, authorisations or archive state
# changed, or its owner let it go; the payload is the table id. Sent inside the transaction
# that made the change, so it arrives only once the change is committed.
TABLE_CHANGED = "casino_table_changed"


async def notify_table_changed(conn, table_id: str) -> None:
    await conn.execute("SELECT pg_notify($1, $2)", TABLE_CHANGED, table_id)


# ---- committed state and events --------------------------------------------------------


async def load_state(conn, table_id: str) -> tuple[int, bytes] | None:
    row = await conn.fetchrow("SELECT seq, state FROM table_state WHERE table_id = $1", table_id)
    return (row["seq"], bytes(row["state"])) if row else None


async def events_after(conn, table_id: str, since: int, limit: int = 10_000) -> list[tuple[int, str, bytes]]:
    rows = await conn.fetch(
        """SELECT seq, round, payload::text AS payload FROM table_events
           WHERE table_id = $1 AND seq > $2 ORDER BY seq LIMIT $3""",
        table_id, since, limit,
    )
    return [(r["seq"], r["round"], r["payload"].encode()) for r in rows]


class RoundStep(msgspec.Struct):
    seq: int
    at: str
    actor: str
    kind: str
    event: Any


async def round_steps(conn, table_id: str, round_id: str) -> list[RoundStep]:
    rows = await conn.fetch(
        """SELECT seq, at, actor, kind, payload::text AS payload FROM table_events
           WHERE table_id = $1 AND round = $2 ORDER BY seq""",
        table_id, round_id,
    )
    return [RoundStep(r["seq"], r["at"].isoformat(), r["actor"], r["kind"], msgspec.json.decode(r["payload"]))
            for r in rows]


class RoundRef(msgspec.Struct):
    table: str
    round: str
    at: str


async def player_rounds(conn, user_id: str, limit: int = 100) -> list[RoundRef]:
    rows = await conn.fetch(
        """SELECT table_id, round, first_at FROM round_players WHERE user_id = $1
           ORDER BY first_at DESC LIMIT $2""",
        user_id, limit,
    )
    return [RoundRef(r["table_id"], r["round"], r["first_at"].isoformat()) for r in rows]


async def played_round(conn, user_id: str, table_id: str, round_id: str) -> bool:
    return bool(await conn.fetchval(
        "SELECT 1 FROM round_players WHERE user_id = $1 AND table_id = $2 AND round = $3",
        user_id, table_id, round_id,
    ))
