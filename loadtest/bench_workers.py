"""The benchmark's driver processes: ``Workers`` spreads (token, table) sockets over
``procs`` processes, each an asyncio loop on uvloop, and runs closed-loop (one command in
flight per socket), open-loop (a fixed send rate, whatever the answers do) or crowd (each
socket's bets at scheduled times in a betting window) phases on them. The driver must never
be what limits a figure, so the heavy lifting is split out of the process that starts the
server."""

from __future__ import annotations

import asyncio
import collections
import contextlib
import gc
import multiprocessing as mp
import random
import time
from typing import Any

from websockets.exceptions import ConnectionClosed

from loadtest.bench_client import Sock, bet_text, percentile, sleep_until
from loadtest.bench_measure import raise_fd_limit

BET = 500  # CHF 5.00, the Campione minimum


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
    # ``spread``: each event's first and last arrival at this process's sockets (a process's
    # arrivals come in time order), for how far apart its table's sockets got it.
    spans: dict[tuple[str, int], list[float]] = {}
    acks: dict[tuple[str, int], float] = {}

    def span(table: str, seq: int, at: float) -> None:
        seen = spans.get((table, seq))
        if seen is None:
            spans[(table, seq)] = [at, at]
        else:
            seen[1] = at

    record = (lambda table, seq, at: arrivals.append((table, seq, at))) if job.get("record_events") else None
    record = span if job.get("spread") else record
    gate = asyncio.Semaphore(job.get("connect_parallel", 64))
    socks: list[Sock] = []
    targets: list[tuple[str | None, str | None]] = job["targets"]

    failed: collections.Counter = collections.Counter()  # with ``tolerate``: sockets that could not open

    async def open_one(token: str | None, table: str | None) -> tuple[Sock | None, str | None]:
        async with gate:
            s = None
            try:
                # (placed: the table's owner's own address, where the lobby names one)
                url = job.get("urls", {}).get(table) or job["url"]
                s = await Sock.open(url, token, record, light=job.get("light", False))
                if table and token:
                    await s.subscribe(table)
            except Exception as exc:
                if not job.get("tolerate"):
                    raise
                failed[f"{type(exc).__name__}: {exc}"[:120]] += 1
                if s is not None:
                    await s.close()
                return None, table
            return s, table

    opened = [(s, t) for s, t in await asyncio.gather(*(open_one(tok, tab) for tok, tab in targets)) if s]
    socks = [s for s, _ in opened]
    gc.freeze()
    outq.put(("ready", wid, len(socks)))
    while True:
        cmd = await asyncio.to_thread(inq.get)
        op = cmd["op"]
        if op == "stop":
            break
        if op == "closed":
            spans.clear()
            acks.clear()
            m0, e0 = sum(s.event_messages for s in socks), sum(s.events for s in socks)
            res = await asyncio.gather(*(_closed_loop(s, t, cmd, acks if job.get("spread") else None)
                                         for s, t in opened))
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
        elif op == "crowd":
            f0 = sum(s.event_messages for s in socks)
            res = await asyncio.gather(*(_crowd(s, t, cmd) for s, t in opened))
            refused = collections.Counter(c for r in res for c in r[1])
            outq.put(("result", wid, {"done": sum(len(r[0]) for r in res), "lat": [x for r in res for x in r[0]],
                                      "refused": dict(refused), "lag": max((r[2] for r in res), default=0.0),
                                      "sent": sum(r[3] for r in res), "unanswered": sum(r[4] for r in res),
                                      "event_messages": sum(s.event_messages for s in socks) - f0}))
        elif op == "settled":
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(asyncio.gather(*(s.reached(cmd["seq"]) for s in socks)), cmd["timeout"])
            got = [s.last_at for s in socks if s.last_seq >= cmd["seq"]]
            outq.put(("result", wid, {"at": got, "missing": len(socks) - len(got),
                                      "size": max((s.last_size for s in socks), default=0),
                                      "closed": sum(1 for s in socks if s.ws.close_code is not None)}))
        elif op == "spread":  # once no event has come for half a second (15 s at most)
            deadline = time.monotonic() + 15
            while time.monotonic() < deadline:
                count = sum(s.events for s in socks)
                await asyncio.sleep(0.5)
                if sum(s.events for s in socks) == count:
                    break
            outq.put(("result", wid, {"spans": [(t, q, a, b) for (t, q), (a, b) in spans.items()],
                                      "acks": [(t, q, at) for (t, q), at in acks.items()]}))
            spans.clear()
            acks.clear()
        elif op == "collect":
            outq.put(("result", wid, {"arrivals": arrivals[:]}))
            arrivals.clear()
        elif op == "ping":
            outq.put(("result", wid, {"open": sum(1 for s in socks if s.ws.close_code is None),
                                      "failed": dict(failed)}))
    await asyncio.gather(*(s.close() for s in socks))


