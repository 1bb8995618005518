"""Several processes serving one floor through Redis (issue 14 §2): a player connected to any
process plays any table (his commands go to the table's owner, its events come to him),
the console's HTTP calls reach the owner, the tables are spread over the processes, and a
kill -9 of an owner mid-round moves its tables to the others with no acknowledged bet lost
and nothing paid twice."""

from __future__ import annotations

import asyncio
import collections
import contextlib
import itertools

import asyncpg
import pytest

from server.client import Rejected
from server.placement import preferred

from .conftest import Floor, ServerProcess, owner_id, table_owners, until

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def redis_url(tmp_path_factory):
    """A Redis of the test's own (Debian's redis-server), as ``casino serve --workers`` starts it."""
    from server.redis_embedded import start_redis, stop_redis

    folder = tmp_path_factory.mktemp("redis")
    url = start_redis(folder)
    yield url
    stop_redis(folder)


def _processes(db_url: str, redis_url: str, tmp, n: int, **env: str) -> list[ServerProcess]:
    return [ServerProcess(db_url, tmp, REDIS_URL=redis_url, CASINO_LEASE_SECONDS="2", **env) for _ in range(n)]


async def test_a_player_on_any_process_plays_any_table(db_url, redis_url, tmp_path_factory):
    a, b = _processes(db_url, redis_url, tmp_path_factory.mktemp("two"), 2, CASINO_BETTING_SECONDS="2")
    a.start()
    b.start()
    try:
        floor = Floor(a)
        croupier = await floor.account("mp-croupier", "croupier")
        chef = await floor.account("mp-chef", "chef")
        await floor.table("roulette", "campione", "mp-live", staff=("mp-croupier", "mp-chef"))
        owner = preferred("mp-live", [owner_id(a), owner_id(b)])  # where the placement settles it

        async def settled() -> bool:
            return await _owner_of(b, "mp-live") == owner

        assert await until(settled)
        elsewhere = b if owner == owner_id(a) else a  # a process that does not serve the table
        # Everyone connects to the process that does NOT own the table.
        ana = await Floor(elsewhere).account("mp-ana", chips=10_000)
        for c in (croupier, ana):
            await c.move_to(elsewhere.url)
            await c.subscribe("mp-live")
        await croupier.play("mp-live", {"type": "open_spin"})
        await ana.next_event("mp-live", "spin_opened")
        placed = await ana.bet("mp-live", "rouge", 2_000)
        assert placed["seq"] > 0
        with pytest.raises(Rejected) as refused:  # the owner's refusals come back as they are
            await ana.bet("mp-live", "plein 40", 1_000)
        assert refused.value.code == "number_out_of_range"
        for step in ({"type": "launch_ball"}, {"type": "no_more_bets"},
                     {"type": "result", "number": 1, "source": "croupier"}):  # 1 is red
            await croupier.play("mp-live", step)
        await ana.next_event("mp-live", "spin_settled")
        assert (await ana.balance())["available"] == 12_000
        # The console's HTTP calls reach the owner too: the table's view and new limits.
        detail = await chef.request("GET", "/tables/mp-live")
        assert detail["seq"] >= placed["seq"] and detail["table"]["owner"] == owner
        director = await Floor(elsewhere).account("mp-director", "director")
        changed = await director.request("PUT", "/tables/mp-live/limits",
                                         json={"minimum": 1_000, "maxima": {}, "reason": "busy night"})
        await director.close()
        assert changed["seq"] > placed["seq"]
        announced = await ana.next_event("mp-live", "settings_announced")
        assert announced["seq"] == changed["seq"]
        for c in (croupier, chef, ana):
            await c.close()
        assert await floor.ledger_problems() == []
    finally:
        a.stop()
        b.stop()


async def _owner_of(server: ServerProcess, table: str) -> str:
    return (await table_owners(server)).get(table, "")


