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
import gc
import json
import multiprocessing as mp
import os
import random
import resource
import subprocess
import sys
import time
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

from games.db.embedded import PROJECT_DIR
from loadtest.bench_client import Sock, bet_text, percentile, sleep_until
from loadtest.floor import CHIPS, PASSWORD
from loadtest.server_process import ADMIN_PASSWORD, JWT_SECRET, LoadServer, ledger_problems

BET = 500  # CHF 5.00, the Campione minimum
OUT = PROJECT_DIR / ".casino" / "bench"


# ---- set-up ------------------------------------------------------------------------------


def raise_fd_limit() -> int:
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft < hard:
        resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    return hard


def mint_token(user: str, role: str = "player") -> str:
    """The token the server's /auth/login would give (same secret, same claims)."""
    from litestar.security.jwt import Token

    exp = datetime.now(timezone.utc) + timedelta(hours=2)
    return Token(sub=user, exp=exp, extras={"role": role}).encode(JWT_SECRET, "HS256")


async def make_floor(url: str, players: int, tables: int, croupier: str = "bench-croupier") -> list[str]:
    """Players with chips, one croupier, ``tables`` live roulette tables; the table ids."""
    import httpx

    async with httpx.AsyncClient(base_url=url, timeout=120) as http:
        r = await http.post("/auth/login", json={"user": "admin", "password": ADMIN_PASSWORD})
        r.raise_for_status()
        http.headers["Authorization"] = f"Bearer {r.json()['token']}"
        gate = asyncio.Semaphore(8)
        # Chips come from the cage: only a cashier deposits.
        (await http.post("/accounts", json={"user": "bench-cashier", "password": PASSWORD, "role": "cashier"})
         ).raise_for_status()
        cage = {"Authorization": f"Bearer {mint_token('bench-cashier', 'cashier')}"}

        async def account(user: str, role: str) -> None:
            async with gate:
                (await http.post("/accounts", json={"user": user, "password": PASSWORD, "role": role})).raise_for_status()
                if role == "player":
                    (await http.post("/cashier/deposit", headers=cage, json={"user": user, "amount": CHIPS,
                                                                              "id": f"bench-{user}"})).raise_for_status()

        await asyncio.gather(account(croupier, "croupier"), *(account(f"bp{i:05d}", "player") for i in range(players)))
        ids = []
        for i in range(tables):
            tid = f"bench-roulette-{i}"
            (await http.post("/tables", json={"game": "roulette", "profile": "campione", "mode": "live",
                                              "id": tid})).raise_for_status()
            (await http.post(f"/tables/{tid}/staff", json={"user": croupier})).raise_for_status()
            ids.append(tid)
        return ids


class Croupier:
    """The console of every bench table, over the real protocol."""

    def __init__(self, ws_url: str, tables: list[str]) -> None:
        self.ws_url, self.tables = ws_url, tables
        self.sock: Sock | None = None

    async def open(self, on_event=None) -> None:
        self.sock = await Sock.open(self.ws_url, mint_token("bench-croupier", "croupier"), on_event)
        for t in self.tables:
            await self.sock.subscribe(t)

    async def play(self, table: str, command: dict) -> tuple[Any, float, float]:
        """(answer, sent at, answered at)."""
        assert self.sock is not None
        cid = self.sock.new_cid()
        text = json.dumps({"type": "play", "table": table, "cid": cid, "command": command})
        sent = time.monotonic()
        frame, at = await self.sock.request(cid, text)
        if frame.type != "accepted":
            raise RuntimeError(f"croupier {command['type']} at {table}: {frame.code}")
        return frame, sent, at

    async def open_spins(self) -> None:
        await asyncio.gather(*(self.play(t, {"type": "open_spin"}) for t in self.tables))

    async def settle_spins(self) -> None:
        async def one(t: str) -> None:
            for cmd in ({"type": "launch_ball"}, {"type": "no_more_bets"},
                        {"type": "result", "number": random.randrange(37), "source": "croupier"}):
                await self.play(t, cmd)

        await asyncio.gather(*(one(t) for t in self.tables))


# ---- worker processes --------------------------------------------------------------------


def _worker(wid: int, job: dict, inq: mp.Queue, outq: mp.Queue) -> None:
    import uvloop

    raise_fd_limit()
    # The driver must not be what stalls: thousands of client sockets make a big heap too.
    gc.set_threshold(100_000, 20, 100)
    try:
        uvloop.run(_work(wid, job, inq, outq))
    except BaseException as exc:  # the parent must hear about it, not wait
        outq.put(("error", wid, repr(exc)))


