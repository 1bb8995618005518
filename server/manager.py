"""All tables of this process: which it owns (DB lease), starting, stopping, failover,
and, with a broker (several processes serving one floor), spreading them over the processes.

Ownership is a lease row in ``table_owners``, renewed every ``lease_seconds / 3``; another
process takes a table over once its lease has run out. Changes made through any process
(staff, authorisations, archiving, a graceful stop handing its tables back) are announced
on PostgreSQL's ``casino_table_changed`` channel, so the owner reloads the table at once
and a process that stopped gracefully is replaced at once, not a lease later. The lease
loop reloads everything too, in case a notice was lost with a connection.

With a broker (REDIS_URL) a client on any process plays any table (``server.router``), so
the tables are spread: each process takes the tables the live processes' rendezvous hash
gives it (``server.placement``), a table nobody took within a lease after its lease ran
out goes to whoever sees it first, and a process holding a table that another live
process should serve hands it over between rounds (never mid-round: a table that starts
elsewhere voids what a crash cut off, and a hand-over is not a crash). Without a broker a
table stays with the process that took it, as clients can only play where they connect.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from datetime import datetime
from typing import Any

import msgspec

from games.errors import GameError
from server import jackpots, store
from server.kinds import kind as game_kind
from server.kinds.base import TableInfo
from server.placement import preferred
from server.resources import Resources
from server.router import Router
from server.runtime import Item, TableRuntime

log = logging.getLogger("casino.tables")

# Tables handed to a better-placed process per lease tick at most (a newly started process
# gets its share over a few ticks, not in one burst of table restarts).
REBALANCE_PER_TICK = 8


class Waiting(msgspec.Struct):
    """A table nobody serves right now: its lease is held by a process that stopped beating
    (killed), or nobody holds it; it is taken over once ``lease_until`` has passed."""

    table: str
    owner: str
    lease_until: datetime | None


class Readiness(msgspec.Struct):
    ready: bool
    owner: str
    serving: list[str]  # tables running in this process
    elsewhere: dict[str, str]  # table -> the live process serving it
    waiting: list[Waiting]


class TableManager:
    def __init__(self, ctx: Resources) -> None:
        self.ctx = ctx
        self.infos: dict[str, TableInfo] = {}
        self.runtimes: dict[str, TableRuntime] = {}
        self._lease_task: asyncio.Task | None = None
        self._listener: Any = None
        # Tables whose runtime is being started: POST /tables and the lease loop may both
        # try at once, and one table must never get two owners in one process.
        self._starting: set[str] = set()
        self._reloads: set[asyncio.Task] = set()
        self._reload_locks: dict[str, asyncio.Lock] = {}
        self.started = False
        self.router = Router(self)
        me = ctx.settings.owner_id
        self.live: set[str] = {me}  # the processes beating now (this one always)
        self.ws_urls: dict[str, str] = {}  # live process -> where it takes websockets (those that say)
        self.owners: dict[str, str] = {}  # table -> the live process serving it, as last read
        self.leases: dict[str, store.TableLease] = {}

    async def start(self) -> None:
        await self.router.start()  # first: calls for the tables it takes must reach it
        await self._beat()
        await self._listen()  # first: a change made while the tables load is not missed
        async with self.ctx.pool.acquire() as conn:
            for info in await store.load_tables(conn):
                self.infos[info.id] = info
        await self._read_floor()
        for info in list(self.infos.values()):
            if self._may_take(info.id):
                await self._try_own(info)
        self.started = True
        log.info("serving %d of %d tables", len(self.runtimes), sum(not i.archived for i in self.infos.values()))
        self._lease_task = asyncio.create_task(self._lease_loop(), name="table leases")

    async def stop(self) -> None:
        self.started = False
        await self._unlisten()
        # Nothing may take a table while the others are handed back: wait for the lease loop
        # and the reloads to end (one cut off after its lease INSERT still hands it back below).
        busy = [t for t in (self._lease_task, *self._reloads) if t is not None]
        for task in busy:
            task.cancel()
        await asyncio.gather(*busy, return_exceptions=True)
        for rt in list(self.runtimes.values()):
            await rt.stop()
        self.runtimes.clear()
        # Hand every table leased here back at once and say so: another process takes them
        # now, not a lease later.
        async with self.ctx.pool.acquire() as conn:
            async with conn.transaction():
                for table_id in await store.hand_back_all(conn, self.ctx.settings.owner_id):
                    await store.notify_table_changed(conn, table_id)
                await store.stopped(conn, self.ctx.settings.owner_id)
        await self.router.stop()

    def known(self, table_id: str) -> TableInfo:
        """The table, open or archived."""
        info = self.infos.get(table_id)
        if info is None:
            raise GameError("unknown_table", f"There is no table {table_id!r}.")
        return info

    def info(self, table_id: str) -> TableInfo:
        """The table, if it is open (not archived)."""
        info = self.known(table_id)
        if info.archived:
            raise GameError("table_archived", f"Table {table_id!r} is closed and archived; its history stays.")
        return info

    def runtime(self, table_id: str) -> TableRuntime:
        self.info(table_id)
        rt = self.runtimes.get(table_id)
        if rt is None or rt.stopped:
            raise GameError("table_unavailable", f"Table {table_id!r} is not running on this server.")
        return rt

    async def add(self, info: TableInfo) -> None:
        self.infos[info.id] = info
        if self.started:  # before that, start() takes it with the others
            await self._try_own(info)

    async def reload(self, table_id: str) -> None:
        """Read the table again (staff, authorisations, archived): a change made through any
        process. The runtime holds the same TableInfo, so it sees the change at once. One at a
        time per table (a handler's own reload and its notice's may meet)."""
        async with self._reload_locks.setdefault(table_id, asyncio.Lock()):
            await self._reload(table_id)

    async def _reload(self, table_id: str) -> None:
        async with self.ctx.pool.acquire() as conn:
            found = await store.load_tables(conn, table_id)
        if not found:
            return
        fresh = found[0]
        new = table_id not in self.infos
        info = self.infos.setdefault(table_id, fresh)
        for field in ("staff", "authorisations", "archived", "name"):
            setattr(info, field, getattr(fresh, field))
        rt = self.runtimes.get(table_id)
        if info.archived:
            if rt is not None:
                await rt.stop()
                self.runtimes.pop(table_id, None)
                await store.hand_back(self.ctx.pool, self.ctx.settings.owner_id, table_id)
        elif rt is None and self.started and not new and await self._may_take_now(table_id):
            # Its owner may have just handed it back. (A new table is its creator's to start;
            # should the creator fail, the lease loop takes it over.)
            await self._try_own(info)

    def lost(self, table_id: str) -> None:
        self.runtimes.pop(table_id, None)
        self.owners.pop(table_id, None)

    # ---- the floor: who lives, who serves what ------------------------------------------------
    async def _read_floor(self) -> None:
        s = self.ctx.settings
        within = s.lease_seconds * 2 / 3  # a beat every lease/3: one late beat is forgiven
        async with self.ctx.pool.acquire() as conn:
            processes = await store.live_processes(conn, within)
            self.live = set(processes) | {s.owner_id}
            self.ws_urls = {owner: url for owner, url in processes.items() if url}
            if s.ws_url:
                self.ws_urls[s.owner_id] = s.ws_url
            leases = await store.open_table_leases(conn, within)
        self.leases = {lease.table: lease for lease in leases}
        self.owners = {lease.table: lease.owner for lease in leases if lease.served and lease.owner}
        for tid, rt in self.runtimes.items():
            if not rt.stopped:
                self.owners[tid] = s.owner_id

    async def committed_seq(self, table_id: str, conn: Any) -> int:
        """The seq of the table's last committed event (its runtime's, or the database's)."""
        rt = self.runtimes.get(table_id)
        if rt is not None and not rt.stopped:
            return rt.seq
        return await store.last_seq(conn, table_id)

    async def refresh_owner(self, table_id: str) -> str | None:
        """Read who serves ``table_id`` now (a call to its last known owner went unanswered)."""
        if table_id in self.runtimes:
            return self.ctx.settings.owner_id
        lease = await store.table_lease(self.ctx.pool, table_id, self.ctx.settings.lease_seconds * 2 / 3)
        if lease is not None and lease.served and lease.owner:
            self.owners[table_id] = lease.owner
        else:
            self.owners.pop(table_id, None)
        return self.owners.get(table_id)

    def _may_take(self, table_id: str) -> bool:
        """Whether this process should take ``table_id`` when its lease is free: always
        without a broker; with one, if the placement names it, or if the table has waited a
        whole lease for the process it names."""
        if not self.router.shared:
            return True
        me = self.ctx.settings.owner_id
        if preferred(table_id, self.live) == me:
            return True
        lease = self.leases.get(table_id)
        if lease is None or lease.lease_until is None:
            return False  # never served: its creator starts it
        waited = datetime.now(lease.lease_until.tzinfo) - lease.lease_until
        return waited.total_seconds() > self.ctx.settings.lease_seconds

    async def _may_take_now(self, table_id: str) -> bool:
        """``_may_take`` on a fresh reading of the floor (a notice: a process that stopped
        gracefully has just handed its tables back and left the live set)."""
        if self.router.shared:
            await self._read_floor()
        return self._may_take(table_id)

    async def _rebalance(self) -> None:
        """Hand tables a better-placed live process should serve to it, between rounds."""
        if not self.router.shared:
            return
        me, moved = self.ctx.settings.owner_id, 0
        for tid, rt in list(self.runtimes.items()):
            want = preferred(tid, self.live)
            if want == me or rt.stopped or not rt.idle():
                continue
            log.info("table %s: handing it to %s (placement)", tid, want)
            await rt.stop()
            self.lost(tid)
            async with self.ctx.pool.acquire() as conn:
                async with conn.transaction():
                    await store.hand_back(conn, me, tid)
                    await store.notify_table_changed(conn, tid)
            moved += 1
            if moved >= REBALANCE_PER_TICK:
                return

    def relay_meters(self, changes: list[tuple[str, int, int]]) -> None:
        """New jackpot meters to every linked table running here (a jackpot_meters command)."""
        for jackpot, minor, major in changes:
            for rt in list(self.runtimes.values()):
                cfg = jackpots.config_of(rt.engine)
                if cfg is not None and cfg.jackpot == jackpot and not rt.stopped:
                    command = rt.kind.meters_command(rt.info, minor, major)
                    rt.queue.put_nowait(Item(rt.system, f"meters:{minor}:{major}", command))

    async def readiness(self) -> Readiness:
        """Whether every open table is served, here or by a live process; which are not."""
        leases = await store.open_table_leases(self.ctx.pool, self.ctx.settings.lease_seconds * 2 / 3)
        me = self.ctx.settings.owner_id
        serving = [tid for tid, rt in sorted(self.runtimes.items()) if not rt.stopped]
        elsewhere, waiting = {}, []
        for lease in leases:
            if lease.table in serving:
                continue
            if lease.served and lease.owner is not None and lease.owner != me:
                elsewhere[lease.table] = lease.owner
            else:
                waiting.append(Waiting(lease.table, lease.owner or "", lease.lease_until))
        return Readiness(self.started and not waiting, me, serving, elsewhere, waiting)

    # ---- ownership -----------------------------------------------------------------------
    async def _try_own(self, info: TableInfo) -> bool:
        if info.archived:
            return False
        if info.id in self.runtimes or info.id in self._starting:
            return info.id in self.runtimes
        self._starting.add(info.id)
        try:
            return await self._own(info)
        except Exception:
            # One table that cannot start (a state that does not load, a replay that does not
            # match its history) never keeps the others from starting: it is handed back
            # and tried again at a later lease tick, loudly.
            log.exception("table %s: could not start it here; handing it back", info.id)
            with contextlib.suppress(Exception):
                await store.hand_back(self.ctx.pool, self.ctx.settings.owner_id, info.id)
            return False
        finally:
            self._starting.discard(info.id)

    async def _own(self, info: TableInfo) -> bool:
        s = self.ctx.settings
        if not await store.take_lease(self.ctx.pool, info.id, s.owner_id, s.lease_seconds):
            return False
        try:
            kind = game_kind(info.game)
        except GameError:
            log.error("table %s: game %r is not part of this build", info.id, info.game)
            return False
        rt = TableRuntime(self.ctx, info, kind)
        await rt.start()
        self.runtimes[info.id] = rt
        self.owners[info.id] = s.owner_id
        self.router.started(info.id)  # who follows it, here and elsewhere, is present at once
        log.debug("table %s (%s %s, %s): running here at seq %d", info.id, info.game, info.profile, info.mode, rt.seq)
        return True

    async def _beat(self) -> None:
        await store.beat(self.ctx.pool, self.ctx.settings.owner_id, self.ctx.settings.ws_url)

    def ws_url(self, table_id: str) -> str:
        """Where a player of ``table_id`` connects to reach its owner directly (his commands
        then go to the table in the process that took them, and its frames to one process):
        the owner's websocket URL, or "" where none is known (any process serves him)."""
        owner = self.router.owner(table_id)
        return self.ws_urls.get(owner, "") if owner else ""

    # ---- notices ---------------------------------------------------------------------------
    async def _listen(self) -> None:
        """A connection of its own, kept out of the pool, that waits for table notices."""
        import asyncpg

        from games.db.pool import application_name

        self._listener = await asyncpg.connect(
            self.ctx.database_url, server_settings={"application_name": application_name(self.ctx.settings.owner_id)})
        await self._listener.add_listener(store.TABLE_CHANGED, self._on_notice)

    async def _unlisten(self) -> None:
        if self._listener is not None:
            listener, self._listener = self._listener, None
            try:
                await listener.close(timeout=2)
            except Exception:
                listener.terminate()

    def _on_notice(self, _conn: Any, _pid: int, _channel: str, table_id: str) -> None:
        if not self.started:
            return
        task = asyncio.create_task(self._reload_logged(table_id))
        self._reloads.add(task)
        task.add_done_callback(self._reloads.discard)

    async def _reload_logged(self, table_id: str) -> None:
        try:
            await self.reload(table_id)
        except Exception:
            log.exception("table %s: could not reload it after a notice", table_id)

    async def _lease_loop(self) -> None:
        s = self.ctx.settings
        while True:
            await asyncio.sleep(s.lease_seconds / 3)
            try:
                await self._beat()
                if self.runtimes:
                    renewing, renewed = list(self.runtimes.values()), time.monotonic()
                    await store.renew_leases(self.ctx.pool, s.owner_id, s.lease_seconds,
                                             [rt.info.id for rt in renewing])
                    for rt in renewing:
                        rt.leased_at = renewed  # (the lease age gauge)
                if self._listener is None or self._listener.is_closed():
                    await self._unlisten()
                    await self._listen()
                # A notice may have been lost with a connection: read every table again,
                # then take over tables whose owner stopped renewing (failover).
                async with self.ctx.pool.acquire() as conn:
                    tables = await store.load_tables(conn)
                for fresh in tables:
                    info = self.infos.setdefault(fresh.id, fresh)
                    if info is not fresh and (info.staff, info.authorisations, info.archived) != (
                            fresh.staff, fresh.authorisations, fresh.archived):
                        await self.reload(fresh.id)
                await self._read_floor()
                for info in list(self.infos.values()):
                    if info.id not in self.runtimes and self._may_take(info.id):
                        await self._try_own(info)
                for rt in list(self.runtimes.values()):
                    rt.forget_sources(self.live)
                self.router.owners_changed()
                await self._rebalance()
            except asyncio.CancelledError:
                raise
            except Exception:
                log.exception("lease renewal failed")
