"""All tables of this process: which it owns (DB lease), starting, stopping, failover."""

from __future__ import annotations

import asyncio
import logging
from typing import Any

from games.errors import GameError
from server import store
from server.kinds import kind as game_kind
from server.kinds.base import TableInfo
from server.runtime import TableRuntime

log = logging.getLogger("casino.tables")


class TableManager:
    def __init__(self, ctx: Any) -> None:
        self.ctx = ctx
        self.infos: dict[str, TableInfo] = {}
        self.runtimes: dict[str, TableRuntime] = {}
        self._lease_task: asyncio.Task | None = None
        # Tables whose runtime is being started: POST /tables and the lease loop may both
        # try at once, and one table must never get two owners in one process.
        self._starting: set[str] = set()
        self.started = False

    async def start(self) -> None:
        self.started = True
        async with self.ctx.pool.acquire() as conn:
            for info in await store.load_tables(conn):
                self.infos[info.id] = info
        for info in list(self.infos.values()):
            await self._try_own(info)
        self._lease_task = asyncio.create_task(self._lease_loop(), name="table leases")

    async def stop(self) -> None:
        if self._lease_task:
            self._lease_task.cancel()
        for rt in list(self.runtimes.values()):
            await rt.stop()
        # Hand the tables back at once, so another process need not wait for the leases to run out.
        if self.runtimes:
            await self.ctx.pool.execute(
                "UPDATE table_owners SET lease_until = now() WHERE owner = $1 AND table_id = ANY($2::text[])",
                self.ctx.settings.owner_id, list(self.runtimes),
            )
        self.runtimes.clear()

    def info(self, table_id: str) -> TableInfo:
        try:
            return self.infos[table_id]
        except KeyError:
            raise GameError("unknown_table", f"There is no table {table_id!r}.") from None

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

    async def refresh_staff(self, table_id: str) -> None:
        async with self.ctx.pool.acquire() as conn:
            for info in await store.load_tables(conn):
                if info.id == table_id:
                    self.infos[table_id].staff = info.staff

    def lost(self, table_id: str) -> None:
        self.runtimes.pop(table_id, None)

    async def _try_own(self, info: TableInfo) -> bool:
        if info.id in self.runtimes or info.id in self._starting:
            return info.id in self.runtimes
        self._starting.add(info.id)
        try:
            return await self._own(info)
        finally:
            self._starting.discard(info.id)

    async def _own(self, info: TableInfo) -> bool:
        s = self.ctx.settings
        owner = await self.ctx.pool.fetchval(
            """INSERT INTO table_owners (table_id, owner, lease_until)
               VALUES ($1, $2, now() + make_interval(secs => $3))
               ON CONFLICT (table_id) DO UPDATE SET owner = EXCLUDED.owner, lease_until = EXCLUDED.lease_until
                   WHERE table_owners.owner = EXCLUDED.owner OR table_owners.lease_until < now()
               RETURNING owner""",
            info.id, s.owner_id, s.lease_seconds,
        )
        if owner != s.owner_id:
            return False
        try:
            kind = game_kind(info.game)
        except GameError:
            log.error("table %s: game %r is not part of this build", info.id, info.game)
            return False
        rt = TableRuntime(self.ctx, info, kind)
        await rt.start()
        self.runtimes[info.id] = rt
        log.info("table %s (%s %s, %s): running here at seq %d", info.id, info.game, info.profile, info.mode, rt.seq)
        return True

    async def _lease_loop(self) -> None:
        s = self.ctx.settings
        while True:
            await asyncio.sleep(s.lease_seconds / 3)
            try:
                if self.runtimes:
                    await self.ctx.pool.execute(
                        """UPDATE table_owners SET lease_until = now() + make_interval(secs => $2)
                           WHERE owner = $1 AND table_id = ANY($3::text[])""",
                        s.owner_id, s.lease_seconds, list(self.runtimes),
                    )
                # Failover: take over tables whose owner stopped renewing.
                async with self.ctx.pool.acquire() as conn:
                    for info in await store.load_tables(conn):
                        self.infos.setdefault(info.id, info)
                for info in list(self.infos.values()):
                    if info.id not in self.runtimes:
                        await self._try_own(info)
            except asyncio.CancelledError:
                raise
            except Exception:
                log.exception("lease renewal failed")