async def _work(wid: int, job: dict, inq: mp.Queue, outq: mp.Queue) -> None:
    arrivals: list[tuple[str, int, float]] = []
    record = (lambda table, seq, at: arrivals.append((table, seq, at))) if job.get("record_events") else None
    gate = asyncio.Semaphore(job.get("connect_parallel", 64))
    socks: list[Sock] = []
    targets: list[tuple[str | None, str | None]] = job["targets"]

    async def open_one(token: str | None, table: str | None) -> tuple[Sock, str | None]:
        async with gate:
            s = await Sock.open(job["url"], token, record)
            if table and token:
                await s.subscribe(table)
            return s, table

    opened = await asyncio.gather(*(open_one(tok, tab) for tok, tab in targets))
    socks = [s for s, _ in opened]
    gc.freeze()
    outq.put(("ready", wid, len(socks)))
    while True:
        cmd = await asyncio.to_thread(inq.get)
        op = cmd["op"]
        if op == "stop":
            break
        if op == "closed":
            m0, e0 = sum(s.event_messages for s in socks), sum(s.events for s in socks)
            res = await asyncio.gather(*(_closed_loop(s, t, cmd) for s, t in opened))
            lat = [x for r in res for x in r[0]]
            refused = collections.Counter(c for r in res for c in r[1])
            outq.put(("result", wid, {"done": len(lat), "lat": lat, "refused": dict(refused),
                                      "event_messages": sum(s.event_messages for s in socks) - m0,
                                      "events": sum(s.events for s in socks) - e0}))
        elif op == "open":
            res = await asyncio.gather(*(_open_loop(s, t, cmd, cmd["rate"] / len(opened)) for s, t in opened))
            lat = [x for r in res for x in r[0]]
            refused = collections.Counter(c for r in res for c in r[1])
            lag = max((r[2] for r in res), default=0.0)
            outq.put(("result", wid, {"done": len(lat), "lat": lat, "refused": dict(refused), "lag": lag}))
        elif op == "collect":
            outq.put(("result", wid, {"arrivals": arrivals[:]}))
            arrivals.clear()
        elif op == "ping":
            outq.put(("result", wid, {"open": sum(1 for s in socks if s.ws.close_code is None)}))
    await asyncio.gather(*(s.close() for s in socks))


async def _closed_loop(s: Sock, table: str | None, cmd: dict) -> tuple[list[float], list[str]]:
    lat, refused = [], []
    end = cmd["end_at"]
    await sleep_until(cmd["start_at"])
    while time.monotonic() < end:
        cid = s.new_cid()
        t0 = time.monotonic()
        frame, t1 = await s.request(cid, bet_text(table or "echo", cid, random.randrange(37), BET))
        if t1 > end:
            break
        if frame.type == "rejected":
            refused.append(frame.code)
        else:
            lat.append(t1 - t0)
    return lat, refused


async def _open_loop(s: Sock, table: str | None, cmd: dict, rate: float) -> tuple[list[float], list[str], float]:
    """Send at a fixed rate whatever the answers do; latency = answer - send."""
    lat, refused, pending = [], [], []
    lag = 0.0
    interval = 1.0 / rate
    t = cmd["start_at"] + random.random() * interval
    end = cmd["end_at"]

    async def wait(fut: asyncio.Future, t0: float) -> None:
        frame, t1 = await asyncio.wait_for(fut, 30)
        (refused.append(frame.code) if frame.type == "rejected" else lat.append(t1 - t0))

    while t < end:
        await sleep_until(t)
        t0 = time.monotonic()
        lag = max(lag, t0 - t)
        cid = s.new_cid()
        fut = await s.send(cid, bet_text(table or "echo", cid, random.randrange(37), BET))
        pending.append(asyncio.ensure_future(wait(fut, t0)))
        t += interval
    await asyncio.gather(*pending)
    return lat, refused, lag


class Workers:
    """``procs`` worker processes splitting ``targets`` (token, table) between them."""

    def __init__(self, url: str, targets: list, procs: int, **job: Any) -> None:
        ctx = mp.get_context("spawn")
        self.outq: mp.Queue = ctx.Queue()
        self.inqs = [ctx.Queue() for _ in range(procs)]
        self.procs = []
        for w in range(procs):
            part = {"url": url, "targets": targets[w::procs], **job}
            p = ctx.Process(target=_worker, args=(w, part, self.inqs[w], self.outq), daemon=True)
            p.start()
            self.procs.append(p)

    def _gather(self, kind: str, timeout: float) -> list[Any]:
        out = []
        deadline = time.monotonic() + timeout
        while len(out) < len(self.procs):
            msg = self.outq.get(timeout=max(0.1, deadline - time.monotonic()))
            if msg[0] == "error":
                raise RuntimeError(f"worker {msg[1]}: {msg[2]}")
            if msg[0] == kind:
                out.append(msg[2])
        return out

    async def ready(self, timeout: float = 300) -> int:
        return sum(await asyncio.to_thread(self._gather, "ready", timeout))

    async def run(self, cmd: dict, timeout: float) -> list[dict]:
        for q in self.inqs:
            q.put(cmd)
        return await asyncio.to_thread(self._gather, "result", timeout)

    def stop(self) -> None:
        for q in self.inqs:
            q.put({"op": "stop"})
        for p in self.procs:
            p.join(20)
            if p.is_alive():
                p.terminate()
                p.join(5)


