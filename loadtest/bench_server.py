"""Server benchmarks: the casino server against its own bare websocket echo, same driver, same run.

    .venv/bin/python -m loadtest.bench_server peak    [--connections 200 --tables 10 --seconds 10 --rounds 2]
    .venv/bin/python -m loadtest.bench_server fanout  [--sockets 1000 5000 --events 20]
    .venv/bin/python -m loadtest.bench_server idle    [--sockets 10000 20000]
    .venv/bin/python -m loadtest.bench_server crowd   [--players 2000 --bets 5 --window 15]
    .venv/bin/python -m loadtest.bench_server profile [--seconds 15]
    .venv/bin/python -m loadtest.bench_server scale   [--workers 1 2 --rounds 2 --sockets 2000]

Each starts ``casino serve`` on 127.0.0.1 with a fresh database (see ``loadtest.server_process``,
the echo endpoint switched on), sets up the floor over HTTP and drives it from ``--procs``
worker processes, each an asyncio loop on uvloop. Every phase is bounded in time and every
process is stopped at the end.

peak     closed loop (one command in flight per socket): the echo's round trips/s, then
         acknowledged bets/s (a straight bet on a live roulette table, acknowledged only
         after its PostgreSQL commit: durable), alternating ``--rounds`` times; then an open
         loop at half the bet peak for the p50/p95/p99 acknowledgement latency. The spins
         are settled between phases and the ledger is checked at the end. With the bets,
         what the other players see: each ack against its bet's event at the last of its
         table's sockets (all the drivers on the machine's monotonic clock). First
         ``--warmup`` seconds of bets, then ``ANALYZE``: a floor that has run a while, not a
         database whose plans were made on empty tables (``server_process.analyze``).
         ``--history N``: before all that, N past bets' rows written into the database
         (``loadtest.history``): the same floor after months of play.
fanout   sockets subscribed to one live table; a croupier drives it; for each command that
         makes one event (open, launch, rien ne va plus; the result, two events, only keeps
         the wheel turning) the time from sending it to the event's arrival at every socket.
idle     authenticated sockets, each subscribed to a table, doing nothing: the server's RSS
         and RSS per socket, for each ``--sockets`` size in turn, each on a fresh server.
crowd    one live wheel, ``--players`` sockets each a player subscribed to it; the croupier
         opens the spin, every player places ``--bets`` straight bets at random times spread
         evenly over a ``--window`` betting window (open loop: sent at their times whatever
         the answers do), then the croupier launches, closes and enters the number. Bets
         sent, acked, refused by code; ack latency; cores busy over the window; the
         settlement's time (the result's ack, and its events' arrival at the last socket),
         the event loop's lag and ``GET /health/live``'s round trips meanwhile (what anyone
         else the process serves waited); the ledger check.
profile  py-spy samples the server during the peak bet load: where the CPU time goes
         (``--native``: down to the C frames and syscalls below the Python ones; ``--cpu``:
         cProfile on the server's CPU clock instead, ``loadtest/cpu_profile``, which does
         not count a write's wait for the core it gave away).
scale    ``casino serve --workers N`` for each N of ``--workers`` in turn, alternating
         ``--rounds`` times, each on a fresh server: peak (one closed-loop round: echo and
         acked bets/s; then the half-load latency) and fanout (one event to ``--sockets``
         sockets); then each N's acked bets/s and fan-out p99 against one process's, from
         the same run. The sockets land on the workers as the kernel hands them out, so
         about (N-1)/N of the bets go to a table served by another worker (forwarded);
         ``--placed``: each worker also serves a port of its own (``--worker-ports``) and each
         player's socket opens at his table's owner's, as the lobby names it: none forwarded.
"""

from __future__ import annotations

import argparse
import asyncio
import collections
import json
import math
import os
import random
import sys
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import httpx

