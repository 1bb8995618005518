"""Reading and writing the server's rows: users, tables, committed table state, events."""

from __future__ import annotations

from typing import Any

import asyncpg
import msgspec

from games.errors import GameError
from server.auth import Principal, hash_password, verify_password
from server.kinds.base import TableInfo


# ---- users -----------------------------------------------------------------------------


async def create_user(conn, user_id: str, password: str, role: str, currency: str = "CHF") -> Principal:
    if not user_id or not user_id.replace("-", "").replace("_", "").replace(".", "").isalnum():
        raise GameError("invalid_username", "A user name is letters, digits, '-', '_' or '.'.")
    if len(password) < 8:
        raise GameError("weak_password", "A password has at least 8 characters.")
    try:
        await conn.execute(
            "INSERT INTO users (id, password_hash, role, currency) VALUES ($1, $2, $3, $4)",
            user_id, hash_password(password), role, currency,
        )
    except asyncpg.UniqueViolationError:
        raise GameError("user_exists", f"The user {user_id!r} already exists.") from None
    return Principal(user_id, role, currency)


async def get_user(conn, user_id: str) -> Principal | None:
    row = await conn.fetchrow("SELECT id, role, currency FROM users WHERE id = $1 AND NOT disabled", user_id)
    return Principal(row["id"], row["role"], row["currency"]) if row else None


async def authenticate(conn, user_id: str, password: str) -> Principal:
    row = await conn.fetchrow(
        "SELECT id, role, currency, password_hash FROM users WHERE id = $1 AND NOT disabled", user_id
    )
    if row is None or not verify_password(row["password_hash"], password):
        raise GameError("bad_credentials", "Wrong user name or password.")
    return Principal(row["id"], row["role"], row["currency"])


async def list_users(conn) -> list[Principal]:
    rows = await conn.fetch("SELECT id, role, currency FROM users ORDER BY id")
    return [Principal(r["id"], r["role"], r["currency"]) for r in rows]


# ---- tables ----------------------------------------------------------------------------


def _info(row, staff: list[str]) -> TableInfo:
    return TableInfo(row["id"], row["game"], row["profile"], row["mode"], row["currency"], row["name"],
                     msgspec.json.decode(row["settings"]), staff)


async def load_tables(conn) -> list[TableInfo]:
    rows = await conn.fetch(
        "SELECT id, game, profile, mode, currency, name, settings::text AS settings FROM casino_tables ORDER BY id"
    )
    staff: dict[str, list[str]] = {}
    for r in await conn.fetch("SELECT table_id, user_id FROM table_staff ORDER BY user_id"):
        staff.setdefault(r["table_id"], []).append(r["user_id"])
    return [_info(r, staff.get(r["id"], [])) for r in rows]


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
