"""The replay check reads the answers it asks about and no others (migration 0123). A
batch's statement is prepared once per connection and its plan kept (until an ANALYZE of
the table, or asyncpg's statement lifetime); a plan made while command_results was new and
empty joined the batch's keys against every answer the table had given since, so each batch
paid for the table's whole history (issue 14's bench found thousands of rows read a batch,
growing). On a real PostgreSQL, with the generic plan a prepared statement keeps."""

from __future__ import annotations

import pytest

from helpers.databases import rows_read
from server import store

HISTORY = 4_000  # answers at ten tables, 400 each
CHECK = "SELECT EXISTS (SELECT 1 FROM commands_answered($1, $2::text[], $3::text[]))"  # the batch's own


@pytest.fixture
async def conn(pool):
    """A connection whose plans were made on a new database's empty command_results (never
    analysed yet, as before autovacuum's first visit), which then got its history."""
    async with pool.acquire() as c:
        # what a prepared statement settles on after its first executions, at once
        await c.execute("SET plan_cache_mode = force_generic_plan")
        await store.answered(c, "t0", ["p0"], ["c0"], "CHF")
        await c.fetchval(CHECK, "t0", ["p0"], ["c0"])
        await c.execute(
            """INSERT INTO command_results (user_id, cid, table_id, result)
               SELECT 'p' || (i % 20), 'c' || i, 't' || (i % 10), jsonb_build_object('n', i)
               FROM generate_series(1, $1) AS i""", HISTORY)
        yield c


async def test_the_checked_path_reads_one_row_a_key(conn):
    # p1's c1 and p11's c11 were answered at t1; p2's c1 was not (c1 is p1's); c12 is t2's
    users, cids = ["p1", "p11", "p2", "p12"], ["c1", "c11", "c1", "c12"]
    async with conn.transaction():
        before = await rows_read(conn, "command_results")
        done, limited = await store.answered(conn, "t1", users, cids, "CHF")
        assert await rows_read(conn, "command_results") - before <= len(users)
    assert done == {("p1", "c1"): '{"n": 1}', ("p11", "c11"): '{"n": 11}'}
    assert limited == set()


async def test_the_batch_statements_check_reads_one_row_a_key(conn):
    async with conn.transaction():
        before = await rows_read(conn, "command_results")
        assert await conn.fetchval(CHECK, "t3", ["p3", "p4"], ["c3", "c999999"]) is True
        assert await conn.fetchval(CHECK, "t3", ["p4", "p5"], ["c4", "c5"]) is False  # t4's and t5's
        assert await rows_read(conn, "command_results") - before <= 4