from games.db.embedded import PROJECT_DIR
from loadtest import history
from loadtest.bench_client import Croupier, percentile, sleep_until
from loadtest.bench_measure import (
    CPU_PROFILE_ENV,
    CPU_PROFILE_SITE,
    SERVER_HISTOGRAMS,
    CpuProfile,
    cores_busy,
    cpu_by_group,
    cpu_per_operation,
    cpu_share,
    cpu_used,
    histogram_summary,
    in_echo_round_trips,
    raise_fd_limit,
    rss_kib,
    scrape_histograms,
    start_py_spy,
    summarize_cpu_profile,
    summarize_profile,
)
from loadtest.bench_workers import Workers, merge, spread
from loadtest.floor import bench_floor
from loadtest.server_process import ADMIN_PASSWORD, LoadServer, analyze, ledger_problems, mint_token

OUT = PROJECT_DIR / ".casino" / "bench"
# The server's settings for every benchmark. They keep the default clocks (RNG timers are not
# used: every table is live).
BENCH_ENV = {"CASINO_HEARTBEAT_SECONDS": "15", "CASINO_SEND_QUEUE_FRAMES": "2000"}


# ---- benchmarks --------------------------------------------------------------------------


async def bench_peak(srv: LoadServer, a: argparse.Namespace, profile_out: Path | None = None) -> dict:
    tables = await bench_floor(srv.url, ADMIN_PASSWORD, a.connections, a.tables)
    ws = srv.url.replace("http", "ws", 1)
    croupier = Croupier(ws + "/ws", tables)
    await croupier.open()
    seats = [(f"bp{i:05d}", tables[i % len(tables)]) for i in range(a.connections)]  # bench_floor's players
    players = [(mint_token(p), t) for p, t in seats]
    urls = await placed_urls(srv, tables) if getattr(a, "placed", False) else {}
    bettors = Workers(ws + "/ws", players, a.procs, urls=urls, spread=True)
    echoes = Workers(ws + "/ws/echo", [(None, None)] * a.connections, a.procs)
    out: dict[str, Any] = {"connections": a.connections, "tables": a.tables, "procs": a.procs, "rounds": []}
    if getattr(a, "history", 0):  # a floor with a past: its bets' rows already in the database
        out["history"] = await history.fill(srv.db_url, seats, a.history)
        print(f"  history: {a.history:,} past bets written in {out['history']['seconds']:.0f} s; the database "
              f"{out['history']['database_bytes'] / 2**20:,.0f} MiB", flush=True)
    try:
        await bettors.ready()
        await echoes.ready()

        drivers = {p.pid for p in bettors.procs + echoes.procs}

        async def phase(workers: Workers, op: str, seconds: float, **extra: Any) -> dict:
            start = time.monotonic() + 0.5
            cmd = {"op": op, "start_at": start, "end_at": start + seconds, **extra}
            cpu0, t0 = cpu_by_group(srv.pid, drivers), time.monotonic()
            results = await workers.run(cmd, seconds + 90)
            used = cpu_used(cpu0, cpu_by_group(srv.pid, drivers))
            return {**merge(results, seconds), "cpu": cores_busy(used, time.monotonic() - t0), "cpu_s": used}

        if a.warmup > 0:  # a floor that has run a while: history in its tables, then ANALYZE
            await croupier.open_spins()
            await phase(bettors, "closed", a.warmup)
            await croupier.settle_spins()
            await analyze(srv.db_url)
            out["warmup_seconds"] = a.warmup
        for _ in range(a.rounds):
            echo = await phase(echoes, "closed", a.seconds)
            await croupier.open_spins()
            spy: Any = None
            if profile_out and getattr(a, "cpu", False):
                # From a second into the phase (it starts half a second from now) to a second
                # before its end: the closed loop running, not its sockets' first frames.
                spy = CpuProfile(srv.pid, a.seconds - 2, start_in=1.5)
            elif profile_out:
                spy = start_py_spy(srv.pid, a.seconds, profile_out, native=a.native)
            try:
                bets = await phase(bettors, "closed", a.seconds)
            except BaseException:
                if isinstance(spy, CpuProfile):
                    spy.cancel()
                raise
            if spy:
                await asyncio.to_thread(spy.wait, a.seconds + 60)
            bets["spread"] = spread(await bettors.run({"op": "spread"}, 60))
            await croupier.settle_spins()
            out["rounds"].append({"echo": echo, "bets": bets, "ratio": bets["per_s"] / echo["per_s"]})
            print(f"  echo {echo['per_s']:8.0f} round trips/s (p50 {echo['p50']:.1f} ms) | "
                  f"bets {bets['per_s']:8.0f} acked/s (p50 {bets['p50']:.1f} ms, p99 {bets['p99']:.1f} ms) | "
                  f"ratio {bets['per_s'] / echo['per_s']:.2f} | refused {bets['refused']}\n"
                  f"    per bet: {bets['event_frames_per']:.2f} event frames out ({bets['events_per']:.1f} events "
                  f"by the phase's end)\n"
                  f"    a bet's ack to its event at the last of its table's sockets: p50 "
                  f"{bets['spread']['late_p50']:.1f} ms, p99 {bets['spread']['late_p99']:.1f} ms, max "
                  f"{bets['spread']['late_max']:.0f} ms ({bets['spread']['late_over_1s']} of "
                  f"{bets['spread']['acked']} over 1 s, {bets['spread']['never']} never); first to last socket "
                  f"p99 {bets['spread']['p99']:.1f} ms\n"
                  f"    cores busy, echo: {echo['cpu']}; bets: {bets['cpu']}", flush=True)
            if not profile_out:  # (a profiler in the server inflates its share)
                print(f"    {bet_cost(echo, bets)}", flush=True)
            if profile_out:
                return out
        peak = sum(r["bets"]["per_s"] for r in out["rounds"]) / len(out["rounds"])
        await croupier.open_spins()
        seen = await server_histograms(srv)
        half = await phase(bettors, "open", a.seconds, rate=peak / 2 / a.procs)
        inside = server_view(seen, await server_histograms(srv))
        await croupier.settle_spins()
        out["half"] = {"target_per_s": peak / 2, **half, "server": inside}
        print(f"  half load: {half['per_s']:.0f} bets/s acked, p50 {half['p50']:.1f} ms, p95 {half['p95']:.1f} ms, "
              f"p99 {half['p99']:.1f} ms (driver lag max {half['lag']:.1f} ms)\n    cores busy: {half['cpu']}; "
              f"a bet's CPU {half_cost(half, [r['bets'] for r in out['rounds']]):.2f} x the peak's", flush=True)
        if inside:
            ack, commit, batch, lag, collector = (inside[k] for k in SERVER_HISTOGRAMS)
            print(f"    the server's view: arrival at the table to ack mean {ack['mean'] * 1000:.1f} ms "
                  f"(p50 <= {ack['p50_le'] * 1000:g}, p99 <= {ack['p99_le'] * 1000:g}); commit mean "
                  f"{commit['mean'] * 1000:.1f} ms (p50 <= {commit['p50_le'] * 1000:g}, p99 <= "
                  f"{commit['p99_le'] * 1000:g}); {batch['mean']:.1f} commands a batch "
                  f"({commit['count']:.0f} batches); {loop_lag(lag)}; {gc_pauses(collector)}", flush=True)
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


