"""The schema's migrations, package by package, on a real PostgreSQL: each package's on its
own, one ``schema_migrations`` keyed by (package, version), a database migrated by the old
single-folder scheme converted in place, ``casino db migrate``."""

from __future__ import annotations

import asyncio
import json
from contextlib import asynccontextmanager
from datetime import UTC, datetime

import asyncpg
import pytest

from games.db.migrate import (
    MigrationError,
    SchemaBehind,
    available,
    migrate,
    require_current,
    status,
)
from games.db.pool import create_pool
from games.ledger import Hold, Ledger, accounts
from helpers.databases import new_database
from server.store import SCHEMA

LEDGER = [m.label for m in available(["games.ledger"])]
SERVER = [m.label for m in available(["server"])]


@pytest.fixture
async def empty_db(pg_url: str):
    """A new database with nothing in it: an URL to it."""
    async with new_database(pg_url, "m") as url:
        yield url


@asynccontextmanager
async def connected(url: str):
    conn = await asyncpg.connect(url)
    try:
        yield conn
    finally:
        await conn.close()


async def recorded(conn: asyncpg.Connection) -> list[tuple]:
    return [tuple(r) for r in await conn.fetch("SELECT package, version, name FROM schema_migrations ORDER BY 1, 2")]


async def test_each_package_migrates_on_its_own_then_the_next(empty_db):
    assert LEDGER and SERVER and SCHEMA == ("games.ledger", "server")
    async with connected(empty_db) as conn:
        assert await migrate(conn, ["games.ledger"]) == LEDGER
        assert await conn.fetchval("SELECT to_regclass('ledger_transfers') IS NOT NULL")
        # nothing of the server's: its tables, nor the view of open rounds the ledger check reads
        assert await conn.fetchval("SELECT to_regclass('users') IS NULL AND to_regclass('ledger_open_refs') IS NULL")
        assert (await status(conn, ["games.ledger"])).current
        assert [m.label for m in (await status(conn, SCHEMA)).pending] == SERVER

        assert await migrate(conn, SCHEMA) == SERVER  # the ledger's are not applied twice
        assert await migrate(conn, SCHEMA) == []
        assert (await status(conn, SCHEMA)).current
        await require_current(conn, SCHEMA)
        assert await recorded(conn) == [(m.package, m.version, m.name) for m in available(SCHEMA)]
        key = await conn.fetchval("SELECT pg_get_constraintdef(oid) FROM pg_constraint"
                                  " WHERE conrelid = 'schema_migrations'::regclass AND contype = 'p'")
        assert key == "PRIMARY KEY (package, version)"


async def test_starters_racing_on_a_new_database_apply_each_migration_once(empty_db):
    async with connected(empty_db) as a, connected(empty_db) as b:
        first, second = await asyncio.gather(migrate(a, SCHEMA), migrate(b, SCHEMA))
    assert sorted(first + second) == sorted(LEDGER + SERVER)


async def old_scheme(conn: asyncpg.Connection, skip: set[str]) -> None:
    """What the single-folder migrator (every file in games/db/migrations/) left behind:
    ``schema_migrations`` keyed by version alone, files applied in version order."""
    await conn.execute("""CREATE TABLE schema_migrations (
                              version int PRIMARY KEY,
                              name text NOT NULL,
                              applied_at timestamptz NOT NULL DEFAULT now())""")
    for m in sorted(available(SCHEMA), key=lambda m: m.version):
        if m.name in skip:
            continue
        async with conn.transaction():
            await conn.execute(m.sql)
            await conn.execute("INSERT INTO schema_migrations (version, name, applied_at) VALUES ($1, $2, $3)",
                               m.version, m.name, datetime(2025, 1, 1, 0, 0, m.version % 60, tzinfo=UTC))


async def test_a_database_of_the_single_folder_scheme_is_upgraded_in_place(empty_db):
    """A database migrated before the migrations moved beside their packages, and before two
    of them existed: its rows are converted to (package, version), keeping when each was
    applied, and only the two missing migrations run."""
    missing = {"0004_ledger_floor_accounts.sql", "0107_cashier_role.sql"}
    async with connected(empty_db) as conn:
        await old_scheme(conn, missing)
        before = await status(conn, SCHEMA)
        assert before.keyed_by_version and not before.current
        assert [m.label for m in before.pending] == ["games.ledger/0004_ledger_floor_accounts.sql",
                                                     "server/0107_cashier_role.sql"]
        with pytest.raises(SchemaBehind) as behind:
            await require_current(conn, SCHEMA)
        assert "schema_migrations keyed by package" in str(behind.value)
        assert "casino db migrate" in str(behind.value)

        assert await migrate(conn, SCHEMA) == ["games.ledger/0004_ledger_floor_accounts.sql",
                                               "server/0107_cashier_role.sql"]
        assert await recorded(conn) == [(m.package, m.version, m.name) for m in available(SCHEMA)]
        applied_at = {r["name"]: r["applied_at"].second for r in await conn.fetch("SELECT * FROM schema_migrations")}
        assert all(applied_at[m.name] == m.version % 60 for m in available(SCHEMA) if m.name not in missing)
        assert (await status(conn, SCHEMA)).current and await migrate(conn, SCHEMA) == []
        # what the two brought: floor accounts may go below zero; the cashier role
        assert await conn.fetchval("SELECT ledger_may_go_negative('floor')")
        await conn.execute("INSERT INTO users (id, password_hash, role) VALUES ('cash', 'x', 'cashier')")
        # the table limits (server/0002 now) stayed where they were
        assert await conn.fetchval("SELECT count(*) FROM table_limits") == 0


