"""The answer given to each accepted command (``command_results``), so a retry of a command
id at its table is answered again, never applied twice (written with each batch:
``state.record_batches``)."""

from __future__ import annotations

from collections.abc import Sequence

import asyncpg


async def answered(conn: asyncpg.Connection, table_id: str, users: Sequence[str], cids: Sequence[str],
                   currency: str = "") -> tuple[dict[tuple[str, str], str], set[str]]:
    """Of the commands ``(users[i], cids[i])`` sent to ``table_id``, those already accepted
    there: (user, command id) -> the ``Accepted`` answer as JSON; and which of the users have
    stake or loss limits in ``currency`` (``server.play_limits``), in the same round trip, so
    that a batch of players without limits pays nothing for the check."""
    rows = await conn.fetch(
        """SELECT user_id, cid, result::text AS result FROM commands_answered($3, $1::text[], $2::text[])
           UNION ALL
           SELECT user_id, NULL, NULL FROM players_with_limits($1::text[], $4)""",
        users, cids, table_id, currency,
    )
    done = {(r["user_id"], r["cid"]): r["result"] for r in rows if r["cid"] is not None}
    return done, {r["user_id"] for r in rows if r["cid"] is None}


async def limited_among(conn: asyncpg.Connection, users: Sequence[str], currency: str) -> set[str]:
    """Which of ``users`` have stake or loss limits in ``currency`` or an exclusion in force:
    for a batch's stakers who sent none of its commands (a late bet the chef accepts)."""
    rows = await conn.fetch("SELECT user_id FROM players_with_limits($1::text[], $2)", list(users), currency)
    return {r["user_id"] for r in rows}
