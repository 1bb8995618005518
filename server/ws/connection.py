"""One websocket per client: authenticate, subscribe to tables, send commands, get events.

Outgoing frames and the slow-client rule are the ``Outbox``'s. Here: the client's frames
are read only while fewer than MAX_PENDING answers to it are unsent (past that its frames
are not read until it reads), and a subscriber that falls BACKLOG_FACTOR queues behind its
tables is too slow.

Table events come from Litestar channels (one subscriber per table per socket), one
``events`` message per committed batch, encoded once by the table owner, and are
forwarded here by seq: a frame whose events this socket already has is dropped, one that
overlaps what it has (a snapshot or a replay taken mid-batch) is cut to the events after
it, so a snapshot or a resume followed by live events gives each event exactly once.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from datetime import UTC, datetime
from typing import Any

import msgspec
from litestar import WebSocket, websocket
from litestar.channels import ChannelsPlugin

from games.errors import GameError
from games.ledger import accounts
from server import crowd, metrics, store
from server.auth import SUBPROTOCOL, Principal, decode_token, token_expiry, token_key
from server.channels_backend import RESYNC
from server.edge import check_json
from server.kinds import kind as game_kind
from server.protocol import (
    CLOSE_EXCLUDED,
    CLOSE_SESSION_LIMIT,
    CLOSE_STREAM_FAILED,
    CLOSE_TOKEN_EXPIRED,
    CLOSE_UNAUTHORIZED,
    Accepted,
    Auth,
    Error,
    Events,
    Heartbeat,
    Ping,
    Play,
    Pong,
    RealityCheck,
    Rejected,
    Snapshot,
    Subscribe,
    TableEvent,
    Unsubscribe,
    client_decoder,
    encoder,
)
from server.resources import Resources
from server.responsible import play_result
from server.runtime import channel_of
from server.ws import hub
from server.ws.direct import writer_of
from server.ws.feed import Feed
from server.ws.handshake import presented_token
from server.ws.outbox import Outbox
from server.ws.peek import BatchSeqs, batch_seqs, cid_of, events_decoder
from server.ws.shares import frame_for

log = logging.getLogger("casino.ws")


# A connection may not flood a table's queue: past this many unanswered commands it is refused;
# and past this many answers it has not read yet, its next frames wait to be read.
MAX_PENDING = 256
# A reader that drains, but slower than its tables publish, is too slow once this many times
# send_queue_frames of events wait for it in Litestar's subscriber backlog.
BACKLOG_FACTOR = 32
# How long a closing socket's task waits for the close frame to go out.
CLOSE_FRAME_SECONDS = 30.0


class Connection(Outbox):
    def __init__(self, socket: WebSocket, resources: Resources, channels: ChannelsPlugin) -> None:
        super().__init__(socket, resources.settings)
        self.resources = resources
        self.channels = channels
        self.who: Principal | None = None
        self.expires: datetime | None = None
        self.token_key: str | None = None  # its token's (``auth.token_key``): a logout closes it (4012)
        self.subs: dict[str, tuple[Any, Feed]] = {}
        self.last_seq: dict[str, int] = {}
        # Tables whose stream this socket gets as a player's share (server.crowd): his id.
        self.share: dict[str, str] = {}
        self.present: set[str] = set()  # tables whose runtime counts this socket as present
        self.tasks: set[asyncio.Task] = set()
        self.pending = 0  # commands sent to tables and not answered yet

    async def _heartbeat(self) -> None:
        while True:
            await asyncio.sleep(self.resources.settings.heartbeat_seconds)
            if self.out.empty() and not self.wrote:  # else frames are going out: no keep-alive to pile up
                self.send_msg(Heartbeat(datetime.now(UTC).isoformat()))
            self.wrote = False
            if self.expires and datetime.now(UTC) >= self.expires:
                self.send_msg(Error("token_expired", "Your session has expired: log in again."))

    async def _session_clock(self) -> None:
        """A player's own settings (``server.responsible``): a ``reality_check`` frame every
        reality_check_minutes, and the socket closed (4010) after session_limit_minutes."""
        async with self.resources.pool.acquire() as conn:
            row = await conn.fetchrow("SELECT reality_check_minutes, session_limit_minutes FROM player_session_limits "
                                      "WHERE user_id = $1", self.who.id)
        if row is None or (row["reality_check_minutes"] is None and row["session_limit_minutes"] is None):
            return
        unit = self.resources.settings.reality_check_unit_seconds
        every, limit = row["reality_check_minutes"], row["session_limit_minutes"]
        wallet = accounts.wallet(self.who.id, self.who.currency)
        since = await self.resources.pool.fetchval("SELECT now()")  # the ledger's clock
        loop = asyncio.get_running_loop()
        t0, checks = loop.time(), 0
        while True:
            next_check = t0 + (checks + 1) * every * unit if every else None
            end = t0 + limit * unit if limit else None
            due = min(t for t in (next_check, end) if t is not None)
            await asyncio.sleep(max(due - loop.time(), 0))
            if end is not None and due == end:
                self.close(CLOSE_SESSION_LIMIT, f"session_limit: your own limit of {limit} minutes is up")
                return
            checks += 1
            net = await play_result(self.resources.pool, wallet, since)  # his play's, not the cashier's
            self.send_msg(RealityCheck(checks * every, since.isoformat(), net, self.who.currency))

    # ---- life ----------------------------------------------------------------------------
    async def run(self) -> None:
        # A browser offers "casino.v1, bearer.<token>": the answer names casino.v1, never the token.
        offered = self.socket.scope.get("subprotocols") or []
        await self.socket.accept(subprotocols=SUBPROTOCOL if SUBPROTOCOL in offered else None)
        self.writer = writer_of(self.socket.scope)
        try:
            token, cid = await presented_token(self.socket, self.resources.settings.max_frame_bytes)
            await self._authenticate(token)
        except GameError as exc:
            code = {"token_expired": CLOSE_TOKEN_EXPIRED, "self_excluded": CLOSE_EXCLUDED,
                    "cooling_off": CLOSE_EXCLUDED}.get(exc.code, CLOSE_UNAUTHORIZED)
            metrics.ws_closed(code)
            with contextlib.suppress(Exception):  # (the client may be gone already)
                await self.socket.close(code, f"{exc.code}: {exc.message}"[:120] if code == CLOSE_EXCLUDED
                                        else exc.message[:120])
            return
        if cid:  # the token came in a first "auth" frame: answer it
            self.answer(Accepted(cid))
        sender = asyncio.create_task(self._sender())
        beat = asyncio.create_task(self._heartbeat())
        if self.who.role == "player":  # his own reality check and session limit, if he set them
            self.tasks.add(asyncio.create_task(self._session_clock()))
        receiver = asyncio.create_task(self._receive_loop())
        closer = asyncio.create_task(self.closed.wait())
        try:
            await asyncio.wait({sender, receiver, closer}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            for t in (beat, receiver, closer, *self.tasks):
                t.cancel()
            for table in list(self.subs):
                await self._unsubscribe(table)
            if self.closing and not sender.done():
                # Let queued frames go before the close frame, but never wait on a stuck client.
                with contextlib.suppress(Exception):
                    await asyncio.wait_for(self._drain(), 0.5)
            sender.cancel()
            if self.closing:
                with contextlib.suppress(Exception):
                    # A client too slow to read has a full socket buffer: its close frame goes out
                    # when it reads again (this socket's task waits, nothing else), or never.
                    await asyncio.wait_for(self.socket.close(*self.closing), CLOSE_FRAME_SECONDS)

    async def _authenticate(self, token: str) -> None:
        t = decode_token(self.resources.settings.jwt_secret, token)
        # Named before the lookup: a logout committed after the lookup read finds this socket.
        previous, self.token_key = self.token_key, token_key(t)
        try:
            async with self.resources.pool.acquire() as conn:
                # An excluded player, or a token logged out (server.sessions): refused.
                who = await store.get_user(conn, t.sub, playing=True, token=self.token_key)
            if who is None:
                raise GameError("unauthorized", "This account does not exist or is disabled.")
        except BaseException:
            self.token_key = previous  # (a refused renewal: the socket keeps its token)
            raise
        self.who, self.expires = who, token_expiry(t)
        self.peer = who.id

    async def _receive_loop(self) -> None:
        limit = self.resources.settings.max_frame_bytes
        while True:
            # A client sending faster than it reads its answers is read no further until it
            # reads (TCP pushes back on it); if it reads nothing for stall_seconds, it is too slow.
            while self.answers >= MAX_PENDING and not self.closing:
                if not await self._progressed():
                    return
            message = await self.socket.receive()
            if message["type"] == "websocket.disconnect":
                return
            data = message.get("text")
            raw = data.encode() if data is not None else (message.get("bytes") or b"")
            if len(raw) > limit:  # (its cid, if one is near the start)
                self._bad_frame(raw[:1024], "frame_too_large",
                                f"Frames are at most {limit} bytes; this one was ignored.")
                continue
            try:
                check_json(raw)
                msg = client_decoder.decode(raw)
            except GameError as exc:  # text the edge refuses
                self._bad_frame(raw, exc.code, exc.message)
                continue
            except msgspec.ValidationError as exc:  # (a DecodeError too: tested first)
                self._bad_frame(raw, "invalid_message", f"Not a valid message: {exc}")
                continue
            except Exception as exc:  # bad JSON; nested deeper than the decoder goes; not UTF-8
                self._bad_frame(raw, "malformed", f"Not a valid message: {exc}")
                continue
            try:
                self._dispatch(msg)
            except Exception:  # a bug of ours costs this frame, never the socket
                log.exception("frame from %s could not be handled", self.peer)
                self._bad_frame(raw, "internal_error", "Something went wrong on our side; nothing was changed.")

    def _bad_frame(self, raw: bytes, code: str, message: str) -> None:
        """Answer a frame that could not be read: with its cid when one can be found in it."""
        cid = cid_of(raw)
        metrics.refused(code)
        if cid:
            self.answer(Rejected(cid, code, message))
        else:
            self.answer(Error(code, message))

    def refuse(self, msg: Rejected) -> None:
        """A refusal of the socket's own, before any table (the tables count theirs)."""
        metrics.refused(msg.code)
        self.answer(msg)

    # ---- commands --------------------------------------------------------------------------
    def _dispatch(self, msg: Any) -> None:
        if isinstance(msg, Ping):
            self.answer(Pong(msg.cid))
            return
        if isinstance(msg, Auth):
            self._spawn(self._reauth(msg))
            return
        if self.expires and datetime.now(UTC) >= self.expires:
            self.refuse(Rejected(msg.cid, "token_expired", "Your session has expired: send a new token (auth).",
                                 getattr(msg, "table", "")))
            return
        if isinstance(msg, Subscribe):
            self._spawn(self._subscribe(msg))
        elif isinstance(msg, Unsubscribe):
            self._spawn(self._do_unsubscribe(msg))
        elif isinstance(msg, Play):
            self._play(msg)

    def _spawn(self, coro) -> None:
        task = asyncio.create_task(coro)
        self.tasks.add(task)
        task.add_done_callback(self.tasks.discard)

    async def _reauth(self, msg: Auth) -> None:
        try:
            if decode_token(self.resources.settings.jwt_secret, msg.token).sub != self.who.id:
                raise GameError("wrong_user", "A connection keeps its user: connect again to switch.")
            await self._authenticate(msg.token)
        except GameError as exc:
            self.refuse(Rejected(msg.cid, exc.code, exc.message))
            return
        self.answer(Accepted(msg.cid))

    def _play(self, msg: Play) -> None:
        manager = self.resources.manager
        try:
            info = manager.info(msg.table)  # unknown_table first, if it is
            if msg.table not in self.subs:
                raise GameError("not_subscribed", f"Subscribe to table {msg.table!r} before playing there.")
            kind = game_kind(info.game)
            kind.check_role(self.who)
            command = kind.decode_command(msg.command)
        except GameError as exc:
            self.refuse(Rejected(msg.cid, exc.code, exc.message, msg.table))
            return
        if self.pending >= MAX_PENDING:
            self.refuse(Rejected(msg.cid, "too_many_pending",
                                 f"Wait for answers: at most {MAX_PENDING} commands may be pending.", msg.table))
            return
        # To the table's owner, in this process or another (``server.router``).
        fut = manager.router.submit(self.who, msg.cid, msg.table, command, msg.command)
        if fut.done():
            self.answer(fut.result())
        else:
            self.pending += 1
            fut.add_done_callback(self._answered)

    def _answered(self, fut: asyncio.Future) -> None:
        self.pending -= 1
        self.answer(fut.result())

    # ---- subscriptions -------------------------------------------------------------------
    async def _subscribe(self, msg: Subscribe) -> None:
        table = msg.table
        manager = self.resources.manager
        try:
            info = manager.info(table)
            kind = game_kind(info.game)
            manager.router.reachable(table)
        except GameError as exc:
            self.refuse(Rejected(msg.cid, exc.code, exc.message, table))
            return
        mine: list[tuple[Any, Feed]] = []  # its subscription, once it has one
        try:
            await self._subscribe_now(msg, info, kind, mine)
        except Exception as exc:  # the broker away: answered, and nothing of it kept
            log.warning("table %s: %s could not subscribe: %s", table, self.peer, exc)
            if mine and self.subs.get(table) is mine[0]:
                await self._unsubscribe(table)
            elif table not in self.subs:  # (another subscribe's, sent at once, stays as it is)
                self.share.pop(table, None)
            self.refuse(Rejected(msg.cid, "table_unavailable", "Its events cannot be followed right now; try "
                                                               "again shortly.", table))

    async def _subscribe_now(self, msg: Subscribe, info: Any, kind: Any, mine: list) -> None:
        """Subscribe, then the snapshot or the replay, then the answer. Two subscribes to one
        table sent at once run side by side: the later replaces the earlier, and the earlier,
        finding itself replaced after any of its waits, stops there, touching nothing of the
        later's (its seq, presence, share; a replay it read still goes out) and answered as
        subscribed: the client is."""
        table, manager = msg.table, self.resources.manager
        if table in self.subs:
            await self._unsubscribe(table)
        if crowd.filtered_for(info, self.who):
            self.share[table] = self.who.id if self.who is not None else ""
        # Subscribe first, then read the state: an event committed meanwhile arrives on the
        # channel, and the seq filter drops what the snapshot or the replay already holds.
        if table in self.share:  # one subscription for the process's players there (server.ws.hub)
            subscriber = await hub.join(self.resources.hubs, self.channels, table, self.share[table])
        else:
            subscriber = await self.channels.subscribe(channel_of(table))
        while table in self.subs:
            # Another subscribe to it, sent at once, got its subscription while this one waited
            # for the broker: the later replaces it, as one sent after it would (else the first
            # went on unseen, its events a second time to the socket until it closed).
            share = self.share.get(table)
            await self._unsubscribe(table)
            if share is not None:
                self.share[table] = share
        gate = asyncio.Event()
        feed = self.feed(table, gate)
        entry = self.subs[table] = (subscriber, feed)
        subscriber.attach(feed)
        mine.append(entry)

        def replaced() -> bool:
            """Whether a later subscribe (or an unsubscribe) took the table's place meanwhile;
            if so this one is answered, as subscribed, and goes no further."""
            if self.subs.get(table) is entry:
                return False
            self.answer(Accepted(msg.cid, table, self.last_seq.get(table, 0)))
            return True

        try:
            replay = None
            # A resume replays what was missed; from further back than half a send queue
            # holds, a snapshot says the same in one frame (and one frame cannot make the
            # server read a table's whole history).
            if msg.since is not None and msg.since >= 0:
                async with self.resources.pool.acquire() as conn:
                    now = await manager.committed_seq(table, conn)
                    if msg.since <= now and now - msg.since <= self.bound // 2:
                        replay = await store.events_after(conn, table, msg.since, limit=now - msg.since + 1)
                if replay and replay[0][0] != msg.since + 1:
                    replay = None  # a gap should not happen; fall back to a snapshot
            if replay is not None:
                last = msg.since
                # A replay the client asked for is queued at once, against the bound: asking for
                # more history than send_queue_frames without reading it is too slow.
                # One event per frame: the bound counts the history asked for.
                for row in replay:
                    event = stored_event(table, kind, row, self.share.get(table))
                    if event is not None:
                        self.send_msg(event)
                    last = row[0]
                # (Replaced meanwhile, its history still went out, counted against the bound:
                # a reader that asks for history over and over without reading is too slow.)
                if replaced():
                    return
                self.last_seq[table] = last
            else:
                try:
                    seq, view = await manager.router.view(table, self.who)
                except GameError as exc:
                    if self.subs.get(table) is entry:
                        await self._unsubscribe(table)
                    self.refuse(Rejected(msg.cid, exc.code, exc.message, table))
                    return
                if replaced():
                    return
                self.last_seq[table] = seq
                if not await self.deliver(encoder.encode(Snapshot(table, seq, info.game, info.profile, info.mode,
                                                                  info.currency, view))):
                    return
                if replaced():
                    return
            if isinstance(subscriber, hub.Member):
                # (A hub made just now checks for holes from its first frame on only: what its
                # frames skipped since this socket's snapshot is read here, before them.)
                upto = subscriber.anchor(self.last_seq[table])
                if upto is not None:
                    ended = not await self._fill_gap(table, self.last_seq[table], upto, feed)
                    if replaced() or ended:
                        return
            manager.router.joined(table, self.who)
            self.present.add(table)
            self.answer(Accepted(msg.cid, table, self.last_seq[table]))
        finally:
            gate.set()

    def feed(self, table: str, gate: asyncio.Event) -> Feed:
        """The table's frames to this socket (``server.ws.feed``), held until ``gate`` opens
        (its snapshot or replay is out)."""
        feed = Feed(lambda frame: self._forward_now(table, frame),
                    lambda frame: self._forward_later(table, frame, feed), gate,
                    lambda exc: self._stream_failed(table, exc))
        return feed

    def _stream_failed(self, table: str, exc: BaseException) -> None:
        """The table's stream to this socket failed (the database away when a gap was to be
        filled, say): the socket closes with 1011. Left open, it would hear nothing more of
        the table; a client reconnects and resumes from its last seq (the pages do: ``live.js``)."""
        log.error("table %s: the stream to %s's socket failed; closing it", table, self.peer,
                  exc_info=(type(exc), exc, exc.__traceback__))
        self.close(CLOSE_STREAM_FAILED, "the table's stream failed here: reconnect")

    def _outgoing(self, table: str, frame: bytes, peek: BatchSeqs) -> bytes | None:
        """What of a frame goes to this socket, its seq taken as seen: the events it does not
        hold yet, as this socket's player may see them."""
        have, seq = self.last_seq.get(table, 0), peek.seq
        if seq <= have:
            return None
        if peek.events and peek.events[0].seq <= have:
            # This socket already holds the batch's first events (its snapshot or replay was
            # taken mid-batch): only the rest goes out (rare, so encoded here).
            msg = events_decoder.decode(frame)
            frame = encoder.encode(Events(table, seq, [e for e in msg.events if e.seq > have]))
        self.last_seq[table] = seq
        if table in self.share:  # a player at a crowd table: his share, or nothing
            return frame_for(frame, self.share[table])
        return frame

    def _hole_before(self, table: str, peek: BatchSeqs) -> bool:
        """Frames were lost on the way (a broker connection dropped) before this one. (A crowd
        table's hub hands a socket only what concerns it: holes by design; the hub, seeing
        every frame, sends RESYNC for frames lost on the way.)"""
        return (bool(peek.events) and peek.events[0].seq > self.last_seq.get(table, 0) + 1
                and table not in self.share)

    def _forward_now(self, table: str, frame: bytes) -> bool:
        """A table's frame on its way, in the task that received it (``server.ws.feed``):
        False, touching nothing, when it has to wait for something (see ``_forward_later``)."""
        if self.closing or self._full() or frame[:len(RESYNC)] == RESYNC:
            return False
        peek = batch_seqs(frame)
        if self._hole_before(table, peek):
            return False
        out = self._outgoing(table, frame, peek)
        if out is not None and not self.write_now(out, shared=out is frame):  # (a share is this socket's)
            self._queue(out)
        return True

    async def _forward_later(self, table: str, frame: bytes, feed: Feed) -> bool:
        """A table's frame that had to wait, in the feed's own task: False once the socket
        is done."""
        if frame[:len(RESYNC)] == RESYNC:  # the broker was away: what was committed meanwhile, from PostgreSQL
            have = self.last_seq.get(table, 0)
            if len(frame) > len(RESYNC):  # (a crowd hub's: every frame up to its seq went by already)
                have = self.last_seq[table] = max(have, int(frame[len(RESYNC) + 1:]))
            async with self.resources.pool.acquire() as conn:
                upto = await self.resources.manager.committed_seq(table, conn)
            return upto <= have or await self._fill_gap(table, have, upto, feed)
        peek = batch_seqs(frame)
        # What this socket missed comes from PostgreSQL first, so it never sees a hole in the seqs.
        if (self._hole_before(table, peek)
                and not await self._fill_gap(table, self.last_seq.get(table, 0), peek.events[0].seq - 1, feed)):
            return False
        out = self._outgoing(table, frame, peek)
        if out is None:
            return True
        if self._full() and feed.qsize > BACKLOG_FACTOR * self.bound:
            self._too_slow()
            return False
        # A burst (a spin settling thousands of bets) waits here for the sender, in the feed's
        # backlog, not in the table (issue 7's load test).
        return await self.deliver(out)

    async def _fill_gap(self, table: str, have: int, upto: int, feed: Feed) -> bool:
        """Send the committed events after ``have`` up to ``upto`` (the last before a frame
        that came after a loss), one frame each; False if the socket is done."""
        kind = game_kind(self.resources.manager.known(table).game)
        async with self.resources.pool.acquire() as conn:
            missed = await store.events_after(conn, table, have, limit=upto - have)
        log.warning("table %s: %d events missed by %s's socket came from the database", table, len(missed), self.peer)
        for row in missed:
            if feed.stopped:  # unsubscribed meanwhile (its cancel can be lost in a wait: Python 3.11)
                return False
            event = stored_event(table, kind, row, self.share.get(table))
            if event is not None and not await self.deliver(encoder.encode(event)):
                return False
            self.last_seq[table] = row[0]
        return True

    async def _do_unsubscribe(self, msg: Unsubscribe) -> None:
        if msg.table not in self.subs:
            self.refuse(Rejected(msg.cid, "not_subscribed", f"You do not follow table {msg.table!r}.", msg.table))
            return
        await self._unsubscribe(msg.table)
        self.answer(Accepted(msg.cid, msg.table))

    async def _unsubscribe(self, table: str) -> None:
        subscriber, feed = self.subs.pop(table)
        if table in self.present:  # counted at the table: seats of the gone are released
            self.present.discard(table)
            self.resources.manager.router.left(table, self.who)
        self.last_seq.pop(table, None)
        shared = self.share.pop(table, None) is not None
        feed.stop()
        with contextlib.suppress(Exception):
            if shared:
                await hub.leave(self.resources.hubs, table, subscriber)
            else:
                await self.channels.unsubscribe(subscriber, channel_of(table))


def stored_event(table: str, kind: Any, row: tuple[int, str, bytes], share: str | None = None) -> Events | None:
    """One event read back from PostgreSQL (a replay, a filled gap) as its own message, as
    the players may see it; with ``share`` (a player at a crowd table, ``server.crowd``) as
    he may see it, None if it is another player's."""
    seq, round_id, payload = row
    event = kind.public_payload(payload) if share is None else crowd.sees_stored(payload, share)
    return None if event is None else Events(table, seq, [TableEvent(seq, round_id, event)])


@websocket("/ws")
async def ws_endpoint(socket: WebSocket, channels: ChannelsPlugin, resources: Resources) -> None:
    """Players, croupiers and consoles: see /asyncapi.json for the protocol."""
    connection = Connection(socket, resources, channels)
    resources.sockets.add(connection)  # (the metrics: sockets open, send queue depths)
    try:
        await connection.run()
    finally:
        resources.sockets.discard(connection)
