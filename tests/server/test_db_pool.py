"""Each server process's share of the database's connections (``--workers N`` against one
PostgreSQL): together they leave room for the tools, none takes more than one process needs."""

from __future__ import annotations

import logging

import asyncpg
import pytest

from games.db.pool import POOL_MAX, application_name, connections_fit, parse_pool_size, pool_share
from server.config import Settings
from server.supervisor import _pool_for_workers


@pytest.mark.parametrize(("limit", "reserved", "processes", "share"), [
    (100, 3, 1, 20),  # one process: the usual pool
    (100, 3, 4, 20),  # (97 - 10) // 4 - 1 = 20: 4 x (20 + 1) + 10 = 94 <= 97
    (100, 3, 8, 9),  # (87 // 8) - 1: 8 x 10 + 10 = 90
    (100, 3, 16, 4),  # 87 // 16 - 1 = 4: 16 x 5 + 10 = 90
    (100, 3, 64, 2),  # too many for the server: the floor (the supervisor warns)
    (400, 3, 16, 20),
])
def test_the_share_leaves_the_headroom_and_is_capped(limit: int, reserved: int, processes: int, share: int) -> None:
    assert pool_share(limit, reserved, processes) == share
    assert connections_fit(limit, reserved, processes, share) == (processes < 64)


def test_the_headroom_counts_each_process_listening_connection() -> None:
    assert connections_fit(100, 3, 8, 9)  # 8 x (9 + 1) + 10 = 90 <= 97
    assert not connections_fit(100, 3, 8, 10)  # 8 x 11 + 10 = 98: one over (the share before it counted them)
    assert connections_fit(100, 3, 4, 20) and not connections_fit(100, 3, 5, 20)  # 5 x 21 + 10 = 115


def test_the_supervisor_warns_when_the_workers_cannot_fit(monkeypatch, caplog) -> None:
    monkeypatch.delenv("CASINO_DB_POOL", raising=False)
    with caplog.at_level(logging.INFO, logger="casino"):
        assert _pool_for_workers(100, 3, 8) == 9
        assert "database pool: 9 connections per worker (max_connections 100)" in caplog.text
        assert "WARNING" not in caplog.text
        caplog.clear()
        assert _pool_for_workers(100, 3, 64) == 2
        assert ("64 workers x 2 database connections (and each its LISTEN connection) leave less than 10 of the "
                "server's 100") in caplog.text


def test_the_operator_sets_the_pool_and_is_warned_if_it_does_not_fit(monkeypatch, caplog) -> None:
    monkeypatch.setenv("CASINO_DB_POOL", "30")
    with caplog.at_level(logging.INFO, logger="casino"):
        assert _pool_for_workers(100, 3, 2) == 30  # 2 x 31 + 10 = 72 <= 97: fits
        assert "database pool: 30 connections per worker" in caplog.text
        assert _pool_for_workers(100, 3, 3) == 30  # 3 x 31 + 10 = 103: does not
        assert "3 workers x 30 database connections" in caplog.text


@pytest.mark.parametrize("bad", ["abc", "2.5", "1", "0", "-3", ""])
def test_a_pool_size_is_a_whole_number_of_at_least_two(monkeypatch, bad: str) -> None:
    with pytest.raises(ValueError, match="CASINO_DB_POOL must be"):
        parse_pool_size(bad)
    if bad:  # (unset or empty: the default)
        monkeypatch.setenv("CASINO_DB_POOL", bad)
        with pytest.raises(ValueError, match="CASINO_DB_POOL must be"):
            Settings.from_env()
        with pytest.raises(ValueError, match="CASINO_DB_POOL must be"):
            _pool_for_workers(100, 3, 2)


def test_a_process_reads_its_pool_size(monkeypatch) -> None:
    monkeypatch.setenv("CASINO_DB_POOL", "7")
    assert Settings.from_env().db_pool == 7
    monkeypatch.setenv("CASINO_DB_POOL", "")
    assert Settings.from_env().db_pool == POOL_MAX
    monkeypatch.delenv("CASINO_DB_POOL")
    assert Settings.from_env().db_pool == POOL_MAX


def test_a_long_owner_keeps_the_end_that_tells_workers_apart() -> None:
    assert application_name("host:8000/3") == "casino host:8000/3"
    long = "a-very-long-host-name-of-a-cloud-provider.internal.example.com:8000"
    names = [application_name(f"{long}/{slot}") for slot in range(4)]
    assert len(set(names)) == 4  # each worker still told apart
    for slot, name in enumerate(names):
        assert len(name) == 63 and name.isascii() and name.startswith("casino ...") and name.endswith(f":8000/{slot}")
    assert application_name("hôte:1/0") == "casino h?te:1/0"  # ASCII: PostgreSQL would escape the rest


async def test_postgresql_keeps_the_whole_name(pg_url: str) -> None:
    """What pg_stat_activity shows is the name given: nothing escaped, nothing cut."""
    long = "a-very-long-host-name-of-a-cloud-provider.internal.example.com:8000/7"
    for owner in (long, "hôte-été:8000/2"):
        conn = await asyncpg.connect(pg_url, server_settings={"application_name": application_name(owner)})
        try:
            shown = await conn.fetchval("SELECT application_name FROM pg_stat_activity WHERE pid = pg_backend_pid()")
        finally:
            await conn.close()
        assert shown == application_name(owner) and shown.endswith(owner[-2:])
