"""Table runtime: each table has exactly one owner task that applies its commands in order.

Per batch of queued commands: the engine handles each (a GameError rejects that one and
changes nothing), then ONE PostgreSQL statement, its own transaction, writes the ledger ops,
the events with their seq, the commands applied (and, at a snapshot, the engine state:
``SNAPSHOT_BATCHES``; a start replays the log on the snapshot, ``restore``) and the accepted
command ids: one round trip a batch (``store.record_batches``, through the process's
``commits``, which with ``CASINO_COMMIT_FLIGHTS`` sends the batches of several tables in one
statement: ``server.commit_group``; a batch with more to write, a companion's, accounts to
open, a player's play limits or a console action to audit, runs it alone inside a
transaction with those).
Only after the commit are the commands acknowledged and the events broadcast on the table's
channel, all of the batch's events in one ``events`` message encoded once (one frame per
subscriber per batch). If the ledger refuses the batch (insufficient funds...), the engine
is rebuilt from the committed state and the batch is tried again (after the replay check,
below), then one command at a time, so one player's refusal never costs another's. Should
the connection fail under the statement, whether it was committed is unknown: the batch's
commands are answered ``outcome_unknown`` (sent again with the same cid, each is applied at
most once) and the table stops here, to be read again from the database once its lease is
handed back.

A command id answered before at the table (a client's retry) is answered again, never
applied twice. The batch's statement checks that itself: if one of its commands, or one
the engine refused, was answered before, or one of its players has play limits, it writes
nothing and the batch runs again with the replay check first (``store.answered``), the way
every batch once did (``_process``). So a refusal of the batch is held back until it is
known not to answer a retry of an accepted command (the engine would refuse a withdrawal
sent again): the statement checks the refused command ids with the others, and a batch that
commits nothing checks them alone.

The committed state is a second engine, ``committed_engine``, that a committed batch's
commands are applied to again (the engines are deterministic: a restart relies on it too).
Dumping the whole state after every batch grew with the round (a crowded wheel's open bets)
and was an eighth of the server's CPU on the bet path (issue 14); applying a batch twice
grows only with the batch. Views and a rollback read it; it is never handed out to mutate.

Ownership is a lease row in ``table_owners``; every commit renews it in the same
statement and writes nothing if another process took the table over (fencing).
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import logging
import time
from dataclasses import dataclass, field
from typing import Any, NamedTuple, NoReturn

import asyncpg
import msgspec

from games.errors import GameError
from games.ledger.model import Post, Void
from games.wagers import WagerPlaced
from server import crowd, metrics, play_limits, store
from server.auth import Principal, system_actor
from server.commit_group import OutcomeUnknown, outcome_unknown
from server.companions import open_accounts
from server.kinds.base import GameKind, TableInfo, Timer
from server.money import open_refs
from server.policy import ASSIGNED_ROLES
from server.presence import Presence
from server.protocol import Accepted, Events, Rejected, TableEvent, TableInterrupted, TableResumed, encoder
from server.replay import event_tag, rerun
from server.resources import Resources

log = logging.getLogger("casino.runtime")

BATCH = 512  # commands per transaction at most (group commit; issue 7)
REJECT_MEMORY = 10_000
# The engine state (~34 KB at a busy table) is written at a snapshot only: when a batch opens
# a new round, else at least every SNAPSHOT_BATCHES batches; every batch logs its commands (a
# few hundred bytes). The snapshot a round opens with is kept for disputes (server.replay).
# 64: a recovery replays at most 64 batches (milliseconds of engine work even at BATCH
# commands each, and a round's worth in practice), while a betting window's many small
# batches write the state once per 64 instead of each.
# CASINO_SNAPSHOT_BATCHES (Settings.snapshot_batches) overrides it (tests force long logs).
SNAPSHOT_BATCHES = 64
STOP_WAIT_SECONDS = 10.0  # a stopping table waits this long for its batch under way
UNKNOWN = "The table stopped while recording this: send it again with the same cid (applied at most once)."
_accepted_decoder = msgspec.json.Decoder(Accepted)


def channel_of(table_id: str) -> str:
    return f"table.{table_id}"


class LostOwnership(Exception):
    pass


def _answer_again(it: Item, done: dict[tuple[str, str], str]) -> bool:
    """Whether ``it`` was accepted at the table before (``store.answered``): a retry, given
    its first answer again (the server's own commands are never retries)."""
    stored = None if it.system else done.get((it.who.id, it.cid))
    if stored is None:
        return False
    if it.future is not None and not it.future.done():
        it.future.set_result(_accepted_decoder.decode(stored))
    return True


def _closed(conn: Any) -> bool:
    """Whether a pooled connection is closed (the pool takes one back when it dies: asking
    then raises)."""
    try:
        return bool(conn.is_closed())
    except asyncpg.InterfaceError:
        return True


class ReplayRefused(Exception):
    """The commands logged since the table's snapshot do not reproduce its stored events:
    the table is not started (never serve a state that disagrees with what players saw)."""


@dataclass
class Item:
    who: Principal
    cid: str
    command: Any  # None: only the server events in ``pre``
    future: asyncio.Future | None = None
    pre: list[Any] = field(default_factory=list)
    arrived: float = 0.0  # time.monotonic() at submit: the ack latency's start (players' and staff's commands)

    @property
    def system(self) -> bool:
        return self.who.role == "system"


class Done(NamedTuple):
    """A batch written (its transaction may still enclose it: a companion's)."""

    frames: list[bytes]  # to publish on the table's channel
    acks: list[tuple[Item, int]]  # each command's answer: its last event's seq
    seq: int
    command: int
    round: str
    snapshot: bool


class Staged(NamedTuple):
    """An item applied to the engine in a batch not yet committed."""

    it: Item
    events: list[Any]  # its ``pre``, then its command's, then (a batch's last) a jackpot pool's
    rounds: list[str]  # the round of each event
    command: Any  # the command as applied (``kind.draw``): what is logged; None: none
    own: int  # how many of ``events`` its command produced


class TableRuntime:
    def __init__(self, ctx: Resources, info: TableInfo, kind: GameKind) -> None:
        self.ctx = ctx
        self.info = info
        self.kind = kind
        # The server itself, for its timers, recovery and seat releases: "system-<table>" in
        # the events (the name clients and stored histories have always read). No login can
        # hold the role: the users table refuses it.
        self.system = system_actor(info.id, info.currency)
        self.queue: asyncio.Queue[Item] = asyncio.Queue()
        self.inflight: dict[tuple[str, str], asyncio.Future] = {}
        self.rejected: collections.OrderedDict[tuple[str, str], Rejected] = collections.OrderedDict()
        self.engine: Any = None
        self.seq = 0
        self.committed_engine: Any = None  # the engine as last committed (see the module's doc)
        self._committed_bytes: tuple[tuple[int, int], bytes] = ((-1, -1), b"")  # its dump, for rollbacks
        # The log since the snapshot: the table's command counter, the committed round, the
        # batches logged since the last snapshot, and whether the next batch must take one
        # (the first after a start does: what was replayed is not replayed again).
        self.command = 0
        self.round = ""
        self.logged_batches = 0
        self.snapshot_due = True
        self.task: asyncio.Task | None = None
        self._loop: asyncio.AbstractEventLoop | None = None  # the loop it runs in, for submit's futures
        self._timer: asyncio.TimerHandle | None = None
        self._timer_key: str | None = None
        self._timer_due: tuple[str, float] | None = None  # (its command, loop time): the pages' countdown
        # The lease's epoch when the table was read from the database (``restore``): its
        # batches write under it only (a statement left running by a runtime that gave the
        # table up writes nothing once the table was taken again; migration 0119).
        self.epoch: int | None = None
        self.limited: set[str] = set()  # the batch's players with stake or loss limits (server.play_limits)
        # Players found with limits here: their batches take the replay check first (_process).
        self.known_limited: set[str] = set()
        # A batch sent unchecked holds back its refusals until it is known that none of them
        # answers a retry of an accepted command (_process): (item, code, message).
        self._held: list[tuple[Item, str, str]] | None = None
        self.stopped = False
        self._busy = False  # a batch is being applied and committed
        self._batch: list[Item] = []
        self._idle = asyncio.Event()
        # Being closed for good (archived): no command but the closing one is taken any more.
        self.sealed = False
        # Who follows the table from this process: a seat whose player has gone is released.
        self.presence = Presence()
        self.sources: dict[str, set[str]] = {}  # process -> the players following the table there
        self.metrics = metrics.for_game(kind.name)
        # When this process last renewed the table's lease (taken just before the runtime is
        # built; renewed by each commit and by the manager's lease loop): the lease age gauge.
        self.leased_at = time.monotonic()
        self.accounts = kind.accounts(info)
        self.companions = kind.companions(self)

    # ---- life ----------------------------------------------------------------------------
    async def start(self) -> None:
        # A table opened before floor accounts existed gets its own now (idempotent).
        async with self.ctx.pool.acquire() as conn:
            await open_accounts(self, conn, self.accounts.to_open())
        await self.restore()
        commands, outcome = self.kind.recover(self.engine, self.info)
        if commands or outcome:
            # The rules complete or void what a crash cut off; players see both the break and the outcome.
            self.queue.put_nowait(Item(self.system, "recover", None, pre=[TableInterrupted(outcome)]))
            for i, command in enumerate(commands):
                self.queue.put_nowait(Item(self.system, f"recover:{i}", command))
        self.queue.put_nowait(Item(self.system, "resume", None, pre=[TableResumed(self.ctx.settings.owner_id)]))
        # Nobody is connected to a table that just started here: every seated player is gone
        # until he comes back (after a failover or a restart, too).
        loop = asyncio.get_running_loop()
        if self.presence.all_gone(self.kind.seated(self.engine), loop.time()):
            loop.call_later(self.ctx.settings.seat_release_seconds, self._release_gone)
        for companion in self.companions:
            for i, command in enumerate(await companion.start()):
                self.queue.put_nowait(Item(self.system, f"companion:{i}", command))
        self.task = asyncio.create_task(self._run(), name=f"table {self.info.id}")

    async def restore(self) -> None:
        """The engine as last committed: the table's snapshot (upgraded if an older build
        saved it), then the commands logged since, applied again and checked against the
        events stored for them; ``ReplayRefused`` if they differ. A new table gets its first
        state. (The upgrade comes before the replay: the commands were applied to the
        upgraded engine.)"""
        async with self.ctx.pool.acquire() as conn:
            # (before the state: a statement of an earlier runtime either committed before
            # the lease was taken again, and is read here, or finds the epoch moved on)
            self.epoch = await store.lease_epoch(conn, self.info.id, self.ctx.settings.owner_id)
            loaded = await store.load_state(conn, self.info.id)
            if loaded is None:
                self.engine = self.kind.new_engine(self.info)
                await store.create_state(conn, self.info.id, self.kind.round_id(self.engine),
                                         self.kind.dump(self.engine))
                loaded = await store.load_state(conn, self.info.id)
                limits = self.kind.current_limits(self.engine, self.info)
                if limits is not None and await self.ctx.limits.current(self.info.id, conn=conn) is None:
                    await self.ctx.limits.set(self.info.id, limits, "table.create", 0, "the profile's limits",
                                              conn=conn)
            assert loaded is not None
            self.engine = self.kind.load(loaded.state)
            if self.kind.upgrade(self.engine, self.info):
                await store.replace_state(conn, self.info.id, self.kind.dump(self.engine))
            logged = await store.logged_commands(conn, self.info.id, loaded.state_command)
            stored = await store.stored_events(conn, self.info.id, loaded.state_seq) if logged else []
        self._replay(logged, stored, loaded.seq)
        self.seq = loaded.seq
        self.command = logged[-1].n if logged else loaded.state_command
        self.committed_engine = self._copy(self.engine)
        self.round = self.kind.round_id(self.engine)
        self.snapshot_due = True
        if logged:
            log.debug("table %s: %d commands replayed since the snapshot at seq %d", self.info.id, len(logged),
                      loaded.state_seq)

    def _replay(self, logged: list[store.LoggedCommand], stored: list[store.StoredEvent], last: int) -> None:
        """Apply ``logged`` to the engine and check their events (``server.replay.rerun``)."""
        _, mismatch = rerun(self.kind, self.info, self.engine, logged, stored, last)
        if mismatch is not None:
            self._refuse(mismatch.seq, mismatch.why)

    def _refuse(self, seq: int, why: str) -> NoReturn:
        msg = (f"table {self.info.id}: the commands logged since its snapshot do not reproduce its events at "
               f"seq {seq}: {why}; the table is not started")
        log.error("%s", msg)
        raise ReplayRefused(msg)

    async def stop(self) -> None:
        self.stopped = True
        if self._timer:
            self._timer.cancel()
        for companion in self.companions:
            with contextlib.suppress(Exception):
                await companion.stop()
        if self._busy:
            # A batch under way finishes (committed and answered, or rolled back and refused)
            # before the table stops: never cut off between its commit and its answers.
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._idle.wait(), STOP_WAIT_SECONDS)
        if self.task:
            self.task.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await self.task
        # A batch cut off (after STOP_WAIT_SECONDS): its commit may have happened. (Those of a
        # batch that ended are all answered already.)
        for it in self._batch:
            if it.future is not None and not it.future.done():
                metrics.refused("outcome_unknown")
                it.future.set_result(Rejected(it.cid, "outcome_unknown", UNKNOWN, self.info.id))
        self._refuse_queued()

    def idle(self) -> bool:
        """Between rounds with nothing queued or under way and no bet in play: the table may
        move to another process with nothing to complete or void (``kind.recover`` would
        find nothing), and nobody's bet waits on a betting window started again there."""
        if self._busy or not self.queue.empty() or self.kind.open_wagers(self.engine):
            return False
        commands, outcome = self.kind.recover(self.engine, self.info)
        return not commands and not outcome

    # ---- submitting ------------------------------------------------------------------------
    def submit(self, who: Principal, cid: str, command: Any, *, closing: bool = False) -> asyncio.Future:
        """Queue a command; the future resolves to Accepted or Rejected after the commit.
        (``closing``: the command that closes a sealed table for good.)"""
        key = (who.id, cid)
        fut = self.inflight.get(key)
        if fut is not None:
            return fut  # a retry while the first is still in flight: the same answer
        if self._loop is None:  # (asked once: Python 3.11 asks the kernel for its pid each time)
            self._loop = asyncio.get_running_loop()
        fut = self._loop.create_future()
        if key in self.rejected:
            fut.set_result(self.rejected[key])
            return fut
        if self.stopped:
            metrics.refused("table_unavailable")
            fut.set_result(Rejected(cid, "table_unavailable", "This table is not running here.", self.info.id))
            return fut
        if self.sealed and not closing:
            metrics.refused("table_closing")
            fut.set_result(Rejected(cid, "table_closing", "This table is being closed for good.", self.info.id))
            return fut
        self.inflight[key] = fut
        fut.add_done_callback(lambda _: self.inflight.pop(key, None))
        item = Item(who, cid, command, fut, arrived=time.monotonic())
        try:
            item.command = self.kind.authorize(command, who, self.info)
        except GameError as exc:
            self._reject(item, exc.code, exc.message)
            return fut
        self.queue.put_nowait(item)
        return fut

    def _refused(self, item: Item, code: str, message: str) -> None:
        """A refusal of the batch being applied: sent, or held while the batch is unchecked
        (``_process``). (A refusal from ``submit``, in another task meanwhile, is no part of
        the batch: ``_reject`` sends it at once.)"""
        if self._held is not None:
            self._held.append((item, code, message))
        else:
            self._reject(item, code, message)

    def _reject(self, item: Item, code: str, message: str) -> None:
        if item.future is not None and item.future.done():
            return  # answered already (an accepted command of a batch that failed after): once
        metrics.refused(code)
        msg = Rejected(item.cid, code, message, self.info.id)
        if item.system:
            log.info("table %s: automatic %s refused: %s %s", self.info.id, item.cid, code, message)
        else:
            self.rejected[(item.who.id, item.cid)] = msg
            if len(self.rejected) > REJECT_MEMORY:
                self.rejected.popitem(last=False)
        if item.future is not None:
            item.future.set_result(msg)

    # ---- the owner loop --------------------------------------------------------------------
    async def _run(self) -> None:
        while True:
            item = await self.queue.get()
            if self.stopped:  # stopping: no batch is begun any more (``stop`` answers the rest)
                self.queue.put_nowait(item)
                return
            batch = [item]
            while len(batch) < BATCH and not self.queue.empty():
                batch.append(self.queue.get_nowait())
            self._busy = True
            self._idle.clear()
            self._batch = batch
            try:
                await self._process(batch)
            except LostOwnership:
                log.warning("table %s: another process owns it now; stopping here", self.info.id)
                self._give_up(batch, "table_unavailable", "The table moved to another server; reconnect.")
                return
            except OutcomeUnknown:
                # Committed or not, the table's state here may not be the database's: it is
                # read again from there, here or in another process, at once on the notice
                # (a statement still running from here writes nothing then: the lease's epoch
                # moves on when the table is taken again). The table's recovery voids, refunds
                # or pauses the round it was in, as after a crash.
                log.exception("table %s: the connection failed under a batch's statement; the table restarts "
                              "from the database", self.info.id)
                self._give_up(batch, "outcome_unknown", UNKNOWN)
                with contextlib.suppress(Exception):
                    async with self.ctx.pool.acquire() as conn:
                        await store.hand_back(conn, self.ctx.settings.owner_id, self.info.id)
                        await store.notify_table_changed(conn, self.info.id)
                return
            except Exception:  # never let one bad batch kill the table
                log.exception("table %s: batch failed", self.info.id)
                self._rollback()
                for it in batch:
                    self._reject(it, "internal_error", "Something went wrong; nothing was changed.")
            finally:
                self._busy = False
                self._idle.set()
            self._arm_timer()

    def _give_up(self, batch: list[Item], code: str, message: str) -> None:
        """The table stops here at once: the batch's unanswered commands get ``code``, those
        queued behind it ``table_unavailable`` (nothing of theirs was written)."""
        self.stopped = True
        for it in batch:
            self._reject(it, code, message)
        self._refuse_queued()
        self.ctx.manager.lost(self.info.id)

    def _refuse_queued(self) -> None:
        """The commands queued behind a table that stops: nothing of theirs was written."""
        while not self.queue.empty():
            self._reject(self.queue.get_nowait(), "table_unavailable", "The table is closing; try again.")

    async def _process(self, batch: list[Item]) -> None:
        # One pooled connection for the whole batch (each acquire/release costs a reset round
        # trip; issue 7's profile).
        async with self.ctx.pool.acquire() as conn:
            users = {it.who.id for it in batch if not it.system}
            if users and not users & self.known_limited:
                # Most batches: no replay check first. The batch's statement itself finds a
                # command answered before or a player with limits, and then writes nothing
                # (issue 14: one round trip a batch, not two). Its refusals wait for the check.
                self.limited, self._held = set(), []
                try:
                    await self._apply(batch, conn)
                except store.Unchecked as why:
                    self._rollback()
                    metrics.rechecked(str(why))
                else:
                    await self._answer_held(conn)
                    return
                finally:
                    self._held = None
            await self._checked(batch, conn)

    async def _checked(self, batch: list[Item], conn: Any) -> None:
        """The batch with the replay check first: a command answered before at this table
        (a client's retry) is answered again and not applied; and which of the players have
        stake or loss limits (checked in the commit's transaction)."""
        self.limited = set()
        users = [it.who.id for it in batch if not it.system]
        if users:
            cids = [it.cid for it in batch if not it.system]
            done, self.limited = await store.answered(conn, self.info.id, users, cids, self.info.currency)
            self.known_limited |= self.limited
            if done:
                batch = [it for it in batch if not _answer_again(it, done)]
        await self._apply(batch, conn)

    async def _answer_held(self, conn: Any) -> None:
        """The refusals an unchecked batch held back when it committed nothing: each is sent,
        unless its command id was accepted here before (a retry), which gets that answer
        again."""
        held, self._held = self._held or [], None
        players = [it for it, _, _ in held if not it.system]
        done: dict[tuple[str, str], str] = {}
        if players:
            done, _ = await store.answered(conn, self.info.id, [it.who.id for it in players],
                                           [it.cid for it in players])
        for it, code, message in held:
            if not _answer_again(it, done):
                self._reject(it, code, message)

    async def _apply(self, items: list[Item], conn: Any) -> None:
        staged: list[Staged] = []
        for n, it in enumerate(items):
            before = self.kind.round_id(self.engine)
            command: Any = None
            own: list[Any] = []
            try:
                if it.command is not None:
                    command = self.kind.draw(self.engine, it.command)
                    own = self.kind.engine_events(self.engine, command, self.kind.actor(it.who))
            except GameError as exc:
                self._refused(it, exc.code, exc.message)
                continue
            except Exception:
                # An engine bug: back to the committed state, refuse this one, redo the others.
                log.exception("table %s: engine failed on %r", self.info.id, it.command)
                self._rollback()
                self._refused(it, "internal_error", "The table could not apply that; nothing was changed.")
                await self._apply([s.it for s in staged] + items[n + 1:], conn)
                return
            events = [*it.pre, *own]
            rounds = self.kind.label_rounds(events, before, self.kind.round_id(self.engine))
            staged.append(Staged(it, events, rounds, command, len(own)))
        if not staged:
            return
        started = time.monotonic()
        try:
            if not self.companions:
                done = await self._commit(staged, conn)
            else:
                # Companions (a jackpot pool, a tournament) write in the same transaction.
                async with conn.transaction():
                    events = [ev for s in staged for ev in s.events]
                    joined = [ev for c in self.companions for ev in await c.forward(conn, events)]
                    if joined:
                        last = staged[-1]
                        staged[-1] = last._replace(events=last.events + joined, rounds=last.rounds + [
                            last.rounds[-1] if last.rounds else ""] * len(joined))
                    done = await self._commit(staged, conn)
        except (LostOwnership, store.Unchecked, OutcomeUnknown):
            raise
        except Exception as exc:
            if outcome_unknown(exc, _closed(conn)):
                raise OutcomeUnknown(self.info.id) from exc
            if self._held is not None:
                # Unchecked: the whole batch again the checked way, one command at a time if
                # it fails again (a refusal here might answer a retry).
                if not isinstance(exc, GameError):
                    log.warning("table %s: a batch of %d commands could not be committed (%s: %s); "
                                "again with the replay check", self.info.id, len(staged), type(exc).__name__, exc)
                raise store.Unchecked("failed") from exc
            # Nothing was written: the ledger refused (e.g. insufficient funds, a GameError) or
            # the commit failed. Each command is tried again alone, so one player's refusal or
            # one bad console command never costs the others in the batch theirs.
            self._rollback()
            if len(staged) > 1:
                if not isinstance(exc, GameError):
                    log.warning("table %s: a batch of %d commands could not be committed (%s: %s); "
                                "each is tried alone", self.info.id, len(staged), type(exc).__name__, exc)
                for s in staged:
                    await self._apply([s.it], conn)
            elif isinstance(exc, GameError):
                self._refused(staged[0].it, exc.code, exc.message)
            else:
                log.exception("table %s: commit failed", self.info.id)
                self._refused(staged[0].it, "internal_error", "The table could not record that; nothing was changed.")
            return
        # Committed (and the lease renewed with it): only now, after the outermost transaction
        # (a companion's encloses the batch's), does the table move on.
        self._move_on(staged, done)
        if self._held:  # the statement found none of them answered before: each is sent
            held, self._held = self._held, None
            for it, code, message in held:
                self._reject(it, code, message)
        # Per batch: two observes; per command: a counter increment and an observe, children
        # held by self.metrics (no label lookups).
        now = self.leased_at = time.monotonic()
        m = self.metrics
        m.commit.observe(now - started)
        m.batch.observe(len(staged))
        committed = [ev for s in staged for ev in s.events]
        await self._record_limits(committed, conn)
        for companion in self.companions:
            try:
                companion.committed(committed)
            except Exception:  # committed all the same; a companion catches up from the stored events
                log.exception("table %s: companion %s failed after the commit", self.info.id,
                              type(companion).__name__)
        channel = channel_of(self.info.id)
        for it, last_seq in done.acks:
            if it.future is not None and not it.future.done():
                it.future.set_result(Accepted(it.cid, self.info.id, last_seq))
                if not it.system:
                    m.accepted(it.command).inc()
                    m.ack.observe(now - it.arrived)
        try:
            for frame in done.frames:
                self.ctx.channels.publish(frame, channel)
        except Exception:  # committed all the same: subscribers catch up by seq on resume
            log.exception("table %s: broadcast failed", self.info.id)

    async def _record_limits(self, events: list[Any], conn: Any) -> None:
        """Versioned limits for the limits store (``server.store.limits``; the engine state stays
        the authority), on the batch's connection: never a second one while holding it."""
        for limits, from_round, by, reason in self.kind.limits_changes(events, self.info):
            try:
                await self.ctx.limits.set(self.info.id, limits, by, from_round, reason, conn=conn)
            except Exception:
                log.exception("table %s: could not record the limits change", self.info.id)

    async def _commit(self, staged: list[Staged], conn: Any) -> Done:
        tid = self.info.id
        seq, n = self.seq, self.command
        logged: list[tuple] = []
        event_rows: list[tuple] = []
        published: list[TableEvent] = []
        acks: list[tuple[Item, int]] = []
        results: list[tuple] = []
        audits: list[tuple] = []
        players: set[tuple[str, str]] = set()
        all_events: list[Any] = []
        unreadable = False
        for it, events, rounds, command, own in staged:
            if command is not None:  # its events follow its item's ``pre``
                n += 1
                first = seq + len(it.pre) + 1
                raw = encoder.encode(command)
                if self._reads_back(command, raw):
                    logged.append((n, first, first + own - 1, it.who.id, it.who.role, raw.decode()))
                else:  # not logged (a replay could not read it): the snapshot stands for it
                    unreadable = True
            for ev, round_id in zip(events, rounds, strict=True):  # a round per event
                seq += 1
                all_events.append(ev)
                event_rows.append((tid, seq, round_id, event_tag(ev), it.who.id, encoder.encode(ev).decode()))
                published.append(TableEvent(seq, round_id, self.kind.public_event(ev)))
                if isinstance(ev, WagerPlaced):
                    players.add((ev.player, round_id))
            acks.append((it, seq))
            if it.who.role not in ("player", "system") and it.command is not None:
                audits.append((it.who.id, it.who.role, f"table.{event_tag(it.command)}", tid,
                               encoder.encode(it.command).decode()))
            if not it.system:
                results.append((it.who.id, it.cid, tid, encoder.encode(Accepted(it.cid, tid, seq)).decode()))
        last_round = self.kind.round_id(self.engine)
        every = self.ctx.settings.snapshot_batches or SNAPSHOT_BATCHES
        # Kept for disputes: the state a round opens with (and after a start, or in place of a
        # command the log cannot hold); not the periodic ones, which the log makes redundant.
        keep = self.snapshot_due or last_round != self.round or unreadable
        snapshot = keep or self.logged_batches + 1 >= every
        state = self.kind.dump(self.engine) if snapshot else None
        ops = self.kind.ledger_ops(self.info, all_events)
        # The list of wagers in play is written when holds are released and at a snapshot; a
        # batch that only adds bets leaves it, its holds counted in play (migration 0116).
        # Rebuilt every batch it grew with the round: thousands of refs on a crowded wheel.
        releases = any(isinstance(op, (Post, Void)) for op in ops)
        refs = open_refs(tid, self.kind.open_wagers(self.engine)) if snapshot or releases else None
        opened = self.accounts.opened_by(all_events)
        if self._held is None:
            # Checked: the replay check named the senders with limits. A wager placed for a
            # player who sent no command here (his late bet, accepted by the chef) is his money
            # too. (Unchecked, the statement asks about every wager's player itself.)
            others = play_limits.stakers(all_events) - {s.it.who.id for s in staged} - self.limited
            self.limited |= others & self.known_limited  # (known to have some: checked, not asked)
            others -= self.known_limited
            if others:
                found = await store.limited_among(conn, sorted(others), self.info.currency)
                self.limited |= found
                self.known_limited |= found
        limited = bool(ops) and bool(self.limited)

        batch = store.Batch(
            tid, self.epoch, seq, last_round, event_rows, list(players), results, refs, logged, n, state, keep, ops,
            unchecked=None if self._held is None else store.Unanswered(self.info.currency, [
                (s.it.who.id, s.it.cid) for s in staged if not s.it.system] + [
                (it.who.id, it.cid) for it, _, _ in self._held if not it.system]),
        )

        async def record() -> None:
            # Maybe with other tables' batches in one statement (server.commit_group); inside
            # the transaction below, a part of it.
            owned = await self.ctx.commits.record(conn, batch)
            if not owned:  # fencing: another process owns the table; nothing was written
                raise LostOwnership(tid)

        if opened or limited or audits:
            # What the batch statement does not carry goes first, in one transaction with it.
            async with conn.transaction():
                if opened:
                    await open_accounts(self, conn, opened)
                if limited:
                    # A player's own stake and loss limits, where his bets' money leaves his
                    # wallet (only players who have some: ``self.limited``, read with the
                    # batch's replay check).
                    await play_limits.check(conn, self.info.currency, all_events, self.limited)
                if audits:
                    # Console actions (croupier, chef, director) are audited with the batch.
                    await store.audit.record_many(conn, audits)
                await record()
        else:
            # Most batches: the ledger's operations and the rest of the batch in one statement,
            # its own transaction, one round trip (issue 14: BEGIN, the ledger, the batch and
            # COMMIT were four, most of a commit's time).
            await record()
        # The whole batch in one message, encoded once for every subscriber.
        frames = [encoder.encode(Events(tid, seq, published))] if published else []
        return Done(frames, acks, seq, n, last_round, snapshot)

    def _move_on(self, staged: list[Staged], done: Done) -> None:
        """The batch is committed: the table's counters and its committed engine follow it."""
        self.seq, self.command, self.round = done.seq, done.command, done.round
        if done.snapshot:
            self.snapshot_due, self.logged_batches = False, 0
        else:
            self.logged_batches += 1
        self._advance_committed(staged)  # (after: a divergence asks for the next snapshot)

    # ---- the committed engine ------------------------------------------------------------
    def _copy(self, engine: Any) -> Any:
        return self.kind.load(self.kind.dump(engine))

    def committed_copy(self) -> Any:
        """An engine of the committed state of one's own (to hold across an await)."""
        return self._copy(self.committed_engine)

    def _rollback(self) -> None:
        """The working engine back to the committed state (a batch refused or failed). The
        committed state's bytes are kept until the next commit: a batch retried one command
        at a time may roll back once per refusal."""
        key = (self.seq, self.command)
        if self._committed_bytes[0] != key:
            self._committed_bytes = (key, self.kind.dump(self.committed_engine))
        self.engine = self.kind.load(self._committed_bytes[1])

    def _advance_committed(self, staged: list[Staged]) -> None:
        """A committed batch's commands applied to the committed engine, each checked to give
        the events it gave the first time. Should an engine ever differ (a bug: they are
        pure), the committed engine is rebuilt from the working one, which is exactly what
        was committed, and the table plays on."""
        engine = self.committed_engine
        try:
            for s in staged:
                if s.command is None:
                    continue
                again = self.kind.engine_events(engine, s.command, self.kind.actor(s.it.who))
                first = len(s.it.pre)
                if again != s.events[first:first + s.own]:
                    raise RuntimeError(f"{event_tag(s.command)} gave other events applied again")
        except Exception:
            log.exception("table %s: the committed engine diverged; rebuilt from the working one", self.info.id)
            self.committed_engine = self._copy(self.engine)
            # The log since the snapshot may not replay either: the next batch takes one, kept.
            self.snapshot_due = True

    def _reads_back(self, command: Any, raw: bytes) -> bool:
        """Whether a command's JSON decodes to the very command (what a replay would apply).
        One the server built outside what its decoder accepts would stop the table's next
        start: it is not logged, and its batch takes a snapshot (kept) in its place."""
        try:
            if self.kind.decode_command(raw) == command:
                return True
        except GameError:
            pass
        log.warning("table %s: a %s command does not read back from its JSON; its batch takes a snapshot",
                    self.info.id, event_tag(command))
        return False

    # ---- presence ----------------------------------------------------------------------------
    def presence_from(self, source: str, player: str, here: bool) -> None:
        """Process ``source`` says whether ``player`` follows the table there (once per change,
        and again when the table moves: ``server.router``). He is present while any process says so."""
        players = self.sources.setdefault(source, set())
        loop = asyncio.get_running_loop()
        if here and player not in players:
            players.add(player)
            self.presence.joined(player)
        elif not here and player in players:
            players.discard(player)
            if self.presence.left(player, loop.time()):
                loop.call_later(self.ctx.settings.seat_release_seconds, self._release_gone)

    def forget_sources(self, live: set[str]) -> None:
        """Processes that stopped beating follow nothing any more."""
        for source in [s for s in self.sources if s not in live]:
            self.forget_source(source)

    def forget_source(self, source: str) -> None:
        """What ``source`` said no longer holds (it stopped, or started afresh under its name)."""
        for player in list(self.sources.get(source, ())):
            self.presence_from(source, player, False)
        self.sources.pop(source, None)

    def _release_gone(self) -> None:
        """Free the seats of players gone for the house's time. Seats go between rounds only,
        so a release refused because a round began is tried again after a later batch; an
        entry goes once its player holds no seat any more."""
        if self.stopped or not self.presence.gone_since:
            return
        loop = asyncio.get_running_loop()
        gone_before = loop.time() - self.ctx.settings.seat_release_seconds
        for player in self.presence.due(set(self.kind.seated(self.engine)), gone_before):
            command = self.kind.release_command(self.engine, self.info, player)
            if command is not None:
                answered = loop.create_future()
                self.presence.releasing(player, answered)
                self.queue.put_nowait(Item(self.system, f"release:{player}:{self.seq}", command, answered))

    # ---- timers ----------------------------------------------------------------------------
    def _arm_timer(self) -> None:
        if self.stopped:
            return
        self._release_gone()
        timer: Timer | None = self.kind.next_timer(self.engine, self.info, self.ctx.settings)
        if timer is None:
            if self._timer:
                self._timer.cancel()
            self._timer, self._timer_key, self._timer_due = None, None, None
            return
        if timer.key == self._timer_key:
            return
        if self._timer:
            self._timer.cancel()
        self._timer_key = timer.key
        loop = asyncio.get_running_loop()
        name = timer.key.split(":", 1)[0] if callable(timer.command) else event_tag(timer.command)
        self._timer_due = (name, loop.time() + max(timer.delay, 0.0))
        self._timer = loop.call_later(max(timer.delay, 0.0), self._fire, timer)

    def _fire(self, timer: Timer) -> None:
        self._timer, self._timer_key, self._timer_due = None, None, None
        if not self.stopped:
            # A callable draws its command when it fires (an RNG result exists only from then).
            command = timer.command() if callable(timer.command) else timer.command
            self.queue.put_nowait(Item(self.system, f"auto:{timer.key}", command))

    # ---- views -----------------------------------------------------------------------------
    def snapshot_view(self, who: Principal | None) -> tuple[int, Any]:
        """The committed state as ``who`` may see it (never a half-applied batch), with
        ``next_automatic``: the command the table's clock sends next and in how many
        milliseconds (a page's countdown: relative, so no client clock is trusted), or null."""
        view = self.kind.view(self.committed_engine, who)
        if isinstance(view, msgspec.Struct):
            due = None
            if self._timer_due is not None:
                left = max(0.0, self._timer_due[1] - asyncio.get_running_loop().time())
                due = {"command": self._timer_due[0], "in_ms": round(left * 1000)}
            view = {**msgspec.structs.asdict(view), "next_automatic": due}
            if who is not None and who.role in ASSIGNED_ROLES and who.id not in self.info.staff:
                view["legal"] = []  # (the server's rule on top of the engine's: staff act where assigned)
            if crowd.filtered_for(self.info, who):  # a player at a crowd table: his own bets
                view = crowd.view_for(view, who.id if who is not None else "")
        return self.seq, view