async def bench_crowd(srv: LoadServer, a: argparse.Namespace) -> dict:
    """One live wheel, ``players`` sockets (one player each), ``bets`` bets each in the window."""
    t_setup = time.monotonic()
    tables = await bench_floor(srv.url, ADMIN_PASSWORD, a.players, 1, parallel=16, db_url=srv.db_url,
                               settings={"crowd": True} if a.crowd_table else None)
    table = tables[0]
    ws = srv.url.replace("http", "ws", 1)
    croupier = Croupier(ws + "/ws", tables)
    await croupier.open()
    targets = [(mint_token(f"bp{i:05d}"), table) for i in range(a.players)]
    players = Workers(ws + "/ws", targets, a.procs, connect_parallel=100, light=True)
    out: dict[str, Any] = {"players": a.players, "bets_each": a.bets, "window_s": a.window, "procs": a.procs,
                           "crowd_table": a.crowd_table}
    try:
        connected = await players.ready(600)
        out["connected"] = connected
        print(f"  {connected} players connected and subscribed (floor and sockets: "
              f"{time.monotonic() - t_setup:.0f} s)", flush=True)
        if getattr(a, "echo_seconds", 0) > 0:  # the same run's yardstick, as in ``peak``
            echoes = Workers(ws + "/ws/echo", [(None, None)] * 200, a.procs)
            try:
                await echoes.ready()
                t = time.monotonic() + 0.5
                echo = merge(await echoes.run({"op": "closed", "start_at": t, "end_at": t + a.echo_seconds},
                                              a.echo_seconds + 60), a.echo_seconds)
            finally:
                echoes.stop()
            out["echo"] = {"per_s": echo["per_s"], "p50": echo["p50"], "sockets": 200}
            print(f"  baseline: bare echo {echo['per_s']:.0f} round trips/s (200 sockets, closed loop, "
                  f"{a.echo_seconds:.0f} s; p50 {echo['p50']:.1f} ms)", flush=True)
        await asyncio.sleep(1)
        await croupier.play(table, {"type": "open_spin"})
        drivers = {p.pid for p in players.procs}
        start = time.monotonic() + 1.0
        cmd = {"op": "crowd", "start_at": start, "end_at": start + a.window, "bets": a.bets}
        running = asyncio.ensure_future(players.run(cmd, a.window + 120))
        await sleep_until(start)
        cpu0 = cpu_by_group(srv.pid, drivers)
        await sleep_until(start + a.window)
        window_cpu = cpu_share(cpu0, cpu_by_group(srv.pid, drivers), time.monotonic() - start)
        results = await running
        drained = time.monotonic() - (start + a.window)
        lat = [x for r in results for x in r["lat"]]
        refused: collections.Counter = collections.Counter()
        for r in results:
            refused.update(r["refused"])
        sent = sum(r["sent"] for r in results)
        frames = sum(r["event_messages"] for r in results)
        out["bets"] = {"scheduled": connected * a.bets, "sent": sent, "acked": len(lat), "refused": dict(refused),
                       "unanswered": sum(r["unanswered"] for r in results),
                       "p50": percentile(lat, 50) * 1000, "p95": percentile(lat, 95) * 1000,
                       "p99": percentile(lat, 99) * 1000, "max": max(lat, default=float("nan")) * 1000,
                       "send_lag_max": max(r["lag"] for r in results) * 1000,
                       "acked_per_s": len(lat) / a.window, "last_ack_after_window_s": drained,
                       "event_frames_per_socket": frames / max(1, connected), "cpu": window_cpu}
        b = out["bets"]
        print(f"  bets: {b['sent']} sent of {b['scheduled']}, {b['acked']} acked, refused {b['refused'] or 0}, "
              f"unanswered {b['unanswered']} ({b['acked_per_s']:.0f} acked/s over the {a.window:.0f} s window)\n"
              f"    ack p50 {b['p50']:.1f} ms, p95 {b['p95']:.1f} ms, p99 {b['p99']:.1f} ms, max {b['max']:.1f} ms "
              f"(driver's send lag max {b['send_lag_max']:.1f} ms; last ack {drained:.2f} s after the window)\n"
              f"    {b['event_frames_per_socket']:.0f} event frames per socket in the window (one per batch)\n"
              f"    cores busy over the window: {window_cpu}", flush=True)

        await croupier.play(table, {"type": "launch_ball"})
        await croupier.play(table, {"type": "no_more_bets"})
        seen = await server_histograms(srv)
        cpu0 = cpu_by_group(srv.pid, drivers)
        checks: list[float] = []
        probe = asyncio.ensure_future(keep_checking_live(srv.url, checks))
        try:
            frame, t0, t1 = await croupier.play(table, {"type": "result", "number": random.randrange(37),
                                                        "source": "croupier"})
            settled = await players.run({"op": "settled", "seq": frame.seq, "timeout": 120}, 180)
        finally:
            probe.cancel()
        cpu = cpu_share(cpu0, cpu_by_group(srv.pid, drivers), time.monotonic() - t0)
        inside = server_view(seen, await server_histograms(srv))
        arrivals = [at - t0 for r in settled for at in r["at"]]
        out["settlement"] = {"ack_ms": (t1 - t0) * 1000, "sockets": len(arrivals),
                             "frame_bytes": max(r["size"] for r in settled),
                             "server_rss_mib": rss_kib(srv.pid) / 1024,
                             "server_peak_rss_mib": rss_kib(srv.pid, "VmHWM") / 1024,
                             "missing": sum(r["missing"] for r in settled),
                             "closed": sum(r["closed"] for r in settled),
                             "first_socket_ms": min(arrivals, default=float("nan")) * 1000,
                             "p50_socket_ms": percentile(arrivals, 50) * 1000,
                             "last_socket_ms": max(arrivals, default=float("nan")) * 1000, "cpu": cpu,
                             "loop_lag": inside["casino_event_loop_lag_seconds"] if inside else None,
                             "gc_pauses": inside["casino_gc_pause_seconds"] if inside else None,
                             "health_checks": len(checks), "health_p50_ms": percentile(checks, 50) * 1000,
                             "health_max_ms": max(checks, default=float("nan")) * 1000}
        st = out["settlement"]
        print(f"  settlement of {b['acked']} bets: result acked in {st['ack_ms']:.0f} ms; reached {st['sockets']} "
              f"sockets (missing {st['missing']}, closed {st['closed']}): first {st['first_socket_ms']:.0f} ms, "
              f"p50 {st['p50_socket_ms']:.0f} ms, last {st['last_socket_ms']:.0f} ms after the result was sent\n"
              f"    its events frame: {st['frame_bytes'] / 1e6:.2f} MB to each socket; server RSS "
              f"{st['server_rss_mib']:.0f} MiB (peak {st['server_peak_rss_mib']:.0f} MiB)\n"
              f"    cores busy until the last socket had it: {cpu}\n"
              f"    {loop_lag(st['loop_lag'])}; {gc_pauses(st['gc_pauses'])}\n"
              f"    GET /health/live meanwhile: {st['health_checks']} checks, "
              f"p50 {st['health_p50_ms']:.1f} ms, max {st['health_max_ms']:.0f} ms", flush=True)
    finally:
        players.stop()
        await croupier.sock.close()
    out["ledger_problems"] = [str(p) for p in await ledger_problems(srv.db_url)]
    print(f"  ledger check: {'clean' if not out['ledger_problems'] else out['ledger_problems']}", flush=True)
    return out


