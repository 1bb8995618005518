"""The audit chain (issue 17): audit rows sealed after the fact, in id order, one seal per
row (``server.store.audit_chain``); both tables append-only; ``casino audit verify``
recomputes the chain and names the first row where it breaks."""

from __future__ import annotations

import asyncio
import hashlib
import os
import random
import re
import subprocess
import sys

import asyncpg
import pytest

from server.auth import Principal
from server.store import audit, audit_chain

from .conftest import ServerProcess

ADMIN = Principal("admin", "admin")
CHEF = Principal("chef-1", "chef")


async def _write(pool, n: int, start: int = 0) -> None:
    for i in range(start, start + n):
        await audit.record(pool, CHEF if i % 2 else ADMIN, "table.set_limits", f"t{i % 3}",
                           {"max": 100 * i, "reason": f"r{i} \"quoted\" ü", "nested": {"b": 1, "a": [i, None]}})


async def _ids(conn, table: str) -> list[int]:
    return [r[0] for r in await conn.fetch(f"SELECT id FROM {table} ORDER BY id")]


async def _tamper(conn, table: str, trigger: str, sql: str, *args) -> None:
    """What a superuser can do behind the triggers' back."""
    await conn.execute(f"ALTER TABLE {table} DISABLE TRIGGER {trigger}")
    try:
        await conn.execute(sql, *args)
    finally:
        await conn.execute(f"ALTER TABLE {table} ENABLE TRIGGER {trigger}")


async def test_rows_are_sealed_in_id_order_and_the_chain_verifies(pool):
    await _write(pool, 12)
    async with pool.acquire() as conn:
        v = await audit_chain.verify(conn)
        assert (v.ok, v.sealed, v.unsealed, v.head_id) == (True, 0, 12, 0)
        assert await audit_chain.seal(conn) == 12
        assert await _ids(conn, "audit_seals") == await _ids(conn, "audit_log")
        # The chain, recomputed here from its definition.
        prev = bytes(32)
        for r in await conn.fetch("SELECT a.id, a.at, a.actor, a.role, a.action, a.target, a.detail::text AS detail,"
                                  " s.hash FROM audit_log a JOIN audit_seals s USING (id) ORDER BY id"):
            data = audit_chain.canonical(r["id"], r["at"], r["actor"], r["role"], r["action"], r["target"],
                                         r["detail"])
            prev = hashlib.sha256(prev + data).digest()
            assert bytes(r["hash"]) == prev
        first = await audit_chain.verify(conn)
        assert (first.ok, first.sealed, first.unsealed, first.head_hash) == (True, 12, 0, prev.hex())
        assert await audit_chain.seal(conn) == 0  # nothing new
        await _write(pool, 3, start=12)
        assert (await audit_chain.verify(conn)).unsealed == 3
        assert await audit_chain.seal(conn) == 3
        v = await audit_chain.verify(conn)
        assert (v.ok, v.sealed, v.unsealed) == (True, 15, 0)
        assert await audit_chain.verify(conn, anchors={first.head_id: first.head_hash}) == v  # an earlier head holds


async def test_the_sealer_waits_for_a_writer_holding_no_connection(fresh_db):
    """On a pool of two, one connection in a transaction that wrote an audit row: the sealer
    waits for it (its row's id may not be final) without taking the other connection for
    the wait, so the worker's table batches still get one."""
    from games.db.pool import create_pool

    small = await create_pool(fresh_db, min_size=1, max_size=2)
    try:
        async with small.acquire() as writer, writer.transaction():
            await audit.record(writer, ADMIN, "table.set_limits", "t-wait", {"max": 1})
            sealing = asyncio.ensure_future(audit_chain.seal(small, wait_seconds=3.0))
            await asyncio.sleep(0.3)  # the sealer is waiting for the writer now
            assert not sealing.done()
            async with small.acquire(timeout=1.0) as other:  # (before: the sealer held it for the wait)
                assert await other.fetchval("SELECT 1") == 1
        assert await sealing == 1  # the writer committed: its row sealed
    finally:
        await small.close()


async def test_updates_deletes_and_truncates_are_refused(pool):
    await _write(pool, 2)
    await audit_chain.seal(pool)
    async with pool.acquire() as conn:
        for sql in ("UPDATE audit_log SET detail = '{}'", "DELETE FROM audit_log WHERE id = 1",
                    "TRUNCATE audit_log", "UPDATE audit_seals SET hash = hash", "DELETE FROM audit_seals",
                    "TRUNCATE audit_seals"):
            with pytest.raises(asyncpg.RaiseError, match=r"is append-only: (UPDATE|DELETE|TRUNCATE) refused") as err:
                await conn.execute(sql)
            table = sql.split()[2 if sql.startswith("DELETE") else 1]
            assert table in str(err.value), sql
        assert (await audit_chain.verify(conn)).sealed == 2


