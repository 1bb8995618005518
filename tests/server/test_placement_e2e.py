"""Sockets placed at their tables' owners (issue 14 §2; SCALING.md): each process names where
it takes websockets (CASINO_WS_URL), the lobby gives each table its owner's (``ws_url``), and
a player who connects there has his commands served in that process, none forwarded through
the broker. Two real processes, a real Redis, the test's own PostgreSQL."""

from __future__ import annotations

import httpx
import pytest

from server.placement import preferred

from .conftest import Floor, ServerProcess, owner_id, until
from .test_many_processes_e2e import _owner_of, redis_url  # noqa: F401  (the fixture)

pytestmark = pytest.mark.slow

T = "pl-wheel"


def forwarded(server: ServerProcess) -> float:
    """The commands ``server`` has sent to their table's owner in another process."""
    scrape = httpx.get(server.url + "/metrics").text
    return next(float(line.split()[1]) for line in scrape.splitlines()
                if line.startswith("casino_commands_forwarded_total "))


def ws_url(server: ServerProcess) -> str:
    return f"ws://127.0.0.1:{server.port}/ws"


def lobby(server: ServerProcess, token: str) -> dict[str, dict]:
    """The tables as ``server`` lists them."""
    answer = httpx.get(server.url + "/tables", headers={"Authorization": f"Bearer {token}"})
    return {t["id"]: t for t in answer.json()}


async def test_the_lobby_sends_a_player_to_his_tables_owner(db_url, redis_url, tmp_path_factory):  # noqa: F811
    tmp = tmp_path_factory.mktemp("placed")
    a, b = (ServerProcess(db_url, tmp, REDIS_URL=redis_url, CASINO_LEASE_SECONDS="2") for _ in range(2))
    for p in (a, b):
        p.env["CASINO_WS_URL"] = ws_url(p)
        p.start()
    try:
        floor = Floor(a)
        croupier = await floor.account("pl-croupier", "croupier")
        await floor.table("roulette", "campione", T, staff=("pl-croupier",))
        owner = preferred(T, [owner_id(a), owner_id(b)])

        async def settled() -> bool:
            return await _owner_of(a, T) == owner and await _owner_of(b, T) == owner

        assert await until(settled)
        there, elsewhere = (a, b) if owner == owner_id(a) else (b, a)
        # Every process's lobby names the owner's address, whichever process answers.
        for p in (a, b):
            listed = lobby(p, croupier.token)
            assert (listed[T]["owner"], listed[T]["ws_url"]) == (owner, ws_url(there))

        ana = await Floor(elsewhere).account("pl-ana", chips=10_000)
        await croupier.move_to(there.url)
        await ana.connect()
        for c in (croupier, ana):
            await c.subscribe(T)
        await croupier.play(T, {"type": "open_spin"})
        # Connected elsewhere, her bet goes to the owner through the broker ...
        before = forwarded(elsewhere), forwarded(there)
        await ana.bet(T, "rouge", 1_000)
        assert (forwarded(elsewhere), forwarded(there)) == (before[0] + 1, before[1])
        # ... placed at the owner, it is served where it came in.
        assert await ana.place_at(T)
        assert ana.ws_url == ws_url(there) and ana.base_url == elsewhere.url  # (HTTP stays)
        assert not await ana.place_at(T)  # (there already)
        await ana.bet(T, "noir", 2_000)
        assert (forwarded(elsewhere), forwarded(there)) == (before[0] + 1, before[1])
        assert (await ana.balance())["pending"] == 3_000

        # The owner stops (a graceful stop hands its tables over at once): the lobby names the
        # new owner's address.
        await ana.close()
        await croupier.close()
        there.stop()

        async def moved() -> bool:
            return lobby(elsewhere, croupier.token)[T]["ws_url"] == ws_url(elsewhere)

        assert await until(moved)
    finally:
        a.stop()
        b.stop()