async def bench_idle(srv: LoadServer, a: argparse.Namespace, n: int) -> dict:
    """``n`` idle sockets on a fresh server: its RSS with them, less its RSS before, per socket.
    (One server for all sizes would not do: memory the allocator kept from a smaller size is
    neither given back nor a cost of the next size's sockets.)"""
    tables = await bench_floor(srv.url, ADMIN_PASSWORD, 100, 4)
    ws = srv.url.replace("http", "ws", 1)
    tokens = [mint_token(f"bp{i:05d}") for i in range(100)]
    before = rss_kib(srv.pid)
    targets = [(tokens[i % 100], tables[i % len(tables)]) for i in range(n)]
    # A socket that cannot open (the server out of file descriptors, the client out of
    # ports) is counted, with why, rather than ending the run.
    idle = Workers(ws + "/ws", targets, a.procs, connect_parallel=100, tolerate=True)
    try:
        connected = await idle.ready(900)
        await asyncio.sleep(a.hold)
        pings = await idle.run({"op": "ping"}, 60)
        after = rss_kib(srv.pid)
    finally:
        idle.stop()
    still = sum(r["open"] for r in pings)
    failed: collections.Counter = collections.Counter()
    for r in pings:
        failed.update(r["failed"])
    out = {"sockets": connected, "open_after_hold": still, "failed": dict(failed), "rss_before_mib": before / 1024,
           "rss_mib": after / 1024, "per_socket_kib": (after - before) / max(1, connected)}
    print(f"  {connected} of {n} sockets connected and subscribed ({still} still open after {a.hold:.0f} s): "
          f"server RSS {after / 1024:.0f} MiB (before: {before / 1024:.0f} MiB; {out['per_socket_kib']:.1f} KiB "
          f"per socket)", flush=True)
    if failed:
        print(f"    could not open: {dict(failed)}", flush=True)
    return out