async def test_an_old_scheme_naming_a_file_no_package_holds_is_left_alone(empty_db):
    async with connected(empty_db) as conn:
        await old_scheme(conn, set())
        await conn.execute("INSERT INTO schema_migrations (version, name) VALUES (99, '0099_from_elsewhere.sql')")
        with pytest.raises(MigrationError, match="0099_from_elsewhere.sql"):
            await migrate(conn, SCHEMA)
        assert await conn.fetchval("SELECT count(*) FROM schema_migrations") == len(available(SCHEMA)) + 1
        assert not await conn.fetchval("SELECT count(*) FROM pg_attribute"  # still keyed by version alone
                                       " WHERE attrelid = 'schema_migrations'::regclass AND attname = 'package'")


async def test_the_ledger_check_reads_the_servers_open_rounds(fresh_db):
    """The seam between the two packages: the server's migration makes the view of open
    rounds (the wagers its tables' committed states still hold), which the ledger reads."""
    pool = await create_pool(fresh_db, min_size=1, max_size=2)
    try:
        ledger = Ledger(pool)
        bank, anna = accounts.bank("r1", "CHF"), accounts.wallet("anna", "CHF")
        await ledger.open_account(bank)
        await ledger.deposit("anna", "CHF", 1000, "dep-anna")
        await ledger.apply([Hold("r1/w1/hold", anna, bank, 100, "bet", "r1/w1"),
                            Hold("r1/w2/hold", anna, bank, 100, "bet", "r1/w2")])
        await pool.execute("INSERT INTO casino_tables (id, game, profile, mode, currency, name, created_by)"
                           " VALUES ('r1', 'roulette', 'campione', 'rng', 'CHF', 'r1', 'test')")
        await pool.execute("INSERT INTO table_state (table_id, seq, state, open_refs) VALUES ('r1', 0, '', '{r1/w2}')")
        report = await ledger.check_report()
        assert ([p.subject for p in report.problems], report.rounds_checked) == (["r1/w1/hold"], True)
        # A hold made after the list was written (a batch that only adds bets leaves the list,
        # 0116) counts as in play; once the list is written again without it, it does not.
        await ledger.apply([Hold("r1/w3/hold", anna, bank, 100, "bet", "r1/w3")])
        assert [p.subject for p in await ledger.check()] == ["r1/w1/hold"]
        await pool.execute("UPDATE table_state SET open_refs = '{r1/w1,r1/w2}', refs_after ="
                           " pg_sequence_last_value(pg_get_serial_sequence('ledger_transfers', 'seq')::regclass)")
        assert [p.subject for p in await ledger.check()] == ["r1/w3/hold"]
        # Another table's newer hold ("r10/...") is not r1's.
        await ledger.open_account(accounts.bank("r10", "CHF"))
        await ledger.apply([Hold("r10/w1/hold", anna, accounts.bank("r10", "CHF"), 100, "bet", "r10/w1")])
        assert sorted(p.subject for p in await ledger.check()) == ["r1/w3/hold", "r10/w1/hold"]
    finally:
        await pool.close()


async def test_casino_db_migrate(empty_db, monkeypatch, capsys):
    from server.cli import main

    monkeypatch.setenv("DATABASE_URL", empty_db)
    assert await asyncio.to_thread(main, ["db", "migrate"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[1:] == [f"applied {label}" for label in LEDGER + SERVER] + [
        f"schema up to date: {len(LEDGER + SERVER)} migrations recorded"]
    assert await asyncio.to_thread(main, ["db", "migrate", "--json"]) == 0
    answer = json.loads(capsys.readouterr().out)
    assert (answer["applied"], answer["converted"], answer["recorded"]) == ([], False, len(LEDGER + SERVER))


async def test_fresh_db_is_migrated(fresh_db):
    conn = await asyncpg.connect(fresh_db)
    try:
        assert await conn.fetchval("SELECT count(*) FROM schema_migrations") >= 0
    finally:
        await conn.close()
