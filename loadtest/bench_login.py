"""Login storm benchmark: the ping round trip on an open websocket, alone and while 8
clients log in as fast as they are answered.

    .venv/bin/python -m loadtest.bench_login [--seconds 10] [--clients 8] [--json]

Starts ``casino serve`` on its own database (``loadtest.server_process.LoadServer``: the
embedded PostgreSQL in ``.casino/loadtest-pg/``, or ``DATABASE_URL``). One websocket sends
a ``ping`` every 10 ms and times each ``pong``, in three phases of ``--seconds`` each:

* ``quiet``: nothing else happens;
* ``wrong passwords``: ``--clients`` clients (another process) loop logins with wrong
  passwords, each for its own account from its own address (the attack; with the
  default limits most of them are soon answered 429 without a password check);
* ``right passwords``: the same with right passwords, so that every login checks one
  (argon2, about 0.1 s of CPU each: a login peak).

Prints p50/p99/max of the round trip per phase, the ratio to the quiet phase, and the
logins answered per second by status. Addresses come from X-Forwarded-For, which uvicorn
takes from a proxy on 127.0.0.1 (its default FORWARDED_ALLOW_IPS).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import time
from concurrent.futures import ProcessPoolExecutor

import httpx

from loadtest.server_process import ADMIN_PASSWORD, LoadServer

PASSWORD = "bench-login-pass"
PING_EVERY = 0.01


def _storm(url: str, users: list[str], password: str, subnet: str, seconds: float) -> dict[str, int]:
    """In its own process: every client logs in again as soon as it is answered."""

    async def main() -> dict[str, int]:
        statuses: dict[str, int] = {}
        stop = time.monotonic() + seconds

        async def client(n: int, user: str) -> None:
            async with httpx.AsyncClient(base_url=url, timeout=60) as http:
                while time.monotonic() < stop:
                    r = await http.post("/auth/login", json={"user": user, "password": password},
                                        headers={"X-Forwarded-For": f"{subnet}.{n}"})
                    statuses[str(r.status_code)] = statuses.get(str(r.status_code), 0) + 1

        await asyncio.gather(*(client(n, u) for n, u in enumerate(users)))
        return statuses

    return asyncio.run(main())


async def _pings(client, seconds: float) -> list[float]:
    rtts: list[float] = []
    stop = time.monotonic() + seconds
    while time.monotonic() < stop:
        t0 = time.perf_counter()
        await client.command({"type": "ping"})
        rtts.append((time.perf_counter() - t0) * 1000)
        await asyncio.sleep(PING_EVERY)
    return rtts


def _summary(rtts: list[float]) -> dict[str, float]:
    q = statistics.quantiles(rtts, n=100, method="inclusive")
    return {"pings": len(rtts), "p50_ms": round(q[49], 2), "p99_ms": round(q[98], 2), "max_ms": round(max(rtts), 2)}


async def run(srv: LoadServer, seconds: float, clients: int) -> list[dict]:
    from server.client import CasinoClient

    admin = CasinoClient(srv.url)
    await admin.login("admin", ADMIN_PASSWORD)
    wrong = [f"storm-w{n}" for n in range(clients)]
    right = [f"storm-r{n}" for n in range(clients)]
    for user in ["pinger", *wrong, *right]:
        await admin.request("POST", "/accounts", json={"user": user, "password": PASSWORD, "role": "player"})
    await admin.close()
    pinger = CasinoClient(srv.url)
    await pinger.login("pinger", PASSWORD)
    await pinger.connect()
    await _pings(pinger, 1.0)  # warm up
    out = []
    loop = asyncio.get_running_loop()
    with ProcessPoolExecutor(1) as pool:
        pool.submit(int).result()  # the worker process is up before any phase starts
        for phase, users, password, subnet in [("quiet", [], "", ""),
                                                ("wrong passwords", wrong, "wrong-" + PASSWORD, "10.1.0"),
                                                ("right passwords", right, PASSWORD, "10.2.0")]:
            storm = loop.run_in_executor(pool, _storm, srv.url, users, password, subnet, seconds + 1) if users else None
            await asyncio.sleep(0.5 if users else 0)  # the storm is on
            row = {"phase": phase, **_summary(await _pings(pinger, seconds))}
            if storm is not None:
                statuses = await storm
                row["logins_per_s"] = {k: round(v / (seconds + 1), 1) for k, v in sorted(statuses.items())}
            out.append(row)
    await pinger.close()
    base = out[0]
    for row in out:
        row["p50_ratio"] = round(row["p50_ms"] / base["p50_ms"], 2)
        row["p99_ratio"] = round(row["p99_ms"] / base["p99_ms"], 2)
    return out


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m loadtest.bench_login", description=__doc__.splitlines()[0])
    p.add_argument("--seconds", type=float, default=10.0, help="length of each phase")
    p.add_argument("--clients", type=int, default=8, help="clients logging in during a storm")
    p.add_argument("--json", action="store_true")
    a = p.parse_args(argv)
    with LoadServer() as srv:
        rows = asyncio.run(run(srv, a.seconds, a.clients))
    if a.json:
        print(json.dumps(rows, indent=2))
        return 0
    print(f"{'phase':<16} {'pings':>6} {'p50 ms':>8} {'p99 ms':>8} {'max ms':>8} {'p50 x':>6} {'p99 x':>6}  logins/s")
    for r in rows:
        print(f"{r['phase']:<16} {r['pings']:>6} {r['p50_ms']:>8} {r['p99_ms']:>8} {r['max_ms']:>8} "
              f"{r['p50_ratio']:>6} {r['p99_ratio']:>6}  {r.get('logins_per_s', '')}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
