"""The asyncpg pool, set up the same way everywhere."""

from __future__ import annotations

import asyncpg


async def create_pool(url: str, *, min_size: int = 2, max_size: int = 20) -> asyncpg.Pool:
    pool = await asyncpg.create_pool(url, min_size=min_size, max_size=max_size)
    assert pool is not None
    return pool
