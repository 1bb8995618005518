"""The batches of several tables committed in one statement (issue 14), for a floor whose
PostgreSQL is the bottleneck.

Each table commits its own batches, one at a time (``server.runtime``). A statement's fixed
cost in PostgreSQL (the ledger's function and trigger, each sub-statement's start) is about
0.6 ms of its CPU, most of a five-bet batch's; one statement for ten tables' batches costs
each bet a third of what ten statements do (BENCHMARKS.md, "Tables committed together").

With ``at_once`` set (``CASINO_COMMIT_FLIGHTS``), a process sends at most that many batch
statements at a time. A table whose batch is ready while one may go sends it at once. A
batch that finds every flight taken waits; when a flight lands, the first waiting table
leads the next statement, with up to ``most`` of the batches that gathered meanwhile, on its
own connection. Under a light load each batch goes alone and at once; under a heavy one the
statements grow with the load instead of multiplying. A statement that waits longer than
``PATIENCE`` (for a lock) stops counting against the flights: its own tables wait for it,
the others go on. A batch committed inside a transaction (a companion's, accounts to open)
or alone after a failed group does not count either. With ``at_once`` 0 (the default) each
batch is its own statement, at once: the tables' commits are then quicker, their batches
larger, and the server spends less CPU a bet, which on a host that runs PostgreSQL too
matters more (the same section).

All or nothing holds for the group as for one batch (``store.record_batches``). When a
group's statement fails, nothing of it was written, and each of its tables commits its own
batch alone, which then gives that table exactly the answer it would have had: its ledger
refusal, its lost lease, its unchecked command. Only when the outcome is unknown (the
connection failed under the statement) does every table of the group learn so, since any
of them may have been written. A leading table that is cancelled (its runtime stopping)
lets the statement finish: the other tables of it get their outcome.
"""

from __future__ import annotations

import asyncio
import collections
from typing import TYPE_CHECKING, Any

import asyncpg

from server import metrics, store

if TYPE_CHECKING:
    from server.config import Settings

MOST = 32  # batches in one statement at most
# A statement that runs longer (waiting for a lock: a wallet held by a long transaction) no
# longer counts against the flights: its tables wait for it, the others do not.
PATIENCE = 0.25


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


_LEAD, _ALONE = object(), object()  # what a waiting table is told besides its batch's outcome


class _Waiting:
    __slots__ = ("batch", "future", "flight")

    def __init__(self, batch: store.Batch, future: asyncio.Future[Any]) -> None:
        self.batch = batch
        self.future = future
        self.flight = False  # a flight is kept for it (to lead), not yet given back


