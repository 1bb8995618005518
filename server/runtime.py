"""Table runtime: each table has exactly one owner task that applies its commands in order.

Per batch of queued commands: the engine handles each (a GameError rejects that one and
changes nothing), then ONE PostgreSQL statement, its own transaction, writes the ledger ops,
the events with their seq, the commands applied (and, at a snapshot, the engine state:
``SNAPSHOT_BATCHES``; a start replays the log on the snapshot, ``restore``) and the accepted
command ids: one round trip a batch (``store.record_batch``; a batch with more to write, a
companion's, accounts to open, a player's play limits or a console action to audit, runs it
inside a transaction with those).
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
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any, NamedTuple, NoReturn

import asyncpg
import msgspec

from games.errors import GameError
from games.ledger.model import Post, Void
from games.wagers import WagerPlaced
from server import crowd, metrics, play_limits, store
from server.auth import Principal
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


class OutcomeUnknown(Exception):
    """The connection failed under a batch's statement: it may have been committed or not."""


def outcome_unknown(exc: BaseException, closed: bool = False) -> bool:
    """Whether a failed commit may have been written all the same: the connection failed or
    ended under it (a FATAL, such as a terminated backend, can follow a commit), or is
    ``closed`` since (asyncpg drops it on a protocol error). PostgreSQL's other errors, ours
    raised in the statement among them, roll the statement back; so does a failure on a
    connection still open (a value asyncpg could not encode never left the process)."""
    if closed:
        return True
    if isinstance(exc, asyncpg.PostgresError):
        severity = getattr(exc, "severity_en", None) or getattr(exc, "severity", None)
        return isinstance(exc, asyncpg.PostgresConnectionError) or severity in ("FATAL", "PANIC")
    return isinstance(exc, (OSError, TimeoutError))


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


class Staged(NamedTuple):
    """An item applied to the engine in a batch not yet committed."""

    it: Item
    events: list[Any]  # its ``pre``, then its command's, then (a batch's last) a jackpot pool's
    rounds: list[str]  # the round of each event
    command: Any  # the command as applied (``kind.draw``): what is logged; None: none
    own: int  # how many of ``events`` its command produced


class Tip(NamedTuple):
    """Where the table's log stands after a batch: the counters the next batch numbers from."""

    seq: int  # the last event
    command: int  # the command counter
    round: str
    logged_batches: int  # batches logged since the last snapshot
    snapshot_due: bool  # the next batch must take one
    batches: int  # batch statements written (what the next statement names: the chain, migration 0121)


class Done(NamedTuple):
    """What a batch's statement writes, to be answered once it is committed (its transaction
    may still enclose it: a companion's)."""

    published: list[TableEvent]  # its events as the table's channel shows them (one frame)
    acks: list[tuple[Item, int]]  # each command's answer: its last event's seq
    after: Tip
    snapshot: bool


class Prepared(NamedTuple):
    """A batch's statement, built and ready to send (``TableRuntime._prepare``)."""

    done: Done
    write: Callable[[Any], Awaitable[None]]  # the statement (in a transaction with more, unless ``single``)
    single: bool  # one statement alone: it may go to PostgreSQL behind another (the pipeline)


@dataclass
class Open:
    """The batch being staged in the pipeline: its items applied to the working engine, on top
    of every batch in flight, and not sent yet."""

    items: list[Item] = field(default_factory=list)  # every item taken, in order, refused ones too
    staged: list[Staged] = field(default_factory=list)
    held: list[tuple[Item, str, str]] = field(default_factory=list)  # refusals, until the statement checks them


@dataclass
class Flight:
    """A batch whose statement is in PostgreSQL (``TableRuntime._flow``)."""

    batch: Open
    prepared: Prepared
    started: float  # time.monotonic() when sent: the commit time's start
    behind: bool  # sent while another batch was in PostgreSQL (its statement waits for that one)
    task: asyncio.Task[None] | None = None
    written: bool = False  # committed; answered once every batch ahead of it is
    error: Exception | None = None  # nothing of it was written, or (OutcomeUnknown) it is not known


