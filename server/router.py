"""Where a table's commands go, from whichever process the client is connected to.

Every table has one owner process (a lease, ``server.manager``); a player may be connected
to any process. The router sends what needs the table's runtime (commands, a snapshot
view, presence, the console's limits and archiving) to the owner and brings the answer
back: in this process it is a call, to another process a message over Redis pub/sub on
the owner's inbox channel (``casino.proc.<owner id>``), answered on the caller's. The
table *events* do not come this way: they go out on Litestar channels, which share Redis
with the router when REDIS_URL is set (``server.app``).

Messages for one process are gathered per event-loop turn and published as one envelope
by one sender task, so one client's commands reach the table in the order he sent them,
and a burst costs one publish per owner, not one per command. ``PUBLISH`` answers how many
processes listen: none means the owner is gone, and the router looks for the new one at
once instead of waiting for an answer that will not come.

A command refused ``table_unavailable`` was never applied (a table moving between
processes refuses what it had not yet committed; a lost lease rolls the batch back), so
the router sends it again to the table's next owner, for up to ``PATIENCE`` seconds; a
command whose answer did not come back in time is sent again with its command id, which
the table answers once (``command_results``), never applying it twice.

One player's commands at one table keep their order: once one of them waits for the
table's next owner, the later ones wait behind it. A call carries its deadline, and an owner
that gets it too late (it was paused, or the broker slow) refuses it unapplied; a call that
was delivered and not answered in time is ``outcome_unknown`` (504): it may yet be applied,
and sent again with its cid it is answered once. Envelopes are signed (HMAC-SHA256 with a
key derived from the JWT secret, which every process of the floor shares): a process takes
no call that another of the floor did not send, whoever else can reach the broker.

Presence (who follows a table, for the release of a gone player's seat) is counted per
process: the owner's runtime hears once from each process whether a player follows the
table there, is told again when the table moves, and forgets a process that stopped
beating or that starts afresh under the same name (its ``Hello`` on the floor channel).
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import hashlib
import hmac
import itertools
import logging
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import msgspec

from games.errors import GameError
from server import metrics
from server.auth import Principal
from server.protocol import Accepted, Rejected, encoder

if TYPE_CHECKING:
    from server.manager import TableManager

log = logging.getLogger("casino.router")

PATIENCE = 15.0  # seconds a command may look for its table's owner (a failover takes a lease)
ANSWER_SECONDS = 5.0  # a forwarded call not answered by then is sent again (same command id)
FLOOR = "casino.floor"  # to every process: jackpot meters, and "this table started here"


def inbox(owner: str) -> str:
    return f"casino.proc.{owner}"


class Call(msgspec.Struct, array_like=True, tag="call"):
    rid: int
    reply_to: str
    op: str  # play, view, presence, or a service op (limits, archive)
    table: str
    who: Principal
    cid: str
    body: msgspec.Raw
    expires: float = 0.0  # time.time() after which the owner refuses it unapplied (0: never)


class Reply(msgspec.Struct, array_like=True, tag="reply"):
    rid: int
    code: str  # "": the body is the answer; else a GameError's code
    message: str
    body: msgspec.Raw


class Envelope(msgspec.Struct, array_like=True):
    sender: str
    items: list[Call | Reply]


class Meters(msgspec.Struct, array_like=True, tag="meters"):
    sender: str
    changes: list[tuple[str, int, int]]  # (jackpot, minor, major)


class Hello(msgspec.Struct, array_like=True, tag="hello"):
    """``sender`` started afresh: what it said before (presence) no longer holds."""

    sender: str


class Started(msgspec.Struct, array_like=True, tag="started"):
    """A runtime for ``table`` started at ``sender`` (a take-over, a hand-over, a restart
    under the same name): every process tells it again who follows the table there."""

    sender: str
    table: str


_envelope = msgspec.json.Decoder(Envelope)
_floor = msgspec.json.Decoder(Meters | Started | Hello)
SIGNATURE = 32  # bytes of HMAC-SHA256 before each message's JSON
_PRESENCE = msgspec.json.Decoder(tuple[str, bool])
NULL = msgspec.Raw(b"null")


class Unreachable(Exception):
    """The owner named did not get the call (nobody listens on its inbox)."""


@dataclass
class Job:
    """A client's command on its way to a table's owner."""

    who: Principal
    cid: str
    table: str
    command: Any
    raw: bytes
    answer: asyncio.Future
    forwarded: bool = False  # sent to another process at least once (counted once)


# A service op run at the owner: (caller, table, body) -> the answer, JSON.
ServiceOp = Callable[[Principal, str, bytes], Awaitable[bytes]]


class Router:
    def __init__(self, manager: TableManager) -> None:
        self.manager = manager
        self.me = manager.ctx.settings.owner_id
        self.redis: Any = None
        self._pubsub: Any = None
        self._reader: asyncio.Task | None = None
        self._sender: asyncio.Task | None = None
        self._outgoing: dict[str, list[Any]] = {}  # channel -> Calls and Replies, or floor news
        # (player, table) -> his commands there waiting, in order, for the table's next owner
        self._held: dict[tuple[str, str], collections.deque[Job]] = {}
        self._key = hashlib.sha256(b"casino.router\0" + manager.ctx.settings.jwt_secret.encode()).digest()
        self._wake = asyncio.Event()
        self._rids = itertools.count(1)
        self._waiting: dict[int, asyncio.Future] = {}
        self._tasks: set[asyncio.Task] = set()
        self.services: dict[str, ServiceOp] = {}
        # Caller side: this process's subscribed sockets per table and player; and the owner
        # each table's presence was last told to.
        self.present: dict[str, collections.Counter[str]] = {}
        self._told: dict[str, str] = {}

    @property
    def shared(self) -> bool:
        """Whether other processes may serve tables (a broker is configured)."""
        return self.redis is not None

    # ---- life ----------------------------------------------------------------------------
    async def start(self) -> None:
        url = self.manager.ctx.settings.redis_url
        if not url:
            return  # one process: every table is local
        from redis.asyncio import Redis

        self.redis = Redis.from_url(url)
        self._pubsub = self.redis.pubsub()
        await self._pubsub.subscribe(inbox(self.me), FLOOR)
        self._reader = asyncio.create_task(self._read(), name="router inbox")
        self._sender = asyncio.create_task(self._send(), name="router sender")
        self._broadcast(Hello(self.me))  # (owners forget what a former life of this name told them)

    async def stop(self) -> None:
        if self._sender is not None and self._outgoing:
            # The answers to calls this process refused while closing its tables go out
            # first: their callers look for the next owner now, not after ANSWER_SECONDS.
            with contextlib.suppress(Exception):
                await asyncio.wait_for(self._flush(), 2)
        for task in (self._reader, self._sender, *self._tasks):
            if task is not None:
                task.cancel()
        await asyncio.gather(*(t for t in (self._reader, self._sender, *self._tasks) if t is not None),
                             return_exceptions=True)
        for fut in self._waiting.values():
            if not fut.done():
                fut.set_exception(Unreachable("stopping"))
        if self.redis is not None:
            with contextlib.suppress(Exception):
                await self._pubsub.aclose()
            with contextlib.suppress(Exception):
                await self.redis.aclose()

    # ---- where a table is ------------------------------------------------------------------
    def _local(self, table: str) -> Any:
        rt = self.manager.runtimes.get(table)
        return rt if rt is not None and not rt.stopped else None

    def owner(self, table: str) -> str | None:
        """The process serving ``table``, as this process last heard (None: nobody now)."""
        if self._local(table) is not None:
            return self.me
        return self.manager.owners.get(table) if self.shared else None

    def reachable(self, table: str) -> None:
        """Refuse a table no client of this process can reach: with no broker, one that
        does not run here (``table_unavailable``)."""
        if not self.shared:
            self.manager.runtime(table)

    # ---- commands ----------------------------------------------------------------------------
    def submit(self, who: Principal, cid: str, table: str, command: Any, raw: bytes) -> asyncio.Future:
        """Play ``command`` at ``table`` as ``who``; the future resolves to Accepted or
        Rejected. ``raw`` is the command as the client sent it (what another process decodes)."""
        if not self.shared:  # one process alone: the table runs here, or nowhere a client can reach
            try:
                return self.manager.runtime(table).submit(who, cid, command)
            except GameError as exc:
                refused = asyncio.get_running_loop().create_future()
                refused.set_result(Rejected(cid, exc.code, exc.message, table))
                return refused
        rt = self._local(table)
        answer = asyncio.get_running_loop().create_future()
        job = Job(who, cid, table, command, raw, answer)
        if (who.id, table) in self._held:  # his earlier commands wait for the table's next owner
            self._hold(job)
            return answer
        if rt is None:
            self._spawn(self._first_remote(job))
            return answer
        first = rt.submit(who, cid, command)
        if first.done() and not _retryable(first.result()):
            return first
        first.add_done_callback(lambda done: self._settle(job, done.result()))
        return answer

    def _settle(self, job: Job, result: Any) -> None:
        """A first try's answer: the client's, unless the table was not there to take it."""
        if _retryable(result):
            self._hold(job)
        elif not job.answer.done():
            job.answer.set_result(result)

    async def _first_remote(self, job: Job) -> None:
        try:
            result = await self._try(job)
        except TimeoutError:
            result = None  # delivered, not answered: asked again (same cid) behind the hold
        except Exception:  # (a bug): never leave the client unanswered; asked again with its cid
            log.exception("table %s: command %s of %s failed on its way", job.table, job.cid, job.who.id)
            result = None
        self._settle(job, result if result is not None else _NOT_THERE)

    def _hold(self, job: Job) -> None:
        key = (job.who.id, job.table)
        held = self._held.get(key)
        if held is None:
            held = self._held[key] = collections.deque()
            self._spawn(self._drain(key, held))
        held.append(job)

    async def _drain(self, key: tuple[str, str], held: collections.deque[Job]) -> None:
        """Deliver a player's held commands at a table one by one, in the order he sent them."""
        try:
            found = False  # whether the last command found the table's owner
            while held:
                job = held[0]
                result = await self._retry(job, wait=not found)
                found = not (isinstance(result, Rejected) and result.code in ("table_unavailable", "outcome_unknown"))
                if not job.answer.done():
                    job.answer.set_result(result)
                held.popleft()
        except Exception:
            log.exception("table %s: commands of %s could not be delivered", key[1], key[0])
        finally:
            del self._held[key]
            for job in held:  # (stopping, or a bug): nothing is left unanswered
                if not job.answer.done():
                    job.answer.set_result(Rejected(job.cid, "table_unavailable",
                                                   "This server is stopping: send it again with the same cid.",
                                                   job.table))

    async def _retry(self, job: Job, wait: bool = True) -> Any:
        """Look for the table's owner and play the command there, for up to PATIENCE seconds
        (``wait``: a moment for the table to move first; not when the command before it in
        the hold has just found the owner)."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + PATIENCE
        pause, unanswered = 0.05, False
        while loop.time() < deadline:
            if wait:
                await asyncio.sleep(pause)
                pause = min(pause * 2, 1.0)
            wait = True
            info = self.manager.infos.get(job.table)
            if info is not None and info.archived:  # closed for good while the command waited: nobody serves it
                return Rejected(job.cid, "table_archived", f"Table {job.table!r} is closed and archived.", job.table)
            if self._local(job.table) is None:
                await self.manager.refresh_owner(job.table)
            try:
                result = await self._try(job)
            except TimeoutError:
                unanswered = True
                continue
            if result is not None and not _retryable(result):
                return result
        if unanswered:
            return Rejected(job.cid, "outcome_unknown",
                            "The table's server took the command and did not answer in time: it may yet apply it. "
                            "Send it again with the same cid: it is applied at most once.", job.table)
        return Rejected(job.cid, "table_unavailable",
                        "No server is serving this table right now (it is moving after a failure): "
                        "send the command again with the same cid; it is applied at most once.", job.table)

    async def _try(self, job: Job) -> Any:
        """One attempt: the answer, or None if no owner could be reached (TimeoutError: the
        owner got it and did not answer in time)."""
        rt = self._local(job.table)
        if rt is not None:
            return await rt.submit(job.who, job.cid, job.command)
        owner = self.owner(job.table)
        if owner is None or owner == self.me:
            return None
        if not job.forwarded:
            job.forwarded = True
            metrics.FORWARDED.inc()
        try:
            body = await self._call(owner, "play", job.table, job.who, job.cid, job.raw)
        except Unreachable:
            return None
        except GameError as exc:  # the owner named refused the call itself (no longer serves it, too late)
            return Rejected(job.cid, exc.code, exc.message, job.table)
        return _answer_decoder.decode(body)

    # ---- views, presence and service ops -------------------------------------------------------
    async def view(self, table: str, who: Principal) -> tuple[int, Any]:
        """The committed state of ``table`` as ``who`` may see it, and its seq (the view as
        JSON, ``msgspec.Raw``, when it comes from another process)."""
        rt = self._local(table)
        if rt is not None:
            return rt.snapshot_view(who)
        for attempt in range(3):  # (a table handed over meanwhile: ask its next owner)
            if attempt or self.owner(table) is None:
                await self.manager.refresh_owner(table)
            if (rt := self._local(table)) is not None:
                return rt.snapshot_view(who)
            try:
                owner = self._owner_or_refuse(table)
                seq, view = _view_decoder.decode(await self._call_or_refuse(owner, "view", table, who, "", b"null"))
                return seq, view
            except GameError as exc:
                if exc.code != "table_unavailable" or attempt == 2:
                    raise
                await asyncio.sleep(0.2 * (attempt + 1))
        raise AssertionError("unreachable")

    async def service(self, op: str, table: str, who: Principal, body: bytes) -> bytes:
        """Run the service op ``op`` at the table's owner (this process or another)."""
        if self._local(table) is not None:
            return await self.services[op](who, table, body)
        if self.owner(table) is None:
            await self.manager.refresh_owner(table)
        owner = self._owner_or_refuse(table)
        return await self._call_or_refuse(owner, op, table, who, "", body)

    def _owner_or_refuse(self, table: str) -> str:
        owner = self.owner(table)
        if owner is None or owner == self.me:
            raise GameError("table_unavailable", f"Table {table!r} is not being served right now; try again shortly.")
        return owner

    async def _call_or_refuse(self, owner: str, op: str, table: str, who: Principal, cid: str, body: bytes) -> bytes:
        try:
            return await self._call(owner, op, table, who, cid, body)
        except Unreachable:
            raise GameError("table_unavailable",
                            f"The server of table {table!r} is not there; try again shortly.") from None
        except TimeoutError:
            raise GameError("outcome_unknown", f"The server of table {table!r} took the request and did not "
                                               "answer in time: it may yet apply it. Look before trying again "
                                               "(the table's view, its limits' history).") from None

    def joined(self, table: str, who: Principal) -> None:
        if who.role != "player":
            return
        counts = self.present.setdefault(table, collections.Counter())
        counts[who.id] += 1
        if counts[who.id] == 1:
            self._tell(table, who.id, True)

    def left(self, table: str, who: Principal) -> None:
        counts = self.present.get(table)
        if who.role != "player" or counts is None or counts[who.id] <= 0:
            return
        counts[who.id] -= 1
        if not counts[who.id]:
            del counts[who.id]
            self._tell(table, who.id, False)

    def _tell(self, table: str, player: str, here: bool) -> None:
        owner = self.owner(table)
        if owner is None:
            return  # the next owner hears it all when it is known (``owners_changed``)
        self._told[table] = owner
        if owner == self.me:
            rt = self._local(table)
            if rt is not None:
                rt.presence_from(self.me, player, here)
        else:
            self._enqueue(owner, Call(0, self.me, "presence", table, _NOBODY, "",
                                      msgspec.Raw(encoder.encode((player, here)))))

    def owners_changed(self) -> None:
        """Tables that moved (or started here): their new owner hears who follows them here."""
        for table, counts in self.present.items():
            owner = self.owner(table)
            if owner is not None and owner != self._told.get(table):
                for player in list(counts):
                    self._tell(table, player, True)

    # ---- jackpot meters -------------------------------------------------------------------------
    def meters(self, changes: list[tuple[str, int, int]]) -> None:
        """New meters of linked jackpots: to this process's tables, and every other process's."""
        self.manager.relay_meters(changes)
        if self.shared and changes:
            self._broadcast(Meters(self.me, changes))

    def started(self, table: str) -> None:
        """A runtime for ``table`` started here: who follows it here is present at once, and
        every other process is asked to say who follows it there."""
        self._told.pop(table, None)
        self.owners_changed()
        if self.shared:
            self._broadcast(Started(self.me, table))

    def _broadcast(self, news: Meters | Started | Hello) -> None:
        """To every process, through the one sender: after what this process sent before."""
        self._outgoing.setdefault(FLOOR, []).append(news)
        self._wake.set()

    # ---- the wire ---------------------------------------------------------------------------------
    async def _call(self, owner: str, op: str, table: str, who: Principal, cid: str, body: bytes) -> bytes:
        rid = next(self._rids)
        fut = asyncio.get_running_loop().create_future()
        self._waiting[rid] = fut
        try:
            self._enqueue(owner, Call(rid, self.me, op, table, who, cid, msgspec.Raw(body),
                                      time.time() + ANSWER_SECONDS))
            reply: Reply = await asyncio.wait_for(fut, ANSWER_SECONDS)
        finally:
            self._waiting.pop(rid, None)
        if reply.code:
            raise GameError(reply.code, reply.message)
        return bytes(reply.body)

    def _enqueue(self, target: str, item: Call | Reply) -> None:
        self._outgoing.setdefault(target, []).append(item)
        self._wake.set()

    async def _send(self) -> None:
        while True:
            await self._wake.wait()
            self._wake.clear()
            await self._flush()

    async def _flush(self) -> None:
        """Publish what is waiting, in order: one envelope per process, floor news one by one."""
        outgoing, self._outgoing = self._outgoing, {}
        for target, items in outgoing.items():
            if target == FLOOR:
                for news in items:
                    await self._publish(FLOOR, encoder.encode(news))
                continue
            heard = await self._publish(inbox(target), encoder.encode(Envelope(self.me, items)))
            if not heard:
                for item in items:
                    if isinstance(item, Call) and (fut := self._waiting.get(item.rid)) and not fut.done():
                        fut.set_exception(Unreachable(target))

    async def _publish(self, channel: str, data: bytes) -> int:
        """Sign and publish (a dropped connection is tried once more); how many got it."""
        signed = hmac.new(self._key, data, hashlib.sha256).digest() + data
        for attempt in range(2):
            try:
                return int(await self.redis.publish(channel, signed))
            except Exception as exc:
                if attempt:
                    log.warning("could not publish to %s: %s", channel, exc)
        return 0

    def _verified(self, signed: bytes) -> bytes | None:
        data = signed[SIGNATURE:]
        if hmac.compare_digest(signed[:SIGNATURE], hmac.new(self._key, data, hashlib.sha256).digest()):
            return data
        log.warning("a message on the broker is not signed by this floor's key: ignored")
        return None

    async def _read(self) -> None:
        while True:
            try:
                async for message in self._pubsub.listen():
                    if message.get("type") != "message":
                        continue
                    channel = message["channel"]
                    data = self._verified(message["data"])
                    if data is None:
                        continue
                    if channel in (FLOOR, FLOOR.encode()):
                        news = _floor.decode(data)
                        if news.sender == self.me:
                            continue
                        if isinstance(news, Meters):
                            self.manager.relay_meters([tuple(c) for c in news.changes])
                        elif isinstance(news, Hello):
                            for rt in list(self.manager.runtimes.values()):
                                rt.forget_source(news.sender)
                        else:
                            self.manager.owners[news.table] = news.sender
                            self._told.pop(news.table, None)
                            self.owners_changed()
                        continue
                    for item in _envelope.decode(data).items:
                        if isinstance(item, Reply):
                            fut = self._waiting.get(item.rid)
                            if fut is not None and not fut.done():
                                fut.set_result(item)
                        else:
                            self._serve(item)
            except asyncio.CancelledError:
                raise
            except Exception:  # the connection dropped: subscribe again (callers retry)
                log.exception("router inbox failed; listening again")
                await asyncio.sleep(0.5)
                with contextlib.suppress(Exception):
                    await self._pubsub.subscribe(inbox(self.me), FLOOR)

    def _serve(self, call: Call) -> None:
        """A call from another process, for a table served here."""
        rt = self._local(call.table)
        if call.op == "presence":
            if rt is not None:
                player, here = _PRESENCE.decode(call.body)
                rt.presence_from(call.reply_to, player, here)
            return
        if rt is None:
            self._reply(call, "table_unavailable", "Not served here.", NULL)
            return
        if call.expires and time.time() > call.expires:  # its sender has given up on it: never applied
            self._reply(call, "table_unavailable", "The call came too late; nothing was done.", NULL)
            return
        try:
            if call.op == "play":
                command = rt.kind.decode_command(bytes(call.body))
                fut = rt.submit(call.who, call.cid, command)
                fut.add_done_callback(lambda f: self._reply(call, "", "", msgspec.Raw(encoder.encode(f.result()))))
            elif call.op == "view":
                seq, view = rt.snapshot_view(call.who)
                self._reply(call, "", "", msgspec.Raw(encoder.encode((seq, view))))
            elif call.op in self.services:
                self._spawn(self._run_service(call))
            else:
                self._reply(call, "invalid_request", f"Unknown call {call.op!r}.", NULL)
        except GameError as exc:
            self._reply(call, exc.code, exc.message, NULL)

    async def _run_service(self, call: Call) -> None:
        try:
            body = await self.services[call.op](call.who, call.table, bytes(call.body))
        except GameError as exc:
            self._reply(call, exc.code, exc.message, NULL)
        except Exception:
            log.exception("table %s: %s for %s failed", call.table, call.op, call.who.id)
            self._reply(call, "internal_error", "Something went wrong on our side; nothing was changed.", NULL)
        else:
            self._reply(call, "", "", msgspec.Raw(body))

    def _reply(self, call: Call, code: str, message: str, body: msgspec.Raw) -> None:
        if call.reply_to == self.me:  # (never: local calls do not come this way)
            return
        self._enqueue(call.reply_to, Reply(call.rid, code, message, body))

    def _spawn(self, coro: Any) -> None:
        task = asyncio.ensure_future(coro)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)


def _retryable(answer: Any) -> bool:
    """A refusal that says the table was not there to apply it: it may go to the next owner."""
    return isinstance(answer, Rejected) and answer.code == "table_unavailable"


_NOBODY = Principal("", "system")
_NOT_THERE = Rejected("", "table_unavailable", "", "")  # (a first try that found no owner)
_answer_decoder = msgspec.json.Decoder(Accepted | Rejected)
_view_decoder = msgspec.json.Decoder(tuple[int, msgspec.Raw])