def bench_scale(a: argparse.Namespace, env: dict[str, str], stamp: str) -> dict:
    """Each worker count in turn, ``a.rounds`` times, a fresh server each time."""
    runs: dict[int, list[dict]] = {n: [] for n in a.workers}
    for r in range(a.rounds):
        for n in a.workers:
            print(f"-- {n} worker(s), round {r + 1}", flush=True)
            log = OUT / f"scale-{stamp}-{n}w-{r}-server.log"
            placed = {"CASINO_WORKER_PORTS": "0"} if a.placed and n > 1 else {}
            with LoadServer(env={**env, **placed}, log_path=log, workers=n) as srv:
                peak = asyncio.run(bench_peak(srv, argparse.Namespace(**{**vars(a), "rounds": 1,
                                                                           "placed": bool(placed)})))
            fan = {}
            if a.sockets:  # a floor of its own, on a fresh server
                with LoadServer(env=env, log_path=log.with_suffix(".fanout.log"), workers=n) as srv:
                    fan = asyncio.run(bench_fanout(srv, argparse.Namespace(**{**vars(a), "sockets": [a.sockets]})))
            runs[n].append({"peak": peak, "fanout": fan.get(a.sockets)})

    def mean(xs: list[float]) -> float:
        return sum(xs) / len(xs) if xs else float("nan")

    def bets(n: int) -> float:
        return mean([x["peak"]["rounds"][0]["bets"]["per_s"] for x in runs[n]])

    def echo(n: int) -> float:
        return mean([x["peak"]["rounds"][0]["echo"]["per_s"] for x in runs[n]])

    def fan_p99(n: int) -> float:
        return mean([x["fanout"]["p99"] for x in runs[n] if x["fanout"]])

    summary = {}
    for n in a.workers:
        summary[n] = {"bets_per_s": bets(n), "echo_per_s": echo(n), "fanout_p99_ms": fan_p99(n),
                      "bets_vs_first": bets(n) / bets(a.workers[0]), "half_p99_ms":
                      mean([x["peak"]["half"]["p99"] for x in runs[n]])}
        print(f"  {n} worker(s): {summary[n]['bets_per_s']:.0f} acked bets/s ({summary[n]['bets_vs_first']:.2f} x "
              f"{a.workers[0]}), echo {summary[n]['echo_per_s']:.0f}/s, half-load p99 "
              f"{summary[n]['half_p99_ms']:.1f} ms, fan-out p99 {summary[n]['fanout_p99_ms']:.0f} ms", flush=True)
    return {"runs": runs, "summary": summary}


