"""Who played which round: ``round_players``, for a player's history and for his right to
recall a round (written with each batch: ``state.record_batches``)."""

from __future__ import annotations

import asyncpg
import msgspec


class RoundRef(msgspec.Struct):
    table: str
    round: str
    at: str


async def player_rounds(conn: asyncpg.Connection, user_id: str, limit: int = 100) -> list[RoundRef]:
    rows = await conn.fetch(
        """SELECT table_id, round, first_at FROM round_players WHERE user_id = $1
           ORDER BY first_at DESC LIMIT $2""",
        user_id, limit,
    )
    return [RoundRef(r["table_id"], r["round"], r["first_at"].isoformat()) for r in rows]


async def played_round(conn: asyncpg.Connection, user_id: str, table_id: str, round_id: str) -> bool:
    return bool(await conn.fetchval(
        "SELECT 1 FROM round_players WHERE user_id = $1 AND table_id = $2 AND round = $3",
        user_id, table_id, round_id,
    ))
