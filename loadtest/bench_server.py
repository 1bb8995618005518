"""Server benchmarks: the casino server against its own bare websocket echo, same driver, same run.

    .venv/bin/python -m loadtest.bench_server peak    [--connections 200 --tables 10 --seconds 10 --rounds 2]
    .venv/bin/python -m loadtest.bench_server fanout  [--sockets 1000 5000 --events 20]
    .venv/bin/python -m loadtest.bench_server idle    [--sockets 10000]
    .venv/bin/python -m loadtest.bench_server profile [--seconds 15]

Each starts ``casino serve`` on 127.0.0.1 with a fresh database (see ``loadtest.server_process``,
the echo endpoint switched on), sets up the floor over HTTP and drives it from ``--procs``
worker processes, each an asyncio loop on uvloop. Every phase is bounded in time and every
process is stopped at the end.

peak     closed loop (one command in flight per socket): the echo's round trips/s, then
         acknowledged bets/s (a straight bet on a live roulette table, acknowledged only
         after its PostgreSQL commit: durable), alternating ``--rounds`` times; then an open
         loop at half the bet peak for the p50/p95/p99 acknowledgement latency. The spins
         are settled between phases and the ledger is checked at the end.
fanout   sockets subscribed to one live table; a croupier drives it; for each command that
         makes one event (open, launch, rien ne va plus; the result, two events, only keeps
         the wheel turning) the time from sending it to the event's arrival at every socket.
idle     authenticated sockets, each subscribed to a table, doing nothing: the server's RSS.
profile  py-spy samples the server during the peak bet load: where the CPU time goes.
"""

from __future__ import annotations

import argparse
import asyncio
import collections
import json
import os
import random
import sys
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from games.db.embedded import PROJECT_DIR
from loadtest.bench_client import Croupier, percentile
from loadtest.bench_measure import cpu_by_group, cpu_share, raise_fd_limit, rss_kib, start_py_spy, summarize_profile
from loadtest.bench_workers import Workers, merge
from loadtest.floor import bench_floor
from loadtest.server_process import ADMIN_PASSWORD, LoadServer, ledger_problems, mint_token

OUT = PROJECT_DIR / ".casino" / "bench"


# ---- benchmarks --------------------------------------------------------------------------


async def bench_peak(srv: LoadServer, a: argparse.Namespace, profile_out: Path | None = None) -> dict:
    tables = await bench_floor(srv.url, ADMIN_PASSWORD, a.connections, a.tables)
    ws = srv.url.replace("http", "ws", 1)
    croupier = Croupier(ws + "/ws", tables)
    await croupier.open()
    players = [(mint_token(f"bp{i:05d}"), tables[i % len(tables)]) for i in range(a.connections)]
    bettors = Workers(ws + "/ws", players, a.procs)
    echoes = Workers(ws + "/ws/echo", [(None, None)] * a.connections, a.procs)
    out: dict[str, Any] = {"connections": a.connections, "tables": a.tables, "procs": a.procs, "rounds": []}
    try:
        await bettors.ready()
        await echoes.ready()

        drivers = {p.pid for p in bettors.procs + echoes.procs}

        async def phase(workers: Workers, op: str, seconds: float, **extra: Any) -> dict:
            start = time.monotonic() + 0.5
            cmd = {"op": op, "start_at": start, "end_at": start + seconds, **extra}
            cpu0, t0 = cpu_by_group(srv.pid, drivers), time.monotonic()
            results = await workers.run(cmd, seconds + 90)
            cpu = cpu_share(cpu0, cpu_by_group(srv.pid, drivers), time.monotonic() - t0)
            return {**merge(results, seconds), "cpu": cpu}

        for _ in range(a.rounds):
            echo = await phase(echoes, "closed", a.seconds)
            await croupier.open_spins()
            spy = start_py_spy(srv.pid, a.seconds, profile_out) if profile_out else None
            bets = await phase(bettors, "closed", a.seconds)
            if spy:
                await asyncio.to_thread(spy.wait, a.seconds + 60)
            await croupier.settle_spins()
            out["rounds"].append({"echo": echo, "bets": bets, "ratio": bets["per_s"] / echo["per_s"]})
            print(f"  echo {echo['per_s']:8.0f} round trips/s (p50 {echo['p50']:.1f} ms) | "
                  f"bets {bets['per_s']:8.0f} acked/s (p50 {bets['p50']:.1f} ms, p99 {bets['p99']:.1f} ms) | "
                  f"ratio {bets['per_s'] / echo['per_s']:.2f} | refused {bets['refused']}\n"
                  f"    per bet: {bets['event_frames_per']:.2f} event frames out ({bets['events_per']:.1f} events)\n"
                  f"    cores busy, echo: {echo['cpu']}; bets: {bets['cpu']}", flush=True)
            if profile_out:
                return out
        peak = sum(r["bets"]["per_s"] for r in out["rounds"]) / len(out["rounds"])
        await croupier.open_spins()
        half = await phase(bettors, "open", a.seconds, rate=peak / 2 / a.procs)
        await croupier.settle_spins()
        out["half"] = {"target_per_s": peak / 2, **half}
        print(f"  half load: {half['per_s']:.0f} bets/s acked, p50 {half['p50']:.1f} ms, p95 {half['p95']:.1f} ms, "
              f"p99 {half['p99']:.1f} ms (driver lag max {half['lag']:.1f} ms)\n    cores busy: {half['cpu']}",
              flush=True)
    finally:
        bettors.stop()
        echoes.stop()
        await croupier.sock.close()
    out["ledger_problems"] = [str(p) for p in await ledger_problems(srv.db_url)]
    return out


