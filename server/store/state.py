"""A table's committed engine state (``table_state``) and the one statement that commits a
batch of its commands: the lease fence, the events, who played, the accepted command ids
and the new state, together."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import asyncpg


async def load_state(conn: asyncpg.Connection, table_id: str) -> tuple[int, bytes] | None:
    """(seq, state) as last committed, None for a table that never ran."""
    row = await conn.fetchrow("SELECT seq, state FROM table_state WHERE table_id = $1", table_id)
    return (row["seq"], bytes(row["state"])) if row else None


async def create_state(conn: asyncpg.Connection, table_id: str, round_id: str, state: bytes) -> None:
    """A new table's first state, at seq 0 (a table that has one keeps it)."""
    await conn.execute(
        "INSERT INTO table_state (table_id, seq, round, state) VALUES ($1, 0, $2, $3) ON CONFLICT DO NOTHING",
        table_id, round_id, state,
    )


async def replace_state(conn: asyncpg.Connection, table_id: str, state: bytes) -> None:
    """The same state in a newer form (an engine upgraded it on load): seq and round stay."""
    await conn.execute("UPDATE table_state SET state = $2 WHERE table_id = $1", table_id, state)


# Fence (renew the lease only if this process still owns the table), events, who played,
# the accepted command ids and the engine state: one statement per batch.
_RECORD_BATCH = """
WITH fence AS (
    UPDATE table_owners SET lease_until = now() + make_interval(secs => $3)
    WHERE table_id = $1 AND owner = $2 RETURNING 1
), events AS (
    INSERT INTO table_events (table_id, seq, round, kind, actor, payload)
    SELECT $1, u.seq, u.round, u.kind, u.actor, u.payload::jsonb
    FROM unnest($7::bigint[], $8::text[], $9::text[], $10::text[], $11::text[]) AS u(seq, round, kind, actor, payload)
), players AS (
    INSERT INTO round_players (table_id, round, user_id)
    SELECT $1, u.round, u.user_id FROM unnest($12::text[], $13::text[]) AS u(round, user_id)
    ON CONFLICT DO NOTHING
), results AS (
    INSERT INTO command_results (user_id, cid, table_id, result)
    SELECT u.user_id, u.cid, $1, u.result::jsonb
    FROM unnest($14::text[], $15::text[], $16::text[]) AS u(user_id, cid, result)
    ON CONFLICT DO NOTHING
), state AS (
    UPDATE table_state SET seq = $4, round = $5, state = $6, open_refs = $17, updated_at = now()
    WHERE table_id = $1
)
SELECT count(*) FROM fence
"""

# (table, seq, round, event kind, actor, event as JSON)
EventRow = tuple[str, int, str, str, str, str]
# (user, command id, table, the Accepted answer as JSON)
ResultRow = tuple[str, str, str, str]


async def record_batch(conn: asyncpg.Connection, table_id: str, owner: str, lease_seconds: float, seq: int,
                       round_id: str, state: bytes, events: Sequence[EventRow], players: Iterable[tuple[str, str]],
                       results: Sequence[ResultRow], open_refs: list[str]) -> bool:
    """Commit a batch in one statement, one round trip: renew ``owner``'s lease on the table,
    append ``events``, the ``(player, round)`` pairs who played, each accepted command's
    answer (a retry gets it again), and the state after the batch (at ``seq``, in
    ``round_id``, with the ledger refs of the wagers it still holds in play). False if
    ``owner`` no longer holds the table (fencing): the caller's transaction must roll back."""
    columns: list[tuple[object, ...]] = list(zip(*events, strict=True))[1:] if events else [()] * 5
    pairs = list(players)
    owned = await conn.fetchval(
        _RECORD_BATCH, table_id, owner, lease_seconds, seq, round_id, state, *columns,
        [r for _, r in pairs], [p for p, _ in pairs],
        [r[0] for r in results], [r[1] for r in results], [r[3] for r in results],
        open_refs,
    )
    return bool(owned)
