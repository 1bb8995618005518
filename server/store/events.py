"""What happened at the tables: ``table_events``, every event with the table's seq, for
resume and round recall (written with each batch: ``state.record_batches``)."""

from __future__ import annotations

from typing import Any

import asyncpg
import msgspec


async def events_after(conn: asyncpg.Connection, table_id: str, since: int,
                       limit: int = 10_000) -> list[tuple[int, str, bytes]]:
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
    event: Any  # the event as the engine wrote it (JSON)


async def last_seq(conn: asyncpg.Connection, table_id: str) -> int:
    """The seq of the table's last committed event (0: none yet)."""
    return int(await conn.fetchval("SELECT max(seq) FROM table_events WHERE table_id = $1", table_id) or 0)


async def round_steps(conn: asyncpg.Connection, table_id: str, round_id: str) -> list[RoundStep]:
    rows = await conn.fetch(
        """SELECT seq, at, actor, kind, payload::text AS payload FROM table_events
           WHERE table_id = $1 AND round = $2 ORDER BY seq""",
        table_id, round_id,
    )
    return [RoundStep(r["seq"], r["at"].isoformat(), r["actor"], r["kind"], msgspec.json.decode(r["payload"]))
            for r in rows]


async def kinds_after(conn: asyncpg.Connection, table_id: str, since: int, kinds: list[str],
                      limit: int = 1000) -> list[tuple[int, str, bytes]]:
    """The table's events of ``kinds`` after ``since``: (seq, kind, JSON), in order."""
    rows = await conn.fetch(
        """SELECT seq, kind, payload::text AS payload FROM table_events
           WHERE table_id = $1 AND seq > $2 AND kind = ANY($3::text[]) ORDER BY seq LIMIT $4""",
        table_id, since, kinds, limit,
    )
    return [(r["seq"], r["kind"], r["payload"].encode()) for r in rows]