async def placed_urls(srv: LoadServer, tables: list[str], seconds: float = 90) -> dict[str, str]:
    """Each table's owner's websocket URL, as the lobby names it (``/tables``' ``ws_url``),
    once every table is at the worker the rendezvous hash prefers among the live ones (a
    table opens where it was created and moves there at the lease loop's next look)."""
    import asyncpg

    from server.placement import preferred

    token = mint_token("admin", "admin")
    conn = await asyncpg.connect(srv.db_url)
    listed: dict[str, dict] = {}
    try:
        live = [r["owner"] for r in await conn.fetch("SELECT owner FROM casino_processes")]
        deadline = time.monotonic() + seconds
        async with httpx.AsyncClient(base_url=srv.url, headers={"Authorization": f"Bearer {token}"}) as http:
            while time.monotonic() < deadline:
                listed = {t["id"]: t for t in (await http.get("/tables")).json()}
                if all(t in listed and listed[t]["owner"] == preferred(t, live) and listed[t]["ws_url"]
                       for t in tables):
                    urls = {t: listed[t]["ws_url"] for t in tables}
                    print(f"  placed: {len(set(urls.values()))} addresses for {len(urls)} tables "
                          f"({len(live)} workers)", flush=True)
                    return urls
                await asyncio.sleep(0.5)
    finally:
        await conn.close()
    raise RuntimeError(f"the tables were not placed within {seconds:.0f} s: "
                       f"{ {t: listed.get(t, {}).get('owner') for t in tables} }")


async def server_histograms(srv: LoadServer) -> dict[str, dict[float | str, float]] | None:
    """The server's latency and batch histograms now (``--workers``: every worker's, summed;
    a scrape of any answers for all); None where the scrape is refused."""
    async with httpx.AsyncClient() as http:
        r = await http.get(srv.url + "/metrics")
    return scrape_histograms(r.text) if r.status_code == 200 else None