async def bench_fanout(srv: LoadServer, a: argparse.Namespace) -> dict:
    tables = await bench_floor(srv.url, ADMIN_PASSWORD, 1, 1)
    table = tables[0]
    ws = srv.url.replace("http", "ws", 1)
    croupier = Croupier(ws + "/ws", tables)
    await croupier.open()
    token = mint_token("bp00000")
    out: dict[str, Any] = {}
    steps = [{"type": "open_spin"}, {"type": "launch_ball"}, {"type": "no_more_bets"},
             {"type": "result", "number": 0, "source": "croupier"}]
    for n in a.sockets:
        watchers = Workers(ws + "/ws", [(token, table)] * n, a.procs, record_events=True, connect_parallel=100)
        try:
            connected = await watchers.ready()
            await asyncio.sleep(1)
            await watchers.run({"op": "collect"}, 60)  # drop what subscribing brought
            sent: dict[int, tuple[float, float]] = {}
            drivers = {p.pid for p in watchers.procs}
            cpu0, c0 = cpu_by_group(srv.pid, drivers), time.monotonic()
            for i in range(a.events):
                cmd = dict(steps[i % len(steps)])
                if cmd["type"] == "result":
                    cmd["number"] = random.randrange(37)
                frame, t0, t1 = await croupier.play(table, cmd)
                if cmd["type"] != "result":  # the result is two events (number, settlement): not "one event"
                    sent[frame.seq] = (t0, t1)
                await asyncio.sleep(a.gap)
            await asyncio.sleep(1)
            cpu = cpu_share(cpu0, cpu_by_group(srv.pid, drivers), time.monotonic() - c0)
            arrivals = [x for r in await watchers.run({"op": "collect"}, 60) for x in r["arrivals"]]
        finally:
            watchers.stop()
        delays = [at - sent[seq][0] for tab, seq, at in arrivals if seq in sent]
        got = collections.Counter(seq for tab, seq, at in arrivals if seq in sent)
        acks = [t1 - t0 for t0, t1 in sent.values()]
        out[n] = {"sockets": connected, "events": len(sent), "deliveries": len(delays),
                  "expected": connected * len(sent), "min_per_event": min(got.values(), default=0),
                  "p50": percentile(delays, 50) * 1000, "p99": percentile(delays, 99) * 1000,
                  "max": max(delays, default=float("nan")) * 1000, "ack_p50": percentile(acks, 50) * 1000,
                  "cpu": cpu}
        r = out[n]
        print(f"  {connected} sockets: {r['deliveries']}/{r['expected']} deliveries, p50 {r['p50']:.1f} ms, "
              f"p99 {r['p99']:.1f} ms, max {r['max']:.1f} ms (croupier's ack p50 {r['ack_p50']:.1f} ms)\n"
              f"    cores busy over the {len(sent)} events: {cpu}", flush=True)
        await asyncio.sleep(2)
    await croupier.sock.close()
    return out


