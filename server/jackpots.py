"""Linked jackpot pools (Blazing 7s): the server forwards each table's round to its pool.

A table emits ``JackpotRoundStarted`` (the deal began) and ``JackpotRoundReport`` (stakes
and hits after the deal); here they become the pool engine's ``Enter`` / ``Report``, in the
table's own commit transaction with the pool row locked, and the pool's money events
become ledger transfers (``server.money.jackpot_transfers``) in that same transaction. The
pool's events join the table's event stream (players see their jackpot paid), and its new
meters are relayed to every linked table running here as a ``jackpot_meters`` command.
"""

from __future__ import annotations

import logging
from typing import Any

import msgspec

from blackjack import jackpot as J
from blackjack import jackpot_pool as JP
from games.commands import Actor
from games.errors import GameError
from games.ledger import accounts
from games.ledger.accounts import Kind
from server.auth import SYSTEM
from server.companions import Companion
from server.money import jackpot_transfers
from server.store import jackpots as pools

log = logging.getLogger("casino.jackpots")
_SERVER = Actor(SYSTEM, "system")  # the pool's commands are the server's


def config_of(engine: Any) -> Any:
    """The table's Blazing 7s configuration, or None."""
    profile = getattr(getattr(engine, "state", None), "profile", None)
    return getattr(profile, "blazing_7s", None)


async def _open_accounts(ctx: Any, conn: Any, name: str, currency: str) -> None:
    for level in ("minor", "major"):
        await ctx.ledger.open_account(accounts.jackpot(f"{name}-{level}", currency), currency, Kind.JACKPOT,
                                      conn=conn)


async def _load(ctx: Any, conn: Any, cfg: Any, table: str) -> tuple[Any, list[Any]]:
    """The pool, locked for this transaction; opened (seeded by ``table``'s bank) if new."""
    saved = await pools.lock_pool(conn, cfg.jackpot)
    if saved is None:
        pool = JP.JackpotPool(cfg)
        events = pool.handle(JP.Open(table=table), _SERVER)
        if await pools.insert_pool(conn, cfg.jackpot, msgspec.json.encode(pool.state)):
            return pool, events
        saved = await pools.lock_pool(conn, cfg.jackpot)  # another process opened it first: use theirs
        assert saved is not None
    return JP.JackpotPool.from_state(msgspec.json.decode(saved, type=JP.PoolState)), []


async def forward(ctx: Any, conn: Any, table: str, engine: Any, events: list[Any]) -> list[Any]:
    """Inside the table's transaction: feed the pool; return the pool's events."""
    cfg = config_of(engine)
    if cfg is None:
        return []
    commands = []
    for ev in events:
        if isinstance(ev, J.JackpotRoundStarted):
            commands.append(JP.Enter(table=ev.table, round=ev.round))
        elif isinstance(ev, J.JackpotRoundReport):
            commands.append(JP.Report(table=ev.table, round=ev.round, stakes=ev.stakes, hits=list(ev.hits)))
    if not commands:
        return []
    pool, out = await _load(ctx, conn, cfg, table)
    for command in commands:
        try:
            out += pool.handle(command, _SERVER)
        except GameError as exc:  # e.g. a round the pool never saw: it must not stop the table
            log.error("jackpot %s: %s refused: %s", cfg.jackpot, type(command).__name__, exc.message)
    await pools.save_pool(conn, cfg.jackpot, msgspec.json.encode(pool.state))
    ops = jackpot_transfers(out, cfg.currency)
    if ops:
        await _open_accounts(ctx, conn, cfg.jackpot, cfg.currency)
        await ctx.ledger.apply(ops, conn=conn)
    return out


async def ensure_open(ctx: Any, table: str, engine: Any) -> Any:
    """At a jackpot table's start: open its pool if new; the meters to show (or None)."""
    cfg = config_of(engine)
    if cfg is None:
        return None
    async with ctx.pool.acquire() as conn:
        async with conn.transaction():
            pool, events = await _load(ctx, conn, cfg, table)
            ops = jackpot_transfers(events, cfg.currency)
            if ops:
                await _open_accounts(ctx, conn, cfg.jackpot, cfg.currency)
                await ctx.ledger.apply(ops, conn=conn)
            if events:
                await pools.save_pool(conn, cfg.jackpot, msgspec.json.encode(pool.state))
    return pool.meters


def meters_changes(events: list[Any]) -> list[Any]:
    return [ev for ev in events if isinstance(ev, J.MetersChanged)]


class JackpotCompanion(Companion):
    """A Blazing 7s table's link to its pool (``server.companions``)."""

    async def start(self) -> list[Any]:
        rt = self.runtime
        meters = await ensure_open(rt.ctx, rt.info.id, rt.engine)
        return [] if meters is None else [rt.kind.meters_command(rt.info, *meters)]

    pooled: list[Any] = []  # the pool's events in the batch being committed

    async def forward(self, conn: Any, events: list[Any]) -> list[Any]:
        rt = self.runtime
        self.pooled = await forward(rt.ctx, conn, rt.info.id, rt.engine, events)
        return self.pooled

    def committed(self, events: list[Any]) -> None:
        """The pool's new meters go to every linked table, in this process or another (only
        the pool's: a table's own ``meters_changed``, announcing them, goes nowhere)."""
        changes, self.pooled = meters_changes(self.pooled), []
        if changes:
            self.runtime.ctx.manager.router.meters([(ch.jackpot, ch.minor, ch.major) for ch in changes])
