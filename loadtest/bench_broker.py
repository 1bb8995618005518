"""What a process spends to take a message off Redis pub/sub: hiredis's parser against
redis-py's own, same run, same broker (the embedded Redis, in a folder of its own).

    .venv/bin/python -m loadtest.bench_broker [--messages 40000 --sizes 300 1500 4000 --rounds 2]

Every batch frame of a table reaches each process with a subscriber to it this way, and
every forwarded command and its answer (``server.router``): with ``--workers N`` a process
takes every table's frames, so this cost is paid N times over. The publisher fills the
subscriber's socket in chunks of 2,000 (one pipeline each), then only the reading is timed
(the process's CPU time, ``time.process_time``), through ``PubSub.get_message`` as Litestar's
Redis backend reads.
"""

from __future__ import annotations

import argparse
import asyncio
import shutil
import sys
import tempfile
import time
from pathlib import Path

import redis.asyncio as aioredis

try:  # (redis-py's parser classes are not public API: name them where they moved)
    from redis._parsers import _AsyncHiredisParser, _AsyncRESP2Parser
except ImportError as exc:  # pragma: no cover
    raise SystemExit(f"this redis-py keeps its parsers elsewhere ({exc}): update loadtest/bench_broker.py") from exc

from server import redis_embedded

CHUNK = 2000  # published per pipeline, then read: well inside Redis's 32 MB pub/sub buffer
# redis-py's own parser: asked for as RESP2's, it reads RESP3 with its RESP3 sibling when the
# connection speaks RESP3 (redis-py 8's default); either way, Python parsing each message.
PARSERS = {"hiredis": _AsyncHiredisParser, "redis-py": _AsyncRESP2Parser}


async def receive_cpu(url: str, parser: type, messages: int, size: int) -> float:
    """CPU seconds per message to read ``messages`` of ``size`` bytes off a subscription."""
    sub = aioredis.Redis.from_url(url, parser_class=parser)
    pub = aioredis.Redis.from_url(url)
    ps = sub.pubsub()
    try:
        await ps.subscribe("bench")
        await ps.get_message(timeout=1)  # the subscribe's confirmation
        payload, cpu, got = b"x" * size, 0.0, 0
        while got < messages:
            pipe = pub.pipeline(transaction=False)
            for _ in range(CHUNK):
                pipe.publish("bench", payload)
            await pipe.execute()
            t0, n = time.process_time(), 0
            while n < CHUNK:
                m = await ps.get_message(timeout=5)
                if m is None:
                    raise RuntimeError("a published message did not arrive")
                n += m["type"] == "message"
            cpu += time.process_time() - t0
            got += n
        return cpu / got
    finally:
        await ps.aclose()
        await sub.aclose()
        await pub.aclose()


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m loadtest.bench_broker", description=__doc__.splitlines()[0])
    p.add_argument("--messages", type=int, default=40_000)
    p.add_argument("--sizes", type=int, nargs="+", default=[300, 1500, 4000], help="payload bytes")
    p.add_argument("--rounds", type=int, default=2, help="times each parser is measured, alternating")
    a = p.parse_args(argv)
    folder = Path(tempfile.mkdtemp(prefix="casino-bench-redis-")) / "r"  # a unix socket's path is short
    url = redis_embedded.start_redis(folder)
    try:
        print(f"broker: receive CPU per message, {a.messages} messages a measurement", flush=True)
        for size in a.sizes:
            per: dict[str, list[float]] = {name: [] for name in PARSERS}
            for _ in range(a.rounds):
                for name, parser in PARSERS.items():
                    per[name].append(asyncio.run(receive_cpu(url, parser, a.messages, size)) * 1e6)
            fast, slow = min(per["hiredis"]), min(per["redis-py"])
            print(f"  {size:5d} B: hiredis {' / '.join(f'{x:.1f}' for x in per['hiredis'])} µs, "
                  f"redis-py {' / '.join(f'{x:.1f}' for x in per['redis-py'])} µs "
                  f"(best of each: {fast / slow:.2f} ×)", flush=True)
    finally:
        redis_embedded.stop_redis(folder)
        shutil.rmtree(folder.parent, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