async def test_three_processes_spread_the_tables_and_survive_a_kill(db_url, redis_url, tmp_path_factory):
    """Bots bet on every table from every process; the process serving most tables is
    killed mid-round; its tables move to the other two within a lease; every acknowledged
    bet is in the history, no wager is settled twice, the ledger check is clean."""
    procs = _processes(db_url, redis_url, tmp_path_factory.mktemp("three"), 3, CASINO_BETTING_SECONDS="1.5",
                       CASINO_PAUSE_SECONDS="0.5")
    for p in procs:
        p.start()
    floor = Floor(procs[0])
    ids = {owner_id(p): p for p in procs}
    # Six tables, two that the placement gives to each process (the ports, so the names of
    # the processes, differ from run to run).
    names = (f"mp-rng-{i}" for i in range(10_000))
    tables = sorted(next(t for t in names if preferred(t, ids) == o) for o in ids for _ in range(2))
    players = []
    try:
        for t in tables:
            await floor.table("roulette", "campione", t, mode="rng")
        # The placement spreads them (a process hands over the idle tables another should serve).
        placed = {t: preferred(t, ids) for t in tables}

        async def spread() -> bool:
            owners = await table_owners(procs[1])
            return all(owners.get(t) == placed[t] for t in tables)

        assert await until(spread, 30), await table_owners(procs[1])
        for i in range(6):
            c = await Floor(procs[i % 3]).account(f"mp-bot-{i}", chips=100_000)
            await c.connect()
            for t in tables:
                await c.subscribe(t)
            players.append(c)
        acked: list[tuple[str, str, int]] = []  # (player, table, seq of the bet's event)
        refused: list[str] = []
        stop = asyncio.Event()

        async def bot(c, n: int) -> None:
            cids = itertools.count()
            while not stop.is_set():
                for t in tables:
                    try:
                        ok = await c.bet(t, "rouge" if n % 2 else "noir", 500, cid=f"{c.user}-{next(cids)}")
                        acked.append((c.user, t, ok["seq"]))
                    except Rejected as exc:
                        refused.append(exc.code)  # betting closed, moving table: never lost
                    except (TimeoutError, ConnectionError, Exception):
                        return  # its process was killed: it reconnects below
                await asyncio.sleep(0.1)

        bots = [asyncio.create_task(bot(c, n)) for n, c in enumerate(players)]
        await asyncio.sleep(4)
        # Kill the process serving the most tables, while spins are under way.
        owners = await table_owners(procs[1])
        victim_id = max(ids, key=lambda o: sum(owners.get(t) == o for t in tables))
        victim = ids[victim_id]
        moved = [t for t in tables if owners.get(t) == victim_id]
        victim.kill()
        survivors = [p for p in procs if p is not victim]
        for c, task in zip(players, bots, strict=True):
            if c.base_url == victim.url:
                task.cancel()
                with contextlib.suppress(BaseException):
                    await task
                await c.move_to(survivors[0].url)
                bots[bots.index(task)] = asyncio.create_task(bot(c, players.index(c)))

        async def taken_over() -> bool:
            owners = await table_owners(survivors[0])
            return all(owners.get(t) in {owner_id(p) for p in survivors} for t in moved)

        assert await until(taken_over, 20)
        await asyncio.sleep(4)  # play goes on at the moved tables
        stop.set()
        await asyncio.gather(*bots, return_exceptions=True)
        # Every table settles what is on it: wait for a spin to settle after the bots stopped.
        for t in tables:
            await players[0].next_event(t, "spin_settled", timeout=30)
        print(f"{len(acked)} bets acked, refused {collections.Counter(refused)}; {victim_id} killed, "
              f"serving {moved}")
        assert len(acked) > 50
        conn = await asyncpg.connect(db_url)
        try:
            rows = await conn.fetch("SELECT table_id, seq, actor FROM table_events WHERE actor LIKE 'mp-bot-%'")
            placed = {(r["actor"], r["table_id"], r["seq"]) for r in rows}
            lost = [a for a in acked if a not in placed]
            assert lost == [], lost
            twice = await conn.fetch(
                """SELECT payload->>'wager' AS wager, count(*) FROM table_events
                   WHERE kind = 'wager_settled' GROUP BY table_id, payload->>'wager' HAVING count(*) > 1""")
            assert twice == []
        finally:
            await conn.close()
        for t in moved:  # the moved tables went on: spins settled after the take-over
            assert any(f.get("type") == "event" and f["event"]["type"] == "table_resumed"
                       for f in players[0].frames if f.get("table") == t)
        assert await Floor(survivors[0]).ledger_problems() == []
    finally:
        for c in players:
            with contextlib.suppress(Exception):
                await c.close()
        for p in procs:
            p.stop()


async def test_presence_through_another_process_keeps_a_seat(db_url, redis_url, tmp_path_factory):
    """A seat is released when its player has gone from every process, never while he
    follows the table through a process that does not serve it: not when another player
    leaves, not when the table moves to the process he is connected to (after a kill -9)."""
    a, b = _processes(db_url, redis_url, tmp_path_factory.mktemp("seats"), 2, CASINO_SEAT_RELEASE_SECONDS="1.5")
    a.start()
    b.start()
    try:
        await Floor(a).table("blackjack", "lugano", "mp-seats")
        server_of = {owner_id(p): p for p in (a, b)}
        owner = preferred("mp-seats", server_of)  # where the placement settles it (a hands it over if not a)

        async def settled() -> bool:
            return await _owner_of(a, "mp-seats") == owner

        assert await until(settled)
        serving, other = server_of[owner], server_of[next(o for o in server_of if o != owner)]
        paul = await Floor(other).account("mp-paul", chips=10_000)
        quinn = await Floor(other).account("mp-quinn", chips=10_000)
        for c, box in ((paul, 1), (quinn, 2)):
            await c.connect()
            await c.subscribe("mp-seats")
            await c.sit("mp-seats", box)
        await quinn.close()  # gone from every process: his seat goes
        released = await paul.next_event("mp-seats", "seat_released", timeout=20)
        assert released["event"]["box"] == 2
        serving.kill()  # the table moves to the process paul is connected to
        await paul.next_event("mp-seats", "table_resumed", timeout=30)
        await asyncio.sleep(3)  # twice the release time: paul follows the table, he keeps his seat
        assert not [f for f in paul.drain("mp-seats") if f.get("type") == "event"
                    and f["event"]["type"] == "seat_released"]
        seats = (await paul.request("GET", "/tables/mp-seats"))["view"]["seats"]
        assert seats[0] == "mp-paul" and seats[1] == ""
        await paul.close()
    finally:
        a.stop()
        b.stop()
