"""The append-only audit log (``audit_log``; a trigger refuses UPDATE/DELETE): who, when, what."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import asyncpg
import msgspec

from server.auth import Principal


async def record(conn: asyncpg.Connection | asyncpg.Pool, who: Principal, action: str,
                 target: str = "", detail: Any = None) -> None:
    await conn.execute(
        "INSERT INTO audit_log (actor, role, action, target, detail) VALUES ($1, $2, $3, $4, $5::jsonb)",
        who.id, who.role, action, target, msgspec.json.encode(detail or {}).decode(),
    )


# (actor, role, action, target, detail as JSON)
Entry = tuple[str, str, str, str, str]


async def record_many(conn: asyncpg.Connection, rows: Sequence[Entry]) -> None:
    """Several records at once (a table batch's console actions, in its transaction)."""
    await conn.executemany(
        "INSERT INTO audit_log (actor, role, action, target, detail) VALUES ($1, $2, $3, $4, $5::jsonb)",
        rows,
    )


class AuditEntry(msgspec.Struct):
    id: int
    at: str
    actor: str
    role: str
    action: str
    target: str
    detail: Any  # what the action carried (JSON)


async def entries(pool: asyncpg.Pool | asyncpg.Connection, *, target: str | None = None,
                  limit: int = 200) -> list[AuditEntry]:
    rows = await pool.fetch(
        """SELECT id, at, actor, role, action, target, detail::text AS detail FROM audit_log
           WHERE ($1::text IS NULL OR target = $1) ORDER BY id DESC LIMIT $2""",
        target, limit,
    )
    return [AuditEntry(r["id"], r["at"].isoformat(), r["actor"], r["role"], r["action"], r["target"],
                       msgspec.json.decode(r["detail"])) for r in rows]