def _merge(results: list[dict], seconds: float) -> dict:
    lat = [x for r in results for x in r["lat"]]
    refused: collections.Counter = collections.Counter()
    for r in results:
        refused.update(r["refused"])
    return {"per_s": len(lat) / seconds, "done": len(lat), "refused": dict(refused),
            "p50": percentile(lat, 50) * 1000, "p95": percentile(lat, 95) * 1000, "p99": percentile(lat, 99) * 1000,
            "lag": max((r.get("lag", 0.0) for r in results), default=0.0) * 1000,
            # Table event frames the sockets received, and the events in them, per answered command.
            "event_frames_per": sum(r.get("event_messages", 0) for r in results) / max(len(lat), 1),
            "events_per": sum(r.get("events", 0) for r in results) / max(len(lat), 1)}


def cpu_by_group(server_pid: int, driver_pids: set[int]) -> dict[str, float]:
    """CPU seconds used so far by the server, PostgreSQL, the drivers and everything else."""
    tick = os.sysconf("SC_CLK_TCK")
    out = {"server": 0.0, "postgres": 0.0, "driver": 0.0, "other": 0.0}
    for d in Path("/proc").iterdir():
        if not d.name.isdigit():
            continue
        try:
            raw = (d / "stat").read_text()
        except OSError:
            continue
        comm = raw[raw.index("(") + 1:raw.rindex(")")]
        fields = raw[raw.rindex(")") + 2:].split()
        used = (int(fields[11]) + int(fields[12])) / tick
        pid = int(d.name)
        group = ("server" if pid == server_pid else "driver" if pid in driver_pids or pid == os.getpid()
                 else "postgres" if comm.startswith("postgres") else "other")
        out[group] += used
    return out


def cpu_share(before: dict[str, float], after: dict[str, float], seconds: float) -> dict[str, float]:
    """Cores busy per group over ``seconds`` (2.0 = both cores of this machine)."""
    return {k: round((after[k] - before[k]) / seconds, 2) for k in before}


def rss_kib(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    return 0


# ---- benchmarks --------------------------------------------------------------------------


async def bench_peak(srv: LoadServer, a: argparse.Namespace, profile_out: Path | None = None) -> dict:
    tables = await make_floor(srv.url, a.connections, a.tables)
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
            return {**_merge(results, seconds), "cpu": cpu}

        for _ in range(a.rounds):
            echo = await phase(echoes, "closed", a.seconds)
            await croupier.open_spins()
            spy = _start_py_spy(srv.pid, a.seconds, profile_out) if profile_out else None
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
              f"p99 {half['p99']:.1f} ms (driver lag max {half['lag']:.1f} ms)\n    cores busy: {half['cpu']}", flush=True)
    finally:
        bettors.stop()
        echoes.stop()
        await croupier.sock.close()
    out["ledger_problems"] = [str(p) for p in await ledger_problems(srv.db_url)]
    return out



async def bench_fanout(srv: LoadServer, a: argparse.Namespace) -> dict:
    tables = await make_floor(srv.url, 1, 1)
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
    tables = await make_floor(srv.url, 100, 4)
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


def _start_py_spy(pid: int, seconds: float, out: Path) -> subprocess.Popen:
    exe = Path(sys.executable).with_name("py-spy")
    return subprocess.Popen([str(exe), "record", "--pid", str(pid), "--duration", str(int(seconds)), "--rate", "200",
                             "--format", "raw", "--output", str(out), "--nonblocking"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def summarize_profile(raw: Path, top: int = 25) -> str:
    """Self and inclusive sample shares from py-spy's collapsed stacks."""
    self_t: collections.Counter = collections.Counter()
    incl: collections.Counter = collections.Counter()
    total = 0
    for line in raw.read_text().splitlines():
        stack, _, n = line.rpartition(" ")
        if not n.isdigit():
            continue
        count = int(n)
        total += count
        frames = [f.split(" (")[0] + " (" + f.split(" (")[1].split(":")[0].split("/")[-1] + ")" if " (" in f else f
                  for f in stack.split(";")]
        self_t[frames[-1]] += count
        for f in set(frames):
            incl[f] += count
    lines = [f"{total} samples", "", "self time:"]
    lines += [f"  {100 * c / total:5.1f}%  {f}" for f, c in self_t.most_common(top)]
    lines += ["", "inclusive:"]
    lines += [f"  {100 * c / total:5.1f}%  {f}" for f, c in incl.most_common(top * 2)]
    return "\n".join(lines)


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
    stamp = datetime.now(timezone.utc).strftime("%Y%m%dT%H%M%S")
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
