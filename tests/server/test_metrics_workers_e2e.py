"""``casino serve --workers 2``: a scrape of any worker answers for both (issue 14 §3, per
process: each live gauge with its worker's pid, ``casino_process_info`` naming the owner
beside it; counters summed), at the shared port or at each worker's own
(``--worker-ports``). A worker killed with -9 leaves the scrapes with its gauges, its counts
stay in the sums; the folder of files goes with the supervisor."""

from __future__ import annotations

import asyncio
import os
import re
import shutil
import signal
import socket
import tempfile
from pathlib import Path

import httpx
import pytest
from prometheus_client.parser import text_string_to_metric_families

from helpers.servers import Supervised
from server.client import Rejected
from server.placement import preferred

from .conftest import ADMIN_PASSWORD, Floor, table_owners, until

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(shutil.which("redis-server") is None,
                       reason="redis-server is not installed (apt-get install redis-server; ./dev does)"),
]

Samples = dict[tuple[str, frozenset[tuple[str, str]]], float]
OWN = re.compile(r"worker (\d+) takes its players' websockets at ws://127\.0\.0\.1:(\d+)/ws")


async def scrape(url: str) -> Samples:
    """One scrape on a connection of its own (the kernel hands it to either worker)."""
    async with httpx.AsyncClient() as http:
        text = (await http.get(f"{url}/metrics", headers={"Connection": "close"})).text
    return {(s.name, frozenset(s.labels.items())): s.value
            for family in text_string_to_metric_families(text) for s in family.samples}


def by_pid(samples: Samples, name: str, **labels: str) -> dict[str, float]:
    """``name``'s samples with ``labels``, by their pid label."""
    out = {}
    for (n, got), value in samples.items():
        got_d = dict(got)
        if n == name and all(got_d.get(k) == v for k, v in labels.items()):
            out[got_d["pid"]] = value
    return out


def total(samples: Samples, name: str, **labels: str) -> float:
    return sum(v for (n, got), v in samples.items() if n == name and labels.items() <= dict(got).items())


