"""``loadtest.bench_batches`` runs its shapes on a real PostgreSQL: every batch it sends is
committed (a refused or lost one would stop it), alone and together, and it leaves no
database behind."""

from __future__ import annotations

import argparse

import asyncpg

from loadtest import bench_batches


async def test_each_shape_commits_its_batches(pg_url):
    args = argparse.Namespace(tables=3, bets=[1, 4], batches=6)
    shapes = await bench_batches.bench(args, pg_url)
    assert [(s.mode, s.bets, s.batches) for s in shapes] == [
        ("alone", 1, 6), ("together", 1, 6), ("alone", 4, 6), ("together", 4, 6)]
    assert all(s.backend_ms >= 0 and s.client_ms > 0 for s in shapes)
    admin = await asyncpg.connect(pg_url)
    try:
        assert await admin.fetchval("SELECT count(*) FROM pg_database WHERE datname = $1", bench_batches.BENCH_DB) == 0
    finally:
        await admin.close()