async def bench_idle(srv: LoadServer, a: argparse.Namespace) -> dict:
    tables = await bench_floor(srv.url, ADMIN_PASSWORD, 100, 4)
    ws = srv.url.replace("http", "ws", 1)
    tokens = [mint_token(f"bp{i:05d}") for i in range(100)]
    before = rss_kib(srv.pid)
    targets = [(tokens[i % 100], tables[i % len(tables)]) for i in range(a.sockets)]
    idle = Workers(ws + "/ws", targets, a.procs, connect_parallel=100)
    try:
        connected = await idle.ready(600)
        await asyncio.sleep(a.hold)
        still = sum(r["open"] for r in await idle.run({"op": "ping"}, 60))
        after = rss_kib(srv.pid)
    finally:
        idle.stop()
    out = {"sockets": connected, "open_after_hold": still, "rss_before_mib": before / 1024,
           "rss_mib": after / 1024, "per_socket_kib": (after - before) / max(1, connected)}
    print(f"  {connected} sockets connected and subscribed ({still} still open after {a.hold:.0f} s): server RSS "
          f"{after / 1024:.0f} MiB (before: {before / 1024:.0f} MiB; {out['per_socket_kib']:.1f} KiB per socket)")
    return out


# ---- command line ------------------------------------------------------------------------


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m loadtest.bench_server", description=__doc__.splitlines()[0])
    sub = p.add_subparsers(dest="bench", required=True)
    for name in ("peak", "profile"):
        s = sub.add_parser(name)
        s.add_argument("--connections", type=int, default=200)
        s.add_argument("--tables", type=int, default=10)
        s.add_argument("--seconds", type=float, default=10)
        s.add_argument("--rounds", type=int, default=2)
        s.add_argument("--procs", type=int, default=2)
    s = sub.add_parser("fanout")
    s.add_argument("--sockets", type=int, nargs="+", default=[1000, 5000])
    s.add_argument("--events", type=int, default=20)
    s.add_argument("--gap", type=float, default=1.0, help="seconds between the croupier's commands")
    s.add_argument("--procs", type=int, default=2)
    s = sub.add_parser("idle")
    s.add_argument("--sockets", type=int, default=10_000)
    s.add_argument("--hold", type=float, default=20, help="seconds the sockets stay idle before measuring")
    s.add_argument("--procs", type=int, default=2)
    a = p.parse_args(argv)
    raise_fd_limit()  # inherited by the server and the workers
    OUT.mkdir(parents=True, exist_ok=True)
    stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%S")
    # Benchmarks keep the default clocks (RNG timers are not used: every table is live).
    env = {"CASINO_HEARTBEAT_SECONDS": "15", "CASINO_SEND_QUEUE_FRAMES": "2000"}
    print(f"{a.bench}: {os.cpu_count()} cores, {stamp}", flush=True)
    with LoadServer(env=env, log_path=OUT / f"{a.bench}-{stamp}-server.log") as srv:
        if a.bench == "peak":
            result = asyncio.run(bench_peak(srv, a))
        elif a.bench == "profile":
            raw = OUT / f"profile-{stamp}.txt"
            a.rounds = 1
            result = asyncio.run(bench_peak(srv, a, profile_out=raw))
            time.sleep(1)
            summary = summarize_profile(raw)
            (OUT / f"profile-{stamp}-summary.txt").write_text(summary)
            print(summary)
        elif a.bench == "fanout":
            result = asyncio.run(bench_fanout(srv, a))
        else:
            result = asyncio.run(bench_idle(srv, a))
    path = OUT / f"{a.bench}-{stamp}.json"
    path.write_text(json.dumps(result, indent=1, default=str))
    print(f"results: {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
