"""The audit chain: ``audit_log`` rows sealed after the fact into ``audit_seals`` (issue 17).

Each audit row gets one seal, in id order: ``hash = sha256(previous hash || canonical bytes
of the row)``, the first row chained to 32 zero bytes. The canonical bytes are the JSON
array ``[id, at, actor, role, action, target, detail]`` (``at`` in UTC as
``YYYY-MM-DDTHH:MM:SS.ffffffZ``, ``detail`` the text PostgreSQL prints for the jsonb: keys
ordered, spacing fixed), encoded by msgspec (UTF-8, strings escaped: no two rows share them).
Both tables refuse UPDATE, DELETE and TRUNCATE (triggers, migrations 0100 and 0109);
``verify`` recomputes the whole chain, so a row changed or removed behind the triggers'
back (a superuser disabling them) is named.

Why after the fact, not at insert time: audit rows are inserted by many concurrent
transactions (table commits on several processes); chaining each row to the one before
would serialise every one of those commits on one lock. Rows keep their bigserial id and
a sealer (the server every few seconds, ``keep_sealing``; ``casino audit seal``) appends
the seals.

When a row may be sealed. A chain in id order needs every id below a sealed row to be
final: committed (and visible) or never going to be (rolled back: a permanent hole in the
ids, which the chain simply skips). Ids come from a sequence, outside transactions, so a
transaction may hold id 5 uncommitted while id 6 is committed and visible; sealing 6 then
would leave 5 behind for good. The rule (``safe_head``):

1. read the sequence's ``last_value`` L: every id ever handed out is <= L (the sequence
   caches no values per session, bigserial's CACHE 1: a cached id could be drawn later);
2. list the transactions that hold a lock on ``audit_log`` (``pg_locks``; the fast-path
   locks are listed too). An INSERT locks the table (RowExclusiveLock) before its default
   draws the id, and keeps the lock to the end of its transaction, so every transaction
   that drew an id <= L and has not ended is on that list;
3. wait until each of them has ended (its virtual transaction is no longer in
   ``pg_locks``). Transactions that start later draw ids > L.

Then every id <= L is final, and the rows with id <= L visible to a statement run now are
all there will ever be. This never blocks an insert (it only reads ``pg_locks``: unlike
``LOCK TABLE ... SHARE`` it queues no writer behind it); it waits at most for the commits
in flight at step 2, and gives up after a bound (the next round tries again).
Why not ``pg_snapshot_xmin`` against the rows' ``xmin`` alone: a transaction gets its xid
only when it first writes, *after* its INSERT drew the id; between the two it is in no
snapshot, so a lower id may be in flight while the snapshot says nothing is.

Two sealers (several processes, an operator's ``casino audit seal``) take one transaction
advisory lock (``pg_try_advisory_xact_lock``): the second one skips its round. Each
sealer's L is safe on its own, so whichever seals, seals correctly.
"""

from __future__ import annotations

import asyncio
import hashlib
import logging
import os
import time
from datetime import UTC, datetime
from typing import NamedTuple

import asyncpg
import msgspec

log = logging.getLogger("casino.audit")

GENESIS = bytes(32)
_SEAL_LOCK = 0x6175_6469_7473  # "audits"
BATCH = 5000
SEAL_SECONDS = float(os.environ.get("CASINO_AUDIT_SEAL_SECONDS", 5))


def canonical(id_: int, at: datetime, actor: str, role: str, action: str, target: str, detail: str) -> bytes:
    """The bytes of an audit row that its seal covers (``detail``: the jsonb's text)."""
    stamp = at.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")
    return msgspec.json.encode([id_, stamp, actor, role, action, target, detail])


def link(prev: bytes, row: asyncpg.Record) -> bytes:
    """The seal of ``row`` after the seal ``prev``."""
    data = canonical(row["id"], row["at"], row["actor"], row["role"], row["action"], row["target"], row["detail"])
    return hashlib.sha256(prev + data).digest()


_ROWS = """SELECT id, at, actor, role, action, target, detail::text AS detail FROM audit_log
           WHERE id > $1 AND id <= $2 ORDER BY id LIMIT $3"""


async def safe_head(conn: asyncpg.Connection | asyncpg.Pool, *, wait_seconds: float = 2.0) -> int | None:
    """The highest id below which every audit id is final (the module's rule), or None when
    a transaction that may hold one did not end within ``wait_seconds``. Given the pool, each
    look takes a connection only for itself: the wait holds none (a worker's pool may be small)."""
    # (pg_sequence_last_value: the inserting role's USAGE on the sequence is enough; NULL before the first.)
    last = await conn.fetchval(
        "SELECT coalesce(pg_sequence_last_value(pg_get_serial_sequence('audit_log', 'id')::regclass), 0)")
    holders = [r[0] for r in await conn.fetch(
        """SELECT DISTINCT virtualtransaction FROM pg_locks
           WHERE locktype = 'relation' AND database = (SELECT oid FROM pg_database WHERE datname = current_database())
             AND relation = 'audit_log'::regclass AND mode <> 'AccessShareLock'
             AND pid IS DISTINCT FROM pg_backend_pid()""")]
    deadline = time.monotonic() + wait_seconds
    delay = 0.005
    while holders:
        holders = [r[0] for r in await conn.fetch(
            "SELECT DISTINCT virtualtransaction FROM pg_locks WHERE virtualtransaction = ANY($1::text[])",
            holders)]
        if not holders:
            break
        if time.monotonic() >= deadline:
            return None
        await asyncio.sleep(delay)
        delay = min(delay * 2, 0.1)
    return int(last)


