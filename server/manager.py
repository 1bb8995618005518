"""All tables of this process: which it owns (DB lease), starting, stopping, failover.

Ownership is a lease row in ``table_owners``, renewed every ``lease_seconds / 3``; another
process takes a table over once its lease has run out. Changes made through any process
(staff, authorisations, archiving, a graceful stop handing its tables back) are announced
on PostgreSQL's ``casino_table_changed`` channel, so the owner reloads the table at once
and a process that stopped gracefully is replaced at once, not a lease later. The lease
loop reloads everything too, in case a notice was lost with a connection.
"""

from __future__ import annotations

import asyncio
import logging
import time
from datetime import datetime
from typing import Any

import msgspec

from games.errors import GameError
from server import store
from server.kinds import kind as game_kind
from server.kinds.base import TableInfo
from server.resources import Resources
from server.runtime import TableRuntime

log = logging.getLogger("casino.tables")


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

    async def start(self) -> None:
        await self._beat()
        await self._listen()  # first: a change made while the tables load is not missed
        async with self.ctx.pool.acquire() as conn:
            for info in await store.load_tables(conn):
                self.infos[info.id] = info
        for info in list(self.infos.values()):
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
        elif rt is None and self.started and not new:
            # Its owner may have just handed it back. (A new table is its creator's to start;
            # should the creator fail, the lease loop takes it over.)
            await self._try_own(info)

    def lost(self, table_id: str) -> None:
        self.runtimes.pop(table_id, None)

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
        log.debug("table %s (%s %s, %s): running here at seq %d", info.id, info.game, info.profile, info.mode, rt.seq)
        return True

    async def _beat(self) -> None:
        await store.beat(self.ctx.pool, self.ctx.settings.owner_id)

    # ---- notices ---------------------------------------------------------------------------
    async def _listen(self) -> None:
        """A connection of its own, kept out of the pool, that waits for table notices."""
        import asyncpg

        self._listener = await asyncpg.connect(self.ctx.database_url)
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
                for info in list(self.infos.values()):
                    if info.id not in self.runtimes:
                        await self._try_own(info)
            except asyncio.CancelledError:
                raise
            except Exception:
                log.exception("lease renewal failed")