class CommitGroup:
    """The batch statements of one process: at most ``at_once`` in flight, each for at most
    ``most`` tables' batches."""

    def __init__(self, settings: Settings, at_once: int, most: int = MOST, patience: float = PATIENCE) -> None:
        if at_once < 0 or most < 1:
            raise ValueError("no statements in flight (0: no limit), or statements of no batch")
        self.settings = settings
        self.at_once = at_once
        self.most = most
        self.patience = patience
        self._waiting: collections.deque[_Waiting] = collections.deque()
        self._flights = 0

    async def record(self, conn: asyncpg.Connection, batch: store.Batch) -> bool:
        """Commit ``batch``, maybe with other tables': as ``store.record_batch`` does, with its
        answers; and OutcomeUnknown when the statement's outcome is not known. Inside a
        transaction of ``conn``'s (a companion's, accounts to open) it is a part of that,
        alone."""
        if not self.at_once or conn.is_in_transaction():  # no limit, or a part of the caller's
            return await self._alone(conn, batch)
        loop = asyncio.get_running_loop()
        me = _Waiting(batch, loop.create_future())
        self._waiting.append(me)
        if self._flights < self.at_once:  # a flight is free: lead at once
            self._flights += 1
            me.flight = True
        try:
            while True:
                if me.flight:
                    await self._lead(conn, me)
                outcome = await me.future
                if outcome is not _LEAD:
                    break
                # A flight landed: lead the next group, with the batches that gathered meanwhile.
                me.future = loop.create_future()
                self._waiting.appendleft(me)
        except BaseException:
            self._left(me)
            raise
        if outcome is _ALONE:  # the group's statement failed, and wrote nothing: alone now
            return await self._alone(conn, batch)
        return bool(outcome)

    async def _alone(self, conn: asyncpg.Connection, batch: store.Batch) -> bool:
        return await store.record_batches(conn, self.settings.owner_id, self.settings.lease_seconds, [batch])

    async def _lead(self, conn: asyncpg.Connection, me: _Waiting) -> None:
        """The waiting batches, up to ``most`` (``me``'s first among them), in one statement on
        ``conn``; then the flight is given back, or sooner, once the statement has run for
        ``patience``. (No wait for more: a turn of a busy loop is milliseconds, and under load
        the batches gather while the flights are taken.)"""
        stalled = asyncio.get_running_loop().call_later(self.patience, self._give_back, me)
        try:
            taken = [self._waiting.popleft() for _ in range(min(self.most, len(self._waiting)))]
            group = [w for w in taken if not w.future.done()]  # (a table cancelled as it waited: not sent)
            if group:
                job = asyncio.ensure_future(self._commit(conn, group))
                try:
                    await asyncio.shield(job)
                except asyncio.CancelledError:
                    # This table stops (its runtime cancelled); the statement goes on, so every
                    # table of it learns its own outcome, and ``conn`` is released after it.
                    await asyncio.wait([job])
                    if me.future.done() and not me.future.cancelled():
                        me.future.exception()  # (read: its own outcome no longer matters)
                    raise
        finally:
            stalled.cancel()
            self._give_back(me)

    async def _commit(self, conn: asyncpg.Connection, group: list[_Waiting]) -> None:
        """Each batch of ``group`` told its outcome (in its future)."""
        settings = self.settings
        metrics.GROUPED.observe(len(group))
        try:
            owned = await store.record_batches(conn, settings.owner_id, settings.lease_seconds,
                                               [w.batch for w in group])
        except BaseException as exc:
            if isinstance(exc, asyncio.CancelledError) or outcome_unknown(exc, conn.is_closed()):
                # (cancelled: only with the loop itself, the leader's cancel does not reach here)
                for w in group:
                    _tell(w, error=OutcomeUnknown(w.batch.table_id))
                if not isinstance(exc, Exception):
                    raise
            elif len(group) == 1:
                _tell(group[0], error=exc)  # nothing was written: the table's own answer
            else:
                self._split(group)
            return
        if owned or len(group) == 1:
            for w in group:
                _tell(w, owned)
        else:  # a table's lease lost: which one, each learns alone
            self._split(group)

    @staticmethod
    def _split(group: list[_Waiting]) -> None:
        """A group's statement wrote nothing: each of its tables commits its batch alone."""
        metrics.SPLIT.inc()
        for w in group:
            _tell(w, _ALONE)

    def _hand_on(self) -> None:
        """Free flights to the first waiting batches: each leads the next group."""
        while self._waiting and self._flights < self.at_once:
            w = self._waiting.popleft()
            if w.future.done():  # (cancelled meanwhile)
                continue
            self._flights += 1
            w.flight = True
            w.future.set_result(_LEAD)

    def _give_back(self, me: _Waiting) -> None:
        """The flight kept for ``me`` free again (once): the next waiting batches may go."""
        if me.flight:
            me.flight = False
            self._flights -= 1
            self._hand_on()

    def _left(self, me: _Waiting) -> None:
        """A table gave up waiting (cancelled): out of the queue, and its flight given on."""
        if me in self._waiting:
            self._waiting.remove(me)
        self._give_back(me)

    @property
    def waiting(self) -> int:
        """Batches waiting for a flight (a queue depth for ``/metrics``)."""
        return len(self._waiting)


def _tell(w: _Waiting, outcome: object = None, *, error: BaseException | None = None) -> None:
    if w.future.done():  # (its table was cancelled meanwhile)
        return
    if error is not None:
        w.future.set_exception(error)
    else:
        w.future.set_result(outcome)