async def keep_checking_live(url: str, out: list[float], every: float = 0.05) -> None:
    """Round trips of ``GET /health/live``, one every ``every`` s, into ``out`` until
    cancelled: how long the server kept a request waiting while it did something else (what
    another table's player, or a load balancer's check, would wait)."""
    async with httpx.AsyncClient(base_url=url, timeout=120) as http:
        while True:
            t = time.monotonic()
            (await http.get("/health/live")).raise_for_status()
            out.append(time.monotonic() - t)
            await asyncio.sleep(every)


def bet_cost(echo: dict, bets: dict) -> str:
    """A bet's CPU in the echo's round trips, in words: each group's share, the ratio those
    costs allow at the run's CPU use (``in_echo_round_trips``), and that ratio were the
    server's share free, at the same CPU use and batch sizes (an estimate, not a bound)."""
    c = in_echo_round_trips(echo, bets)
    rest = c["all"] - c["server"]
    return (f"a bet's CPU in echo round trips: server {c['server']:.1f}, PostgreSQL {c['postgres']:.1f}, Redis "
            f"{c['redis']:.1f}, driver {c['driver']:.1f}; {c['all']:.1f} in all: a ratio of {_inverse(c['all']):.2f} "
            f"at this CPU use, {_inverse(rest):.2f} were the server's free")


def half_cost(half: dict, peak: list[dict]) -> float:
    """A bet's CPU at half load over the peak's, the peak's rounds taken together."""
    at_peak = cpu_per_operation(*peak)
    return cpu_per_operation(half) / at_peak if at_peak else math.nan


def _inverse(x: float) -> float:
    return 1 / x if x else math.nan


def gc_pauses(pauses: dict[str, float] | None) -> str:
    """The garbage collector's pauses in the server between two scrapes, in words."""
    if not pauses:
        return "gc pauses: not read"
    if not pauses["count"]:
        return "gc pauses: none"
    return f"gc pauses: {pauses['count']:.0f}, the longest <= {pauses['max_le'] * 1000:g} ms"


def loop_lag(lag: dict[str, float] | None) -> str:
    """The server's event loop lag between two scrapes, in words."""
    if not lag:
        return "event loop lag: not read"
    return (f"event loop lag: {lag['count']:.0f} ticks, p99 <= {lag['p99_le'] * 1000:g} ms, "
            f"the largest <= {lag['max_le'] * 1000:g} ms")


def server_view(before: dict | None, after: dict | None) -> dict[str, dict[str, float]] | None:
    if before is None or after is None:
        return None
    return {name: histogram_summary(before[name], after[name]) for name in SERVER_HISTOGRAMS}


# ---- command line ------------------------------------------------------------------------


