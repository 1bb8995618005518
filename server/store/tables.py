"""Casino tables as configured: ``casino_tables``, their staff (``table_staff``), the chefs'
authorisations (``table_authorisations``), and the notice that one of them changed."""

from __future__ import annotations

import asyncpg
import msgspec

from games.errors import GameError
from server.kinds.base import Authorisation, TableInfo

# Every process serving tables listens here: a table's staff, authorisations or archive state
# changed, or its owner let it go; the payload is the table id. Sent inside the transaction
# that made the change, so it arrives only once the change is committed.
TABLE_CHANGED = "casino_table_changed"


def _info(row: asyncpg.Record, staff: list[str], auths: list[Authorisation]) -> TableInfo:
    return TableInfo(row["id"], row["game"], row["profile"], row["mode"], row["currency"], row["name"],
                     msgspec.json.decode(row["settings"]), staff, row["archived_at"] is not None, auths)


async def load_tables(conn: asyncpg.Connection, table_id: str | None = None) -> list[TableInfo]:
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
        auth = Authorisation(r["action"], r["chef"], r["director"], r["valid_until"])
        auths.setdefault(r["table_id"], []).append(auth)
    return [_info(r, staff.get(r["id"], []), auths.get(r["id"], [])) for r in rows]


async def any_table(conn: asyncpg.Connection) -> bool:
    """Whether the floor has any table at all (the demo seeds only an empty one)."""
    return bool(await conn.fetchval("SELECT EXISTS (SELECT 1 FROM casino_tables)"))


async def insert_table(conn: asyncpg.Connection, info: TableInfo, created_by: str) -> None:
    try:
        await conn.execute(
            """INSERT INTO casino_tables (id, game, profile, mode, currency, name, settings, created_by)
               VALUES ($1, $2, $3, $4, $5, $6, $7::jsonb, $8)""",
            info.id, info.game, info.profile, info.mode, info.currency, info.name,
            msgspec.json.encode(info.settings).decode(), created_by,
        )
    except asyncpg.UniqueViolationError:
        raise GameError("table_exists", f"A table {info.id!r} already exists.") from None


async def assign_staff(conn: asyncpg.Connection, table_id: str, user_id: str) -> None:
    await conn.execute(
        "INSERT INTO table_staff (table_id, user_id) VALUES ($1, $2) ON CONFLICT DO NOTHING", table_id, user_id
    )


async def grant_authorisation(conn: asyncpg.Connection, table_id: str, action: str, chef: str, director: str,
                              reason: str, minutes: int) -> Authorisation:
    row = await conn.fetchrow(
        """INSERT INTO table_authorisations (table_id, action, chef, director, reason, valid_until)
           VALUES ($1, $2, $3, $4, $5, now() + make_interval(mins => $6)) RETURNING valid_until""",
        table_id, action, chef, director, reason, minutes,
    )
    return Authorisation(action, chef, director, row["valid_until"])


async def archive_table(conn: asyncpg.Connection, table_id: str, by: str) -> bool:
    """Mark the table archived (once); False if it already was."""
    return await conn.fetchval(
        "UPDATE casino_tables SET archived_at = now(), archived_by = $2 WHERE id = $1 AND archived_at IS NULL "
        "RETURNING true",
        table_id, by,
    ) is not None


async def notify_table_changed(conn: asyncpg.Connection, table_id: str) -> None:
    await conn.execute("SELECT pg_notify($1, $2)", TABLE_CHANGED, table_id)