async def test_a_changed_row_is_named(pool, fresh_db):
    await _write(pool, 8)
    await audit_chain.seal(pool)
    async with pool.acquire() as conn:
        row5 = (await _ids(conn, "audit_log"))[4]
        await _tamper(conn, "audit_log", "audit_log_no_change",
                      """UPDATE audit_log SET detail = jsonb_set(detail, '{max}', '1') WHERE id = $1""", row5)
        v = await audit_chain.verify(conn)
        assert (v.ok, v.row, v.sealed) == (False, row5, 4)
        assert f"audit row {row5} does not match its seal" in v.problem
        # ... and through the command line, exit 1 naming it.
        out = await _cli(fresh_db, "verify")
        assert out.returncode == 1 and f"broken at row {row5}" in out.stderr, out


async def test_a_changed_timestamp_or_seal_is_named(pool):
    await _write(pool, 4)
    await audit_chain.seal(pool)
    async with pool.acquire() as conn:
        ids = await _ids(conn, "audit_log")
        await _tamper(conn, "audit_log", "audit_log_no_change",
                      "UPDATE audit_log SET at = at - interval '1 microsecond' WHERE id = $1", ids[3])
        assert (await audit_chain.verify(conn)).row == ids[3]
        await _tamper(conn, "audit_seals", "audit_seals_no_change",
                      "UPDATE audit_seals SET hash = sha256(hash) WHERE id = $1", ids[1])
        v = await audit_chain.verify(conn)
        assert (v.ok, v.row) == (False, ids[1])


async def test_a_deleted_row_or_seal_is_named(pool):
    await _write(pool, 6)
    await audit_chain.seal(pool)
    async with pool.acquire() as conn:
        ids = await _ids(conn, "audit_log")
        await _tamper(conn, "audit_seals", "audit_seals_no_change", "DELETE FROM audit_seals WHERE id = $1", ids[4])
        v = await audit_chain.verify(conn)
        assert (v.ok, v.row) == (False, ids[4]) and "has no seal" in v.problem
        await _tamper(conn, "audit_log", "audit_log_no_change", "DELETE FROM audit_log WHERE id = $1", ids[2])
        v = await audit_chain.verify(conn)
        assert (v.ok, v.row, v.sealed) == (False, ids[2], 2)
        assert f"seal {ids[2]} has no audit row" in v.problem


async def test_a_rewritten_chain_passes_alone_but_not_against_an_anchor(pool):
    """Whoever can disable the triggers can also reseal everything: the chain then holds
    together, and only a head recorded elsewhere before (an anchor) shows the rewrite."""
    await _write(pool, 5)
    await audit_chain.seal(pool)
    async with pool.acquire() as conn:
        before = await audit_chain.verify(conn)
        await _tamper(conn, "audit_log", "audit_log_no_change",
                      "UPDATE audit_log SET actor = 'nobody' WHERE id = $1", before.head_id - 2)
        await _tamper(conn, "audit_seals", "audit_seals_no_change", "DELETE FROM audit_seals")
        assert await audit_chain.seal(conn) == 5
        assert (await audit_chain.verify(conn)).ok
        v = await audit_chain.verify(conn, anchors={before.head_id: before.head_hash})
        assert (v.ok, v.row) == (False, before.head_id) and "anchored" in v.problem
        # An anchor past the head: the sealed tail was removed.
        v = await audit_chain.verify(conn, anchors={before.head_id + 10: before.head_hash})
        assert not v.ok and "beyond the chain's head" in v.problem


async def test_an_open_insert_holds_back_the_ids_above_it(pool):
    """A transaction that drew an id and has not committed: later rows, committed and
    visible, are not sealed before it ends (else its row would land behind the chain)."""
    await _write(pool, 2)
    slow = await pool.acquire()
    try:
        tx = slow.transaction()
        await tx.start()
        await audit.record(slow, ADMIN, "slow", "x")
        await _write(pool, 3, start=2)  # higher ids, committed
        assert await audit_chain.seal(pool, wait_seconds=0.2) == 0
        async with pool.acquire() as reader:  # a reader does not hold sealing back
            async with reader.transaction():
                await reader.fetch("SELECT * FROM audit_log")
                await tx.commit()
                assert await audit_chain.seal(pool, wait_seconds=0.2) == 6
    finally:
        await pool.release(slow)
    async with pool.acquire() as conn:
        assert (await audit_chain.verify(conn)).sealed == 6