def _warmup(s: argparse.ArgumentParser) -> None:
    s.add_argument("--warmup", type=float, default=5,
                   help="seconds of bets before measuring, then ANALYZE (0: measure a fresh database)")


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
        s.add_argument("--workers", type=int, default=1, help="casino serve --workers N (the profile samples each)")
        s.add_argument("--history", type=int, default=0,
                       help="past bets written into the database first (loadtest.history): the floor after a while")
        if name == "profile":
            how = s.add_mutually_exclusive_group()
            how.add_argument("--native", action="store_true", help="the C frames too (pauses the server a sample)")
            how.add_argument("--cpu", action="store_true",
                             help="cProfile on the server's CPU clock instead of py-spy's wall-clock samples "
                                  "(one worker)")
        _warmup(s)
    s = sub.add_parser("fanout")
    s.add_argument("--sockets", type=int, nargs="+", default=[1000, 5000])
    s.add_argument("--events", type=int, default=20)
    s.add_argument("--gap", type=float, default=1.0, help="seconds between the croupier's commands")
    s.add_argument("--procs", type=int, default=2)
    s = sub.add_parser("idle")
    s.add_argument("--sockets", type=int, nargs="+", default=[10_000])
    s.add_argument("--hold", type=float, default=20, help="seconds the sockets stay idle before measuring")
    s.add_argument("--procs", type=int, default=2)
    s = sub.add_parser("crowd")
    s.add_argument("--players", type=int, default=2000, help="sockets, one player each, all at one wheel")
    s.add_argument("--bets", type=int, default=5, help="straight bets each player places in the window")
    s.add_argument("--window", type=float, default=15, help="seconds of the betting window")
    s.add_argument("--echo-seconds", type=float, default=5,
                   help="the bare echo's closed loop first (200 sockets), the run's yardstick; 0: none")
    s.add_argument("--crowd-table", action="store_true",
                   help="the wheel is a crowd table (server.crowd): each player gets his share of its stream")
    s.add_argument("--procs", type=int, default=2)
    s = sub.add_parser("scale")
    s.add_argument("--workers", type=int, nargs="+", default=[1, 2])
    s.add_argument("--rounds", type=int, default=2, help="times each worker count is measured, alternating")
    s.add_argument("--connections", type=int, default=200)
    s.add_argument("--tables", type=int, default=10)
    s.add_argument("--seconds", type=float, default=10)
    _warmup(s)
    s.add_argument("--sockets", type=int, default=2000, help="fan-out sockets (0: no fan-out phase)")
    s.add_argument("--events", type=int, default=12)
    s.add_argument("--gap", type=float, default=1.0)
    s.add_argument("--procs", type=int, default=2)
    s.add_argument("--placed", action="store_true",
                   help="each worker on a port of its own (--worker-ports), each player's socket at his table's "
                        "owner's, as the lobby names it: no command forwarded")
    a = p.parse_args(argv)
    # Inherited by the server and the workers: the server holds one fd per socket.
    sockets = max(a.sockets) if a.bench in ("idle", "fanout") else getattr(a, "players", 0)
    limit = raise_fd_limit(sockets + 1024)
    if limit < sockets + 1024:
        print(f"note: open files limited to {limit}: the server may not hold {sockets} sockets "
              f"(raise the hard limit, `ulimit -Hn`)", flush=True)
    OUT.mkdir(parents=True, exist_ok=True)
    stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%S")
    env = dict(BENCH_ENV)
    print(f"{a.bench}: {os.cpu_count()} cores, {stamp}", flush=True)
    if a.bench == "scale":
        result = bench_scale(a, env, stamp)
        path = OUT / f"{a.bench}-{stamp}.json"
        path.write_text(json.dumps(result, indent=1, default=str))
        print(f"results: {path}")
        return 0
    if a.bench == "idle":  # a fresh server for each size
        result = {}
        for n in a.sockets:
            with LoadServer(env=env, log_path=OUT / f"{a.bench}-{stamp}-{n}-server.log") as srv:
                result[n] = asyncio.run(bench_idle(srv, a, n))
        path = OUT / f"{a.bench}-{stamp}.json"
        path.write_text(json.dumps(result, indent=1, default=str))
        print(f"results: {path}")
        return 0
    if getattr(a, "cpu", False):  # the server's own profiler, started and stopped by signal
        if a.workers != 1:
            p.error("--cpu profiles one worker")
        if a.seconds <= 3:
            p.error("--cpu profiles the phase's middle: --seconds over 3")
        env[CPU_PROFILE_ENV] = str(OUT / f"profile-{stamp}-cpu")  # (pstats' binary, .<pid>)
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(CPU_PROFILE_SITE), os.environ.get("PYTHONPATH")]))
    with LoadServer(env=env, log_path=OUT / f"{a.bench}-{stamp}-server.log", workers=getattr(a, "workers", 1)) as srv:
        if a.bench == "peak":
            result = asyncio.run(bench_peak(srv, a))
        elif a.bench == "profile":
            raw = OUT / f"profile-{stamp}.txt"
            a.rounds = 1
            result = asyncio.run(bench_peak(srv, a, profile_out=raw))
            time.sleep(1)
            summary = (summarize_cpu_profile(Path(f"{env[CPU_PROFILE_ENV]}.{srv.pid}")) if a.cpu
                       else summarize_profile(raw))
            (OUT / f"profile-{stamp}-summary.txt").write_text(summary)
            print(summary)
        elif a.bench == "fanout":
            result = asyncio.run(bench_fanout(srv, a))
        else:
            result = asyncio.run(bench_crowd(srv, a))
    path = OUT / f"{a.bench}-{stamp}.json"
    path.write_text(json.dumps(result, indent=1, default=str))
    print(f"results: {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
