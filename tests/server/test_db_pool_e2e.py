"""A server on the smallest pool (``CASINO_DB_POOL=2``): nothing in it takes a second
connection while holding one, so tables starting and limits changing all at once finish
instead of each holding a connection and waiting for another forever (a table's start and a
batch that changes limits each took one for the limits store; with the old fixed pool of 20
that took ten at once, with a worker's share of a busy server's connections, two)."""

from __future__ import annotations

import asyncio

import httpx
import pytest

from .conftest import Floor, ServerProcess

pytestmark = pytest.mark.slow

TABLES = [f"pool-{i}" for i in range(6)]


@pytest.fixture(scope="module")
def small_pool(db_url: str, tmp_path_factory):
    with ServerProcess(db_url, tmp_path_factory.mktemp("small-pool"), CASINO_DB_POOL="2") as srv:
        yield srv


def _gauge(scrape: str, name: str) -> float:
    (line,) = [x for x in scrape.splitlines() if x.startswith(name + " ")]
    return float(line.split()[1])


async def test_tables_start_and_limits_change_at_once_on_two_connections(small_pool) -> None:
    floor = Floor(small_pool)
    director = await floor.account("pool-director", "director")
    admin = await floor.admin()  # one login (concurrent logins of one user are throttled)
    try:
        # Six tables created at once: each starts (its first state, its profile's limits).
        await asyncio.wait_for(asyncio.gather(*(
            admin.request("POST", "/tables", json={"game": "blackjack", "profile": "titano", "mode": "live", "id": t,
                                                   "settings": {"min_bet": 1_000, "max_bet": 20_000}})
            for t in TABLES)), 60)
        # And their limits changed at once: each change is a batch that records a version.
        changed = await asyncio.wait_for(asyncio.gather(*(
            director.request("PUT", f"/tables/{t}/limits", json={"minimum": 2_000, "maximum": 40_000})
            for t in TABLES)), 60)
        assert [c["limits"]["limits"]["minimum"] for c in changed] == [2_000] * len(TABLES)
        for t in TABLES:
            history = await director.request("GET", f"/tables/{t}/limits")
            assert [(v["version"], v["changed_by"], v["limits"]["minimum"]) for v in history] == [
                (1, "table.create", 1_000), (2, "pool-director", 2_000)]
    finally:
        await director.close()
        await admin.close()
    async with httpx.AsyncClient() as http:
        scrape = (await http.get(small_pool.url + "/metrics")).text
    assert _gauge(scrape, "casino_db_pool_max") == 2
    assert 1 <= _gauge(scrape, "casino_db_pool_connections") <= 2
    assert 0 <= _gauge(scrape, "casino_db_pool_idle") <= _gauge(scrape, "casino_db_pool_connections")
    assert await floor.ledger_problems() == []