class TableRuntime:
    def __init__(self, ctx: Resources, info: TableInfo, kind: GameKind) -> None:
        self.ctx = ctx
        self.info = info
        self.kind = kind
        # The server itself, for its timers, recovery and seat releases: "system-<table>" in
        # the events (the name clients and stored histories have always read). No login can
        # hold the role: the users table refuses it.
        self.system = Principal(f"system-{info.id}", "system", info.currency)
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
        self.batches = 0  # batch statements written at the table (``table_state.batches``: the chain)
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
        # The items of the batches being committed (a cut-off leaves their outcome unknown).
        self._batch: list[Item] = []
        # The pipeline (``_flow``): the batch being staged, not sent yet; a committed batch's
        # commands found to give other events applied again while later ones were staged on
        # top (the committed engine is rebuilt once nothing is ahead of it); and the flow's
        # wake-up, queued when a batch's statement returns.
        self._open: Open | None = None
        self._flights: collections.deque[Flight] = collections.deque()
        self._diverged = False
        self._landed = Item(self.system, "landed", None)
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
        self.seq, self.batches = loaded.seq, loaded.batches
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
        backlog: collections.deque[Item] = collections.deque()  # taken by the pipeline, for the checked way
        while True:
            item = backlog.popleft() if backlog else await self.queue.get()
            if item is self._landed:  # (a pipeline's wake-up it no longer waited for)
                continue
            if self.stopped:  # stopping: no batch is begun any more (``stop`` answers the rest)
                self.queue.put_nowait(item)
                while backlog:
                    self.queue.put_nowait(backlog.popleft())
                return
            batch = [item]
            while len(batch) < BATCH and (backlog or not self.queue.empty()):
                more = backlog.popleft() if backlog else self.queue.get_nowait()
                if more is not self._landed:
                    batch.append(more)
            self._busy = True
            self._idle.clear()
            self._batch = batch
            try:
                if self._pipelined(batch):
                    backlog.extend(await self._flow(batch))
                else:
                    await self._process(batch)
            except LostOwnership:
                log.warning("table %s: another process owns it now; stopping here", self.info.id)
                self._give_up(self._batch, "table_unavailable", "The table moved to another server; reconnect.")
                return
            except (OutcomeUnknown, store.ChainBroken) as exc:
                # Committed or not, the table's state here may not be the database's: it is
                # read again from there, here or in another process, at once on the notice
                # (a statement still running from here writes nothing then: the lease's epoch
                # moves on when the table is taken again). The table's recovery voids, refunds
                # or pauses the round it was in, as after a crash. (A broken chain: the table
                # was not at the batch its statement named, so nothing of it was written.)
                if isinstance(exc, OutcomeUnknown):
                    log.exception("table %s: the outcome of a batch's statement is unknown; the table restarts "
                                  "from the database", self.info.id)
                    self._give_up(self._batch, "outcome_unknown", UNKNOWN)
                else:
                    log.error("table %s: the table's database row is not at the batch this process wrote last; "
                              "the table restarts from the database", self.info.id)
                    self._give_up(self._batch, "table_unavailable", "The table is restarting; try again.")
                with contextlib.suppress(Exception):
                    async with self.ctx.pool.acquire() as conn:
                        await store.hand_back(conn, self.ctx.settings.owner_id, self.info.id)
                        await store.notify_table_changed(conn, self.info.id)
                return
            except Exception:  # never let one bad batch kill the table
                log.exception("table %s: batch failed", self.info.id)
                self._rollback()
                for it in self._batch:
                    self._reject(it, "internal_error", "Something went wrong; nothing was changed.")
            finally:
                self._busy = False
                self._held = None
                self._idle.set()
            self._arm_timer()

    def _give_up(self, batch: list[Item], code: str, message: str) -> None:
        """The table stops here at once: the batch's unanswered commands get ``code``, those
        staged or queued behind it ``table_unavailable`` (nothing of theirs was written)."""
        self.stopped = True
        for it in batch:
            self._reject(it, code, message)
        self._refuse_queued()
        self.ctx.manager.lost(self.info.id)

    def _refuse_queued(self) -> None:
        """The commands staged or queued behind a table that stops: nothing of theirs was written."""
        behind = self._open.items if self._open is not None else []
        while not self.queue.empty():
            behind.append(self.queue.get_nowait())
        for it in behind:
            if it is not self._landed:
                self._reject(it, "table_unavailable", "The table is closing; try again.")

    # ---- the pipeline ----------------------------------------------------------------------
    def _pipelined(self, batch: list[Item]) -> bool:
        """Whether ``batch`` starts a pipeline (``_flow``): not at a table with companions (they
        write in the batch's transaction, after reading the database), nor with a player
        known to have play limits (his batch takes the replay check first: ``_process``)."""
        if self.companions:
            return False
        return not any(not it.system and it.who.id in self.known_limited for it in batch)

    async def _flow(self, batch: list[Item]) -> list[Item]:
        """Batches one behind another, for as long as commands keep coming (issue 14). Each
        command is applied to the engine as it arrives, on top of every batch still being
        committed; the batch so staged is sent at once when nothing is in PostgreSQL, or
        behind what is there while fewer than ``pipeline_depth`` are: its statement waits
        there for the one before to commit or roll back (the chain, migration 0121), and
        writes nothing unless that one was written. Each statement's task answers its own
        batch once it is committed and every batch ahead of it answered (``_land_ready``),
        after sending the next, so neither the answers nor the next batch's engine work stand
        between two commits, and an answer costs no more hops than one batch at a time did.

        Every batch goes unchecked (``_process``'s fast way), its refusals held until its
        statement shows none answers a retry. When one fails, nothing behind it was written
        either: the engine goes back to the committed state, the failed batch runs the
        checked way, alone, and what was staged behind it is staged again. Returns the items
        it did not take, in order (a player with play limits: the checked way)."""
        flights = self._flights
        work = collections.deque(batch)  # taken, not staged yet
        rest: list[Item] = []
        self.limited = set()
        self._open = Open()
        self._held = self._open.held
        try:
            while True:
                self._take(work, rest)
                self._land_ready()
                if flights and flights[0].error is not None:  # the first in flight failed
                    work.extendleft(reversed(await self._recover()))
                    continue
                if self._may_send():
                    self._send()
                if not flights:
                    if self._diverged and not self._open.staged:
                        self._rebuild_committed()
                    if self.stopped:  # what is staged or queued is refused (``stop``: nothing of it was written)
                        for it in work:
                            self._reject(it, "table_unavailable", "The table is closing; try again.")
                        return rest
                    if self._open.held and not self._open.staged:  # refusals alone: checked, then sent
                        held, self._open = self._open.held, Open()
                        self._held = self._open.held
                        async with self.ctx.pool.acquire() as conn:
                            await self._answer_held(conn, held)
                        continue
                    if not self._open.items and (rest or not (work or not self.queue.empty())):
                        return rest + list(work)
                    continue
                # Wait for a command to come or a statement to return (those that fail, and the
                # last one in, wake the flow: ``_fly``).
                if self.queue.empty():
                    item = await self.queue.get()
                    if item is not self._landed:
                        work.append(item)
                elif not self._staging(work, rest):
                    task = flights[0].task
                    assert task is not None
                    await asyncio.wait([task])  # (what is queued waits for it)
        except BaseException as exc:
            # The table stops (``_run``): what was taken and not sent is refused with what is
            # staged (``_refuse_queued``).
            if self._open is not None:
                self._open.items.extend([*rest, *work])
            if isinstance(exc, (LostOwnership, OutcomeUnknown, store.ChainBroken)) \
                    or not isinstance(exc, Exception):
                raise
            # A fault of the pipeline's own: statements still running may commit. Their
            # commands are answered as unknown (sent again, each is applied at most once) and
            # the table is read again from the database.
            log.exception("table %s: the pipeline failed", self.info.id)
            self._batch = [it for f in flights for it in f.batch.items]
            flights.clear()
            raise OutcomeUnknown(self.info.id) from exc

    def _staging(self, work: collections.deque[Item], rest: list[Item]) -> bool:
        """Whether the open batch takes more now."""
        return not rest and not self.stopped and not self._diverged and self._open is not None \
            and len(self._open.items) < BATCH and bool(work or not self.queue.empty())

    def _take(self, work: collections.deque[Item], rest: list[Item]) -> None:
        """Stage what has come in onto the open batch, in order, until it is full; a player
        known to have play limits stops it (his command and what follows go the checked way)."""
        batch = self._open
        assert batch is not None
        while self._staging(work, rest):
            it = work.popleft() if work else self.queue.get_nowait()
            if it is self._landed:
                continue
            if not it.system and it.who.id in self.known_limited:
                rest.append(it)
                return
            batch.items.append(it)
            try:
                staged = self._stage(it)
            except Exception:
                # An engine bug: this one is refused, and the working engine is built again from
                # the committed one and what is staged on top of it (applied again, as each
                # commit does to the committed engine).
                log.exception("table %s: engine failed on %r", self.info.id, it.command)
                self._restage([s for f in self._flights for s in f.batch.staged] + batch.staged)
                self._refused(it, "internal_error", "The table could not apply that; nothing was changed.")
                continue
            if staged is not None:
                batch.staged.append(staged)

    def _may_send(self) -> bool:
        """Whether the open batch goes to PostgreSQL now: when nothing is there, or behind what
        is there while fewer than ``pipeline_depth`` are, each alone in its statement (one
        with more to write runs in a transaction, only when nothing is ahead of it), and a
        connection is free now (none is waited for while the table holds one)."""
        batch, flights = self._open, self._flights
        if batch is None or not batch.staged or self.stopped:
            return False
        if not flights:
            return True
        if len(flights) >= max(1, self.ctx.settings.pipeline_depth) or not flights[-1].prepared.single:
            return False
        if any(s.it.who.role not in ("player", "system") and s.it.command is not None for s in batch.staged):
            return False  # a console action is audited in the batch's transaction
        pool = self.ctx.pool
        return pool.get_idle_size() > 0 or pool.get_size() < pool.get_max_size()

    def _send(self, landed: Tip | None = None) -> None:
        """The open batch's statement to PostgreSQL, numbered on from the last batch sent (or
        ``landed``: the table after batches committed and not answered yet, or the committed
        state); a new open batch begins."""
        batch, flights = self._open, self._flights
        assert batch is not None
        base = flights[-1].prepared.done.after if flights else landed or self._committed()
        flight = Flight(batch, self._prepare(batch.staged, base, batch.held), time.monotonic(), bool(flights))
        self._batch = [*self._batch, *batch.items] if flights else list(batch.items)
        flights.append(flight)
        self._fly_off(flight)
        self._open = Open()
        self._held = self._open.held

    def _fly_off(self, flight: Flight) -> None:
        flight.task = asyncio.create_task(self._fly(flight), name=f"table {self.info.id} batch")

    async def _fly(self, flight: Flight) -> None:
        """A batch's statement on a connection of its own; then, committed, the limits its
        events changed (on the same connection), and the batch answered once every batch
        ahead of it is (``_land_ready``). A failure is the flow's to handle: it is woken."""
        try:
            async with self.ctx.pool.acquire() as conn:
                try:
                    await flight.prepared.write(conn)
                except (LostOwnership, store.Unchecked, store.ChainBroken):
                    raise
                except Exception as exc:
                    if outcome_unknown(exc, _closed(conn)):
                        raise OutcomeUnknown(self.info.id) from exc
                    raise
                await self._record_limits([ev for s in flight.batch.staged for ev in s.events], conn)
                flight.written = True
                # Answered before the connection goes back: asyncpg's release yields to the loop
                # (a shielded wait), a turn of the loop on every acknowledgement otherwise.
                self._land_ready()
        except BaseException as exc:  # (its own cancellation too: the outcome is unknown then)
            if flight.written:
                if isinstance(exc, Exception):
                    log.warning("table %s: a connection could not go back to the pool: %s", self.info.id, exc)
                    return
                raise
            flight.error = exc if isinstance(exc, Exception) else OutcomeUnknown(self.info.id)
            self.queue.put_nowait(self._landed)

    def _land_ready(self) -> None:
        """The batches committed at the head of those in flight, answered in order, after the
        next batch is sent in their place; a batch at the head whose statement ran before the
        one ahead of it had locked the table's row (two backends: nothing orders them) found
        the count not moved on and wrote nothing: that one committed, it goes again."""
        flights = self._flights
        landed: list[Flight] = []
        while flights and flights[0].written:
            landed.append(flights.popleft())
        if flights and flights[0].behind and isinstance(flights[0].error, store.ChainBroken):
            metrics.resent()
            head = flights[0]
            head.behind, head.error = False, None
            self._fly_off(head)
        if not landed:
            return
        if self._may_send():
            self._send(landed[-1].prepared.done.after)
        ahead = bool(flights) or bool(self._open is not None and self._open.staged)
        for f in landed:
            self._move_on(f.batch.staged, f.prepared.done, ahead)
            for it, code, message in f.batch.held:
                self._reject(it, code, message)
            self._answer(f.batch.staged, f.prepared.done, f.started)
        self._batch = [it for f in flights for it in f.batch.items]
        self._arm_timer()
        if not flights or flights[0].error is not None:
            # The flow looks: more to send, or done; or the batch now first had failed (its
            # own wake-up may have come while it was behind this one).
            self.queue.put_nowait(self._landed)

    async def _recover(self) -> list[Item]:
        """The first batch in flight failed. Once every statement behind it has returned too
        (none of them was written: the chain), the engine goes back to the committed state and
        the failed batch runs again the checked way, alone (one command at a time if refused
        again); returns what was behind it, to be staged again. Raises where the table must
        stop: another owner, a broken chain, an outcome unknown (of the failed batch, or of one
        behind it: were it written, so was the failed one)."""
        flights = self._flights
        await asyncio.wait([f.task for f in flights if f.task is not None])
        head, *behind = flights
        flights.clear()
        exc = head.error
        assert exc is not None
        self._batch = [it for f in (head, *behind) for it in f.batch.items]
        if isinstance(exc, (LostOwnership, store.ChainBroken)):
            raise exc
        if isinstance(exc, OutcomeUnknown) or self._diverged or any(
                not isinstance(f.error, store.ChainBroken) for f in behind):
            raise OutcomeUnknown(self.info.id) from exc
        batch, again = head.batch, [it for f in behind for it in f.batch.items]
        if self._open is not None:
            again += self._open.items
        self._rollback()
        self._open = Open()
        self._held = None
        if isinstance(exc, store.Unchecked):
            metrics.rechecked(str(exc))
        else:
            metrics.rechecked("failed")
            if not isinstance(exc, GameError):
                log.warning("table %s: a batch of %d commands could not be committed (%s: %s); again with the "
                            "replay check", self.info.id, len(batch.staged), type(exc).__name__, exc)
        self._batch = list(batch.items)
        async with self.ctx.pool.acquire() as conn:
            await self._checked(batch.items, conn)
        # (a player found with limits is known now: his commands leave the flow, ``_take``)
        self._batch, self.limited = [], set()
        self._held = self._open.held
        return again

    def _restage(self, staged: list[Staged]) -> None:
        """The working engine built again: the committed one with ``staged`` applied again on
        top, each checked to give the events it gave (else the pipeline fails: ``_flow``)."""
        engine = self._copy(self.committed_engine)
        self._apply_again(engine, staged)
        self.engine = engine

    def _apply_again(self, engine: Any, staged: list[Staged]) -> None:
        """``staged``'s commands applied to ``engine`` again, each checked to give the events it
        gave the first time (RuntimeError otherwise: the engines are pure, so it is a bug)."""
        for s in staged:
            if s.command is None:
                continue
            again = self.kind.engine_events(engine, s.command, self.kind.actor(s.it.who))
            first = len(s.it.pre)
            if again != s.events[first:first + s.own]:
                raise RuntimeError(f"{event_tag(s.command)} gave other events applied again")

    # ---- one batch at a time ---------------------------------------------------------------
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
                    held, self._held = self._held, None
                    await self._answer_held(conn, held or [])
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

    async def _answer_held(self, conn: Any, held: list[tuple[Item, str, str]]) -> None:
        """The refusals an unchecked batch held back when it committed nothing: each is sent,
        unless its command id was accepted here before (a retry), which gets that answer
        again."""
        players = [it for it, _, _ in held if not it.system]
        done: dict[tuple[str, str], str] = {}
        if players:
            done, _ = await store.answered(conn, self.info.id, [it.who.id for it in players],
                                           [it.cid for it in players])
        for it, code, message in held:
            if not _answer_again(it, done):
                self._reject(it, code, message)

    def _stage(self, it: Item) -> Staged | None:
        """``it`` applied to the working engine: what it gave, or None if the engine refused
        it (the refusal sent, or held: ``_refused``; the engine is as it was). An engine
        fault other than a refusal raises."""
        before = self.kind.round_id(self.engine)
        command: Any = None
        own: list[Any] = []
        try:
            if it.command is not None:
                command = self.kind.draw(self.engine, it.command)
                own = self.kind.engine_events(self.engine, command, self.kind.actor(it.who))
        except GameError as exc:
            self._refused(it, exc.code, exc.message)
            return None
        events = [*it.pre, *own]
        rounds = self.kind.label_rounds(events, before, self.kind.round_id(self.engine))
        return Staged(it, events, rounds, command, len(own))

    async def _apply(self, items: list[Item], conn: Any) -> None:
        staged: list[Staged] = []
        for n, it in enumerate(items):
            try:
                one = self._stage(it)
            except Exception:
                # An engine bug: back to the committed state, refuse this one, redo the others.
                log.exception("table %s: engine failed on %r", self.info.id, it.command)
                self._rollback()
                self._refused(it, "internal_error", "The table could not apply that; nothing was changed.")
                await self._apply([s.it for s in staged] + items[n + 1:], conn)
                return
            if one is not None:
                staged.append(one)
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
        except (LostOwnership, store.Unchecked, OutcomeUnknown, store.ChainBroken):
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
        committed = [ev for s in staged for ev in s.events]
        await self._record_limits(committed, conn)
        for companion in self.companions:
            try:
                companion.committed(committed)
            except Exception:  # committed all the same; a companion catches up from the stored events
                log.exception("table %s: companion %s failed after the commit", self.info.id,
                              type(companion).__name__)
        self._answer(staged, done, started)

    def _answer(self, staged: list[Staged], done: Done, started: float) -> None:
        """A committed batch's acknowledgements, then its events on the table's channel, all of
        them in one ``events`` message encoded once for every subscriber."""
        # Per batch: two observes; per command: a counter increment and an observe, children
        # held by self.metrics (no label lookups).
        now = self.leased_at = time.monotonic()  # (each commit renewed the lease)
        m = self.metrics
        m.commit.observe(now - started)
        m.batch.observe(len(staged))
        for it, last_seq in done.acks:
            if it.future is not None and not it.future.done():
                it.future.set_result(Accepted(it.cid, self.info.id, last_seq))
                if not it.system:
                    m.accepted(it.command).inc()
                    m.ack.observe(now - it.arrived)
        if done.published:
            try:
                self.ctx.channels.publish(encoder.encode(Events(self.info.id, done.after.seq, done.published)),
                                          channel_of(self.info.id))
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

    def _committed(self) -> Tip:
        return Tip(self.seq, self.command, self.round, self.logged_batches, self.snapshot_due, self.batches)

    async def _commit(self, staged: list[Staged], conn: Any) -> Done:
        """The batch written on ``conn``, numbered on from the committed state (one batch at a time)."""
        prepared = self._prepare(staged, self._committed(), self._held)
        await prepared.write(conn)
        return prepared.done

    def _prepare(self, staged: list[Staged], base: Tip, held: list[tuple[Item, str, str]] | None) -> Prepared:
        """The batch's statement, numbered on from ``base`` (the table after the batch before
        it), from the working engine as the batch leaves it; ``held``: the refusals of a batch
        sent unchecked, whose command ids its statement checks with its own (None: checked)."""
        tid = self.info.id
        seq, n = base.seq, base.command
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
        keep = base.snapshot_due or last_round != base.round or unreadable
        snapshot = keep or base.logged_batches + 1 >= every
        state = self.kind.dump(self.engine) if snapshot else None
        ops = self.kind.ledger_ops(self.info, all_events)
        # The list of wagers in play is written when holds are released and at a snapshot; a
        # batch that only adds bets leaves it, its holds counted in play (migration 0116).
        # Rebuilt every batch it grew with the round: thousands of refs on a crowded wheel.
        releases = any(isinstance(op, (Post, Void)) for op in ops)
        refs = open_refs(tid, self.kind.open_wagers(self.engine)) if snapshot or releases else None
        opened = self.accounts.opened_by(all_events)
        limited = bool(ops) and bool(self.limited)
        unchecked = None if held is None else store.Unanswered(self.info.currency, [
            (s.it.who.id, s.it.cid) for s in staged if not s.it.system] + [
            (it.who.id, it.cid) for it, _, _ in held if not it.system])
        after = Tip(seq, n, last_round, 0 if snapshot else base.logged_batches + 1,
                    base.snapshot_due and not snapshot, base.batches + 1)

        async def record(conn: Any) -> None:
            owned = await store.record_batch(
                conn, tid, self.ctx.settings.owner_id, self.ctx.settings.lease_seconds, seq, last_round,
                event_rows, players, results, refs,
                logged, n, state, keep, ops, unchecked=unchecked, epoch=self.epoch, batches=base.batches,
            )
            if not owned:  # fencing: another process owns the table; nothing was written
                raise LostOwnership(tid)

        async def write(conn: Any) -> None:
            if not (opened or limited or audits):
                # Most batches: the ledger's operations and the rest of the batch in one
                # statement, its own transaction, one round trip (issue 14: BEGIN, the ledger,
                # the batch and COMMIT were four, most of a commit's time).
                await record(conn)
                return
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
                await record(conn)

        return Prepared(Done(published, acks, after, snapshot), write, not (opened or limited or audits))

    def _move_on(self, staged: list[Staged], done: Done, ahead: bool = False) -> None:
        """The batch is committed: the table's counters and its committed engine follow it
        (``ahead``: later batches are staged on the working engine already)."""
        after = done.after
        self.seq, self.command, self.round, self.batches = after.seq, after.command, after.round, after.batches
        self.logged_batches, self.snapshot_due = after.logged_batches, after.snapshot_due
        self._advance_committed(staged, ahead)  # (after: a divergence asks for the next snapshot)

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

    def _advance_committed(self, staged: list[Staged], ahead: bool = False) -> None:
        """A committed batch's commands applied to the committed engine, each checked to give
        the events it gave the first time. Should an engine ever differ (a bug: they are
        pure), the committed engine is rebuilt from the working one, which is exactly what
        was committed, and the table plays on; with later batches ``ahead`` on the working
        engine, once they have all been committed (``_flow``), the committed engine standing
        still meanwhile."""
        if self._diverged:
            return
        try:
            self._apply_again(self.committed_engine, staged)
        except Exception:
            log.exception("table %s: the committed engine diverged; rebuilt from the working one", self.info.id)
            if ahead:
                self._diverged = True
            else:
                self._rebuild_committed()

    def _rebuild_committed(self) -> None:
        """The committed engine as the working one (nothing is staged beyond what was committed)."""
        self.committed_engine = self._copy(self.engine)
        self._diverged = False
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
