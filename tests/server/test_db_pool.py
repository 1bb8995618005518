"""Each server process's share of the database's connections (``--workers N`` against one
PostgreSQL): together they leave room for the tools, none takes more than one process needs."""

from __future__ import annotations

import logging

import pytest

from games.db.pool import HEADROOM, POOL_MAX, pool_share
from server.config import Settings
from server.supervisor import _pool_for_workers


@pytest.mark.parametrize(("limit", "reserved", "processes", "share"), [
    (100, 3, 1, 20),  # one process: the usual pool
    (100, 3, 4, 20),  # 87 free over 4: 21 each, capped at 20
    (100, 3, 8, 10),  # the 16-core bench's 8 workers on the embedded PostgreSQL: 87 // 8
    (100, 3, 16, 5),
    (100, 3, 64, 2),  # too many for the server: the floor of 2 (the supervisor warns)
    (400, 3, 16, 20),
])
def test_the_share_leaves_the_headroom_and_is_capped(limit: int, reserved: int, processes: int, share: int) -> None:
    assert pool_share(limit, reserved, processes) == share
    assert share == POOL_MAX or share == 2 or share * processes + HEADROOM <= limit - reserved


def test_the_supervisor_warns_when_the_workers_cannot_fit(monkeypatch, caplog) -> None:
    monkeypatch.delenv("CASINO_DB_POOL", raising=False)
    with caplog.at_level(logging.INFO, logger="casino"):
        assert _pool_for_workers(100, 3, 8) == 10
        assert "database pool: 10 connections per worker (max_connections 100)" in caplog.text
        caplog.clear()
        assert _pool_for_workers(100, 3, 64) == 2
        assert "64 workers x 2 database connections leave less than 10 of the server's 100" in caplog.text


def test_the_operator_sets_the_pool_and_is_warned_if_it_does_not_fit(monkeypatch, caplog) -> None:
    monkeypatch.setenv("CASINO_DB_POOL", "30")
    with caplog.at_level(logging.INFO, logger="casino"):
        assert _pool_for_workers(100, 3, 2) == 30  # 60 + 10 <= 97: fits
        assert "database pool: 30 connections per worker" in caplog.text
        assert _pool_for_workers(100, 3, 4) == 30  # 120: does not
        assert "4 workers x 30 database connections leave less than 10" in caplog.text


def test_a_process_reads_its_pool_size(monkeypatch) -> None:
    monkeypatch.setenv("CASINO_DB_POOL", "7")
    assert Settings.from_env().db_pool == 7
    monkeypatch.setenv("CASINO_DB_POOL", "0")
    assert Settings.from_env().db_pool == 2  # a table batch beside the chores
    monkeypatch.delenv("CASINO_DB_POOL")
    assert Settings.from_env().db_pool == POOL_MAX