async def test_one_scrape_answers_for_every_worker(db_url, tmp_path_factory):
    redis_dir = Path(tempfile.mkdtemp(prefix="casino-redis-")) / "r"
    sup = Supervised(db_url, tmp_path_factory.mktemp("metrics-workers"), redis_dir, admin_password=ADMIN_PASSWORD)
    # Each worker on a port of its own too; a folder named in the environment is not theirs.
    sup.env.update(CASINO_BETTING_SECONDS="1.5", CASINO_PAUSE_SECONDS="0.3", CASINO_WORKER_PORTS="0",
                   PROMETHEUS_MULTIPROC_DIR="/nonexistent/casino-metrics")
    player = None
    try:
        sup.start()
        host = socket.gethostname()
        owners = [f"{host}:{sup.port}/{slot}" for slot in (0, 1)]
        for owner in owners:
            sup.wait_for(f"worker {owner} ready")
        found = re.search(r"GET /metrics on any of them answers for all \(their files in (\S+)\)", sup.log())
        assert found, sup.log()[-3000:]
        folder = Path(found.group(1))
        assert folder.is_dir()  # noqa: ASYNC240
        assert folder.name.startswith(f"casino-metrics-{sup.proc.pid}-")
        assert "PROMETHEUS_MULTIPROC_DIR is ignored" in sup.log()
        own = {int(slot): f"http://127.0.0.1:{port}" for slot, port in OWN.findall(sup.log())}
        assert sorted(own) == [0, 1]

        # Two tables that the placement gives to each worker.
        floor = Floor(sup)
        names = (f"mw-rng-{i}" for i in range(10_000))
        tables = sorted(next(t for t in names if preferred(t, owners) == o) for o in owners for _ in range(2))
        for t in tables:
            await floor.table("roulette", "campione", t, mode="rng")

        async def spread() -> bool:
            now = await table_owners(sup)
            return all(now.get(t) == preferred(t, owners) for t in tables)

        assert await until(spread, 30), await table_owners(sup)
        pids = {slot: started[-1] for slot, started in sup.workers().items()}
        player = await floor.account("mw-ana", chips=100_000)
        player.ws_url = own[0].replace("http", "ws", 1) + "/ws"  # his socket at worker 0
        await player.connect()
        for t in tables:
            await player.subscribe(t)
        # Worker 0 answering: its own gauges as they are at the scrape (the socket just opened).
        s = await scrape(own[0])
        assert by_pid(s, "casino_ws_sockets_open") == {str(pids[0]): 1.0, str(pids[1]): 0.0}
        acked, refused = 0, []
        for t in tables:  # two bets at each, each acked by its table's owner
            for n in range(2):
                for attempt in range(100):  # (an RNG table closes its betting by itself: again at the next spin)
                    try:
                        await player.bet(t, "rouge", 500, cid=f"mw-{t}-{n}-{attempt}")
                        acked += 1
                        break
                    except Rejected as exc:
                        refused.append(exc.code)
                        await asyncio.sleep(0.1)
        assert acked == 8, refused

        info = {(owners[slot], str(pid)) for slot, pid in pids.items()}

        def as_expected(s: Samples) -> bool:
            return ({(dict(k[1])["owner"], dict(k[1])["pid"]) for k in s if k[0] == "casino_process_info"} == info
                    and by_pid(s, "casino_tables_owned", game="roulette") == {str(p): 2.0 for p in pids.values()}
                    and total(s, "casino_ws_sockets_open") == 1.0)

        async def steady() -> bool:  # (the worker that did not answer wrote its gauges at most 1 s ago)
            return as_expected(await scrape(sup.url))

        assert await until(steady, 10)
        for url in [own[0], own[1], sup.url, sup.url, sup.url, sup.url]:  # whichever answers, the same floor
            s = await scrape(url)
            assert as_expected(s), s
            assert total(s, "casino_commands_accepted_total", game="roulette", command="place_bet") == acked
            assert set(by_pid(s, "process_resident_memory_bytes")) == {str(p) for p in pids.values()}
            assert all(v > 0 for v in by_pid(s, "process_resident_memory_bytes").values())
            assert by_pid(s, "casino_lease_seconds") == {str(p): 15.0 for p in pids.values()}
            assert total(s, "casino_ack_latency_seconds_count", game="roulette") >= acked

        # kill -9 worker 1: the new one's gauges replace the dead one's; the dead one's acked
        # bets stay counted.
        dead = pids[1]
        os.kill(dead, signal.SIGKILL)
        deadline = asyncio.get_running_loop().time() + 30
        while len(sup.workers()[1]) < 2:
            assert asyncio.get_running_loop().time() < deadline, sup.log()[-3000:]
            await asyncio.sleep(0.05)
        again = sup.workers()[1][1]
        sup.wait_for(f"worker {owners[1]} ready (pid {again})")

        async def replaced() -> Samples | None:
            s = await scrape(sup.url)
            return s if set(by_pid(s, "casino_process_info")) == {str(pids[0]), str(again)} else None

        s = await until(replaced, 20)
        assert s, "the dead worker's gauges are still scraped"
        for url in [own[0], own[1], sup.url, sup.url]:
            s = await scrape(url)
            assert not any(dict(labels).get("pid") == str(dead) for _, labels in s)
            assert total(s, "casino_commands_accepted_total", game="roulette", command="place_bet") == acked
        await player.close()
        player = None
        assert await floor.ledger_problems() == []

        assert sup.proc is not None
        sup.proc.send_signal(signal.SIGTERM)
        assert sup.proc.wait(40) == 0, sup.log()[-3000:]
        assert not folder.exists()  # noqa: ASYNC240
    finally:
        if player is not None:
            await player.close()
        sup.clean_up()