async def seal(pool: asyncpg.Pool | asyncpg.Connection, *, wait_seconds: float = 2.0) -> int:
    """Seal what may be sealed now; the number of rows sealed (0 when another sealer holds
    the lock, or a transaction in flight did not end in time)."""
    head = await safe_head(pool, wait_seconds=wait_seconds)
    if head is None:
        return 0
    if isinstance(pool, asyncpg.Pool):
        async with pool.acquire() as conn:
            return await _seal_upto(conn, head)
    return await _seal_upto(pool, head)


async def _seal_upto(conn: asyncpg.Connection, head: int) -> int:
    """Seal the rows after the last seal up to ``head`` (0 if another sealer holds the lock)."""
    sealed = 0
    async with conn.transaction():
        if not await conn.fetchval("SELECT pg_try_advisory_xact_lock($1)", _SEAL_LOCK):
            return 0
        last = await conn.fetchrow("SELECT id, hash FROM audit_seals ORDER BY id DESC LIMIT 1")
        after, prev = (last["id"], bytes(last["hash"])) if last else (0, GENESIS)
        while True:
            rows = await conn.fetch(_ROWS, after, head, BATCH)
            if not rows:
                break
            ids, hashes = [], []
            for r in rows:
                prev = link(prev, r)
                ids.append(r["id"])
                hashes.append(prev)
            await conn.execute("INSERT INTO audit_seals (id, hash) SELECT * FROM unnest($1::bigint[], $2::bytea[])",
                               ids, hashes)
            sealed += len(rows)
            after = ids[-1]
    return sealed


async def keep_sealing(pool: asyncpg.Pool, every: float = SEAL_SECONDS) -> None:
    """The server's sealer: ``seal`` every ``every`` seconds until cancelled."""
    while True:
        await asyncio.sleep(every)
        try:
            n = await seal(pool)
            if n:
                log.debug("audit: sealed %d row(s)", n)
        except asyncio.CancelledError:
            raise
        except Exception:
            log.exception("audit: sealing failed (the next round tries again)")


class Verdict(NamedTuple):
    ok: bool
    sealed: int  # rows whose seal checked out (up to the break, if any)
    head_id: int  # the last good seal's row (0: none)
    head_hash: str  # its hash, hex (the genesis' zeros when none)
    unsealed: int  # rows after the last seal, not sealed yet
    problem: str  # the first break, naming its row ("" when ok)
    row: int | None  # the row at the break


async def verify(conn: asyncpg.Connection, *, anchors: dict[int, str] | None = None) -> Verdict:
    """Recompute the chain from the first row; the first break: a row changed (its seal no
    longer matches), a row without its seal below sealed rows, a seal without its row (the
    row deleted), or an ``anchors`` entry (id -> hex hash recorded earlier) not in the chain."""
    anchors = dict(anchors or {})
    prev, sealed, head_id = GENESIS, 0, 0

    def broken(problem: str, row: int) -> Verdict:
        return Verdict(False, sealed, head_id, prev.hex(), 0, problem, row)

    async with conn.transaction(isolation="repeatable_read", readonly=True):
        rows = conn.cursor("SELECT id, at, actor, role, action, target, detail::text AS detail "
                           "FROM audit_log ORDER BY id", prefetch=BATCH)
        seals = conn.cursor("SELECT id, hash FROM audit_seals ORDER BY id", prefetch=BATCH)
        row_it, seal_it = rows.__aiter__(), seals.__aiter__()

        async def next_of(it):
            try:
                return await it.__anext__()
            except StopAsyncIteration:
                return None

        r, s = await next_of(row_it), await next_of(seal_it)
        while s is not None:
            if r is None or s["id"] < r["id"]:
                return broken(f"seal {s['id']} has no audit row: the row was deleted", s["id"])
            if r["id"] < s["id"]:
                return broken(f"audit row {r['id']} has no seal, yet later rows are sealed: "
                              "its seal was deleted or the row inserted behind the chain", r["id"])
            h = link(prev, r)
            if h != bytes(s["hash"]):
                return broken(f"audit row {r['id']} does not match its seal: the row (or its seal) "
                              "was changed", r["id"])
            want = anchors.pop(r["id"], None)
            if want is not None and want.lower() != h.hex():
                return broken(f"audit row {r['id']}: its seal is not the anchored hash {want}: "
                              "the chain was rewritten", r["id"])
            prev, sealed, head_id = h, sealed + 1, r["id"]
            r, s = await next_of(row_it), await next_of(seal_it)
        unsealed = 0
        while r is not None:
            unsealed += 1
            r = await next_of(row_it)
    if anchors:
        first = min(anchors)
        return Verdict(False, sealed, head_id, prev.hex(), unsealed,
                       f"anchor {first} is beyond the chain's head {head_id}: sealed rows were removed", first)
    return Verdict(True, sealed, head_id, prev.hex(), unsealed, "", None)