async def test_the_ids_come_from_a_sequence_that_caches_none(pool):
    """The sealing rule's premise: an id <= the sequence's last value was drawn already."""
    cache = await pool.fetchval("SELECT seqcache FROM pg_sequence"
                                " WHERE seqrelid = pg_get_serial_sequence('audit_log', 'id')::regclass")
    assert cache == 1


async def test_two_sealers_at_once_seal_each_row_once(pool):
    await _write(pool, 30)
    counts = await asyncio.gather(*(audit_chain.seal(pool) for _ in range(4)))
    counts = [*counts, await audit_chain.seal(pool)]
    assert sum(counts) == 30
    async with pool.acquire() as conn:
        assert (await audit_chain.verify(conn)).sealed == 30


async def test_concurrent_inserts_while_sealing_leave_no_gap(pool):
    """Writers on several connections (some in slow transactions, some rolled back) while a
    sealer runs: every committed row ends up sealed, in id order, none skipped. A row sealed
    before a lower id became visible would leave that id unsealed under sealed rows, which
    verify reports."""
    rng = random.Random(17)
    stop = asyncio.Event()
    sealed_counts: list[int] = []

    async def writer(w: int) -> None:
        async with pool.acquire() as conn:
            for i in range(25):
                tx = conn.transaction()
                await tx.start()
                await conn.execute("INSERT INTO audit_log (actor, role, action, target, detail)"
                                   " VALUES ($1, 'chef', 'race', $2, '{}')", f"w{w}", str(i))
                await asyncio.sleep(rng.random() * 0.03)
                if rng.random() < 0.15:
                    await tx.rollback()
                else:
                    await tx.commit()
                if rng.random() < 0.3:  # another row in a batch, as a table commit writes them
                    await audit.record_many(conn, [(f"w{w}", "chef", "race.batch", str(i), "{}")] * 2)

    async def sealer() -> None:
        while not stop.is_set():
            sealed_counts.append(await audit_chain.seal(pool, wait_seconds=5.0))
            async with pool.acquire() as conn:  # at every moment, the sealed part holds
                v = await audit_chain.verify(conn)
                assert v.ok, v.problem
            await asyncio.sleep(0.005)

    task = asyncio.create_task(sealer())
    await asyncio.gather(*(writer(w) for w in range(8)))
    stop.set()
    await task
    await audit_chain.seal(pool)
    async with pool.acquire() as conn:
        v = await audit_chain.verify(conn)
        rows = await _ids(conn, "audit_log")
        assert (v.ok, v.unsealed, v.sealed) == (True, 0, len(rows))
        assert await _ids(conn, "audit_seals") == rows
        assert rows[-1] > len(rows)  # some ids were rolled back: holes the chain skips
    assert sum(sealed_counts) > 0  # the sealer did seal while the writers wrote


async def _cli(url: str, *args: str) -> subprocess.CompletedProcess:
    return await asyncio.to_thread(
        subprocess.run, [sys.executable, "-m", "server.cli", "audit", *args], capture_output=True, text=True,
        env={**os.environ, "DATABASE_URL": url}, timeout=60)


@pytest.fixture(scope="module")
def server(db_url: str, tmp_path_factory):
    """The e2e fixture's server, sealing every second."""
    with ServerProcess(db_url, tmp_path_factory.mktemp("server"), CASINO_AUDIT_SEAL_SECONDS="1") as srv:
        yield srv


@pytest.mark.slow
async def test_the_server_seals_and_casino_audit_verify_says_ok(server, floor):
    """Audited actions through the real server; its sealer seals them; the command says ok."""
    await floor.account("ac-chef", "chef")
    await floor.account("ac-player", chips=10_000)  # a cashier deposit: audited
    await floor.table("roulette", "campione", "ac-roul", staff=("ac-chef",))
    admin = await floor.admin()
    try:
        log = await admin.request("GET", "/audit", params={"limit": 5000})
    finally:
        await admin.close()
    assert len(log) >= 3
    conn = await asyncpg.connect(server.db_url)
    try:
        async def sealed() -> bool:
            return (await audit_chain.verify(conn)).sealed >= len(log)

        for _ in range(150):  # the server seals every CASINO_AUDIT_SEAL_SECONDS (here 1)
            if await sealed():
                break
            await asyncio.sleep(0.1)
        assert await sealed(), "the server did not seal its audit rows"
    finally:
        await conn.close()
    out = await _cli(server.db_url, "verify")
    assert out.returncode == 0, out
    m = re.match(r"audit chain ok: (\d+) row\(s\) sealed, head (\d+) ([0-9a-f]{64}); ", out.stdout)
    assert m and int(m[1]) >= len(log), out.stdout
    seal = await _cli(server.db_url, "seal")
    assert seal.returncode == 0 and "sealed" in seal.stdout, seal