async def _closed_loop(s: Sock, table: str | None, cmd: dict,
                       acked: dict[tuple[str, int], float] | None = None) -> tuple[list[float], list[str]]:
    """``acked``: each acked bet's event (table, seq) and when its ack arrived."""
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
            if acked is not None and frame.seq:
                acked[(frame.table, frame.seq)] = t1
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


async def _crowd(s: Sock, table: str | None, cmd: dict) -> tuple[list[float], list[str], float, int, int]:
    """A player's ``bets`` bets in the window: the window cut into that many equal slots, one
    bet at a random time in each (open loop: sent at its time whatever the answers do).
    (latencies, refusal codes, worst lateness of a send, bets sent, bets not sent or never answered)."""
    lat: list[float] = []
    refused: list[str] = []
    lag, unanswered = 0.0, 0
    start, slot = cmd["start_at"], (cmd["end_at"] - cmd["start_at"]) / cmd["bets"]
    pending = []

    async def wait(fut: asyncio.Future, t0: float) -> None:
        nonlocal unanswered
        try:
            frame, t1 = await asyncio.wait_for(fut, cmd.get("answer_timeout", 60))
        except (TimeoutError, ConnectionError):
            unanswered += 1
            return
        (refused.append(frame.code) if frame.type == "rejected" else lat.append(t1 - t0))

    for k in range(cmd["bets"]):
        t = start + (k + random.random()) * slot
        await sleep_until(t)
        t0 = time.monotonic()
        lag = max(lag, t0 - t)
        cid = s.new_cid()
        try:
            fut = await s.send(cid, bet_text(table or "echo", cid, random.randrange(37), BET))
        except (ConnectionError, ConnectionClosed):  # the socket closed: not sent, never answered
            s.waiting.pop(cid, None)
            unanswered += 1
            continue
        pending.append(asyncio.ensure_future(wait(fut, t0)))
    await asyncio.gather(*pending)
    return lat, refused, lag, len(pending), unanswered


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


def spread(results: list[dict]) -> dict:
    """When the players following a table saw each bet, against when its bettor had his ack:
    from the ack to the bet's event's last arrival at its table's sockets (``late``), and
    from its first arrival to its last (``spread``). Every driver process's clock is the
    machine's monotonic one."""
    first: dict[tuple[str, int], float] = {}
    last: dict[tuple[str, int], float] = {}
    for r in results:
        for table, seq, a, b in r["spans"]:
            key = (table, seq)
            first[key] = min(a, first.get(key, a))
            last[key] = max(b, last.get(key, b))
    gaps = [last[k] - first[k] for k in first]
    acks = [(t, q, at) for r in results for t, q, at in r["acks"]]
    late = [last[(t, q)] - at for t, q, at in acks if (t, q) in last]

    def ms(xs: list[float], q: float) -> float:
        return percentile(xs, q) * 1000

    return {"events": len(gaps), "p50": ms(gaps, 50), "p99": ms(gaps, 99),
            "late_p50": ms(late, 50), "late_p99": ms(late, 99), "late_max": max(late, default=float("nan")) * 1000,
            "late_over_1s": sum(1 for x in late if x > 1), "acked": len(acks),
            # acked bets whose event reached none of their table's sockets by the time they fell quiet
            "never": len(acks) - len(late)}


def merge(results: list[dict], seconds: float) -> dict:
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
