"""Tournaments on the floor: creating one, and the driver that connects its coordinator to
its tables (Titano Art. 22-29; the coordinator is ``blackjack.tournament``).

The driver rides along with the tournament's runtime (a ``server.companions.Companion``)
in whichever process owns the tournament. Each turn (at once when something happened,
else every ``POLL_SECONDS``) it

1. opens the current phase's tables (ordinary blackjack tables in points, ids from the
   coordinator), which the floor's processes then serve like any other;
2. delivers the coordinator's pending orders to them (seat, pause, expel, end), one table's
   in order, as the server (``system``), through the router to whichever process owns the
   table; an order is numbered per table, so one delivered twice is refused
   ``order_applied`` and applied once;
3. reads what each table recorded since the coordinator's cursor for it (stored events:
   seated, hand standings, eliminations, expulsions, the phase's end) and gives it to the
   coordinator as a ``table_report``; a report the coordinator already has is ``stale``.

Everything it does is derived from the committed coordinator and the tables' stored events,
so a driver that dies (a crash, the tournament moving to another process) loses nothing:
the next one starts from the same place.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import re
from typing import TYPE_CHECKING, Any

import msgspec

from blackjack import events as BE
from blackjack.tournament import commands as C
from blackjack.tournament import events as E
from blackjack.tournament.coordinator import Coordinator
from blackjack.tournament.seating import tournament_of_table
from blackjack.tournament.spec import TournamentSpec, checked
from games.errors import GameError
from games.ledger.accounts import POINTS_CURRENCY
from server import play_limits, store
from server.auth import Principal, system_actor
from server.companions import Companion
from server.kinds.base import TableInfo
from server.protocol import Accepted, Rejected, encoder
from server.tables import TableService

if TYPE_CHECKING:
    from server.resources import Resources
    from server.runtime import TableRuntime

log = logging.getLogger("casino.tournaments")

POLL_SECONDS = 0.5
_TOURNAMENT_ID = re.compile(r"^[a-z0-9][a-z0-9-]{1,29}$")  # its tables' ids add "-<phase>-<n>"
_REPORTED = {str(cls.__struct_config__.tag): cls for cls in (BE.TournamentSeated, BE.TournamentPaused, BE.HandStandings,
                                              BE.PlayerEliminated, BE.PlayerExpelled, BE.TournamentTableDone)}
_decoders = {tag: msgspec.json.Decoder(cls) for tag, cls in _REPORTED.items()}


def report_of(table: str, rows: list[tuple[int, str, bytes]]) -> C.TableReport | None:
    """One report from a table's stored events (seq, kind, JSON) after the coordinator's cursor."""
    if not rows:
        return None
    phase = order = 0
    hands: list[C.HandResult] = []
    eliminated: list[C.Elimination] = []
    expelled: list[str] = []
    done, final = False, {}
    for _, tag, payload in rows:
        ev = _decoders[tag].decode(payload)
        phase = getattr(ev, "phase", phase)
        order = max(order, getattr(ev, "order", 0))
        if isinstance(ev, BE.HandStandings):
            hands.append(C.HandResult(ev.hand, ev.stacks))
        elif isinstance(ev, BE.PlayerEliminated):
            eliminated.append(C.Elimination(ev.player, ev.hand, ev.stack_before))
        elif isinstance(ev, BE.PlayerExpelled):
            expelled.append(ev.player)
        elif isinstance(ev, BE.TournamentTableDone):
            done, final = True, ev.stacks
    return C.TableReport(table=table, phase=phase, seq=rows[-1][0], order=order, hands=hands,
                         eliminated=eliminated, expelled=expelled, done=done, final=final)


# The coordinator's events that change its status, and the status each leaves.
_STATUS_OF = {"registration_opened": "registration", "registration_closed": "closed", "started": "running",
              "paused": "paused", "resumed": "running", "finished": "finished", "cancelled": "cancelled"}


# Each tournament's last status event, through their own partial index (server migration 0115,
# whose predicate spells the same kinds: literals here, so the planner can use it).
_LAST_STATUS = f"""
SELECT t.id AS table_id, e.kind FROM unnest($1::text[]) AS t(id)
CROSS JOIN LATERAL (SELECT kind FROM table_events
                     WHERE table_id = t.id AND kind IN ({", ".join(f"'{k}'" for k in _STATUS_OF)})
                     ORDER BY seq DESC LIMIT 1) e"""


class TournamentService:
    """Creating and listing tournaments; everything else is a command to the coordinator."""

    def __init__(self, resources: Resources) -> None:
        self.resources = resources
        self.manager = resources.manager

    def listed(self) -> list[TableInfo]:
        return [i for i in self.manager.infos.values() if i.game == "tournament" and not i.archived]

    async def statuses(self, ids: list[str]) -> dict[str, str]:
        """Each tournament's status as its last status event left it (one query for the whole
        list, whichever process serves each): ``scheduled`` until registration opens, then
        ``registration``, ``closed``, ``running`` (``paused`` while paused), ``finished`` or
        ``cancelled``; the coordinator's own view (GET /tournaments/{id}) says the same."""
        async with self.resources.pool.acquire() as conn:
            rows = await conn.fetch(_LAST_STATUS, ids)
        return {i: "scheduled" for i in ids} | {r["table_id"]: _STATUS_OF[r["kind"]] for r in rows}

    def info(self, tournament_id: str) -> TableInfo:
        info = self.manager.infos.get(tournament_id)
        if info is None or info.game != "tournament":
            raise GameError("unknown_tournament", f"No tournament {tournament_id!r}.")
        return info

    async def create(self, by: Principal, tournament_id: str, spec: TournamentSpec) -> TableInfo:
        if not _TOURNAMENT_ID.fullmatch(tournament_id):
            raise GameError("invalid_tournament_id", "A tournament id is 2-30 lowercase letters, digits or '-'.")
        # Its tables will be "<id>-<phase>-<n>": none of those ids may be taken already, nor may
        # the id itself be some other tournament's table id.
        for taken in self.manager.infos:
            if tournament_of_table(taken) == tournament_id:
                raise GameError("table_exists", f"{tournament_id!r} would name its tables like {taken!r}, "
                                                "which is taken.")
        checked(spec)
        tables = TableService.of(self.resources)
        for user in spec.staff:  # a live tournament's croupiers and chefs, checked before anything is written
            await tables.staff_member(user)
        settings = {"spec": msgspec.to_builtins(spec)}
        return await tables.create(by, "tournament", "titano", spec.mode, spec.currency,
                                                            spec.name, settings, tournament_id)

    async def open_table(self, tournament: TableInfo, spec: TournamentSpec, table_id: str) -> None:
        """A phase's table, created once (the driver asks again after a restart: nothing happens).
        A table of that id that is not this tournament's is never adopted."""
        known = self.manager.infos.get(table_id)
        if known is not None:
            if known.game != "blackjack" or known.settings.get("tournament") != tournament.id:
                raise GameError("table_exists", f"Table {table_id!r} is not tournament {tournament.id}'s: its "
                                                "phase cannot be seated.")
            return
        by = system_actor(tournament.id, tournament.currency)
        service = TableService.of(self.resources)
        try:
            await service.create(by, "blackjack", "titano", spec.mode, POINTS_CURRENCY,
                                 f"{spec.name} {table_id.removeprefix(tournament.id + '-')}",
                                 {"tournament": tournament.id, "decks": spec.decks}, table_id)
        except GameError as exc:
            if exc.code != "table_exists":
                raise
            await self.manager.reload(table_id)
            return
        for user in spec.staff:  # a live tournament's croupiers and chefs work its tables
            await service.assign_staff(by, table_id, user)


class TournamentDriver(Companion):
    """The tournament's link to its tables (see the module's docstring)."""

    def __init__(self, runtime: TableRuntime) -> None:
        super().__init__(runtime)
        self.system = system_actor(runtime.info.id, runtime.info.currency)
        self._wake = asyncio.Event()
        self._task: asyncio.Task | None = None
        # Orders handed to the router and not answered yet, and those answered (applied);
        # reports handed to the runtime, by table: the seq they cover.
        self._sending: dict[str, asyncio.Future] = {}
        self._delivered: set[tuple[str, int]] = set()
        self._reported: dict[str, int] = {}
        # The committed coordinator, decoded once per committed seq; the tables that said they
        # have something to report (tables in this process wake the driver; the others are
        # read every POLL_SECONDS).
        self._loaded: tuple[int, Coordinator] | None = None
        self._dirty: set[str] = set()
        self._polled = 0.0
        self._archived: set[str] = set()

    async def start(self) -> list[Any]:
        self._task = asyncio.create_task(self._loop(), name=f"tournament {self.runtime.info.id}")
        return []

    async def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task

    def nudge(self, table: str = "") -> None:
        if table:
            self._dirty.add(table)
        self._wake.set()

    async def forward(self, conn: Any, events: list[Any]) -> list[Any]:
        """Inside the commit: whoever is entered must be a player with an account here (the
        cashier names him; the coordinator knows no accounts), and not under a cool-off or
        self-exclusion (``self_excluded`` / ``cooling_off``: from his wallet or at the desk,
        an entry is play; his own socket may be one a process never heard the exclusion on);
        paid from his wallet, within his own stake and loss limits (``server.play_limits``).
        Refused, the entry is undone."""
        for ev in events:
            if isinstance(ev, E.Registered):
                who = await store.get_user(conn, ev.player, playing=True)
                if who is None or who.role != "player":
                    raise GameError("not_a_player", f"{ev.player!r} is not a player's account: only players "
                                                    "enter a tournament.")
        # An entry from his wallet is money risked: his own stake and loss limits hold (paid
        # at the desk, it never passes through his wallet).
        await play_limits.check_stakes(conn, self.runtime.info.currency, [
            (ev.player, ev.buy_in + ev.fee) for ev in events if isinstance(ev, E.EntryPaid) and ev.source == "wallet"],
            exclusions=False)  # (get_user refused an excluded player above)
        return []

    def committed(self, events: list[Any]) -> None:
        if any(isinstance(ev, (E.PhaseStarted, E.TableOrdered)) for ev in events):
            self.nudge()

    async def _loop(self) -> None:
        while not self.runtime.stopped:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._wake.wait(), POLL_SECONDS)
            self._wake.clear()
            try:
                await self.turn()
            except asyncio.CancelledError:
                raise
            except Exception:
                log.exception("tournament %s: the driver's turn failed; trying again", self.runtime.info.id)

    def committed_coordinator(self) -> Coordinator:
        """The coordinator as last committed (never a batch being applied: an order or a phase
        that may yet roll back is never delivered)."""
        rt = self.runtime
        if self._loaded is None or self._loaded[0] != rt.seq:
            self._loaded = (rt.seq, rt.committed_copy())
        return self._loaded[1]

    async def turn(self) -> None:
        rt = self.runtime
        coordinator = self.committed_coordinator()
        service = TournamentService(rt.ctx)  # type: ignore[arg-type]  # the runtime's resources
        await self._archive_done(coordinator)
        tables = coordinator.current_tables()
        if not tables:
            return
        spec = coordinator.state.spec
        for table in tables:
            await service.open_table(rt.info, spec, table)
        self._deliver(coordinator.pending_orders())
        await self._collect(coordinator, tables)

    async def _archive_done(self, coordinator: Coordinator) -> None:
        """A table whose phase is over (its stacks handed back, nothing on the felt) leaves the
        lobby: archived, its history kept for recall."""
        infos = self.runtime.ctx.manager.infos
        for table, run in coordinator.state.tables.items():
            info = infos.get(table)
            if run.done and info is not None and not info.archived and table not in self._archived:
                self._archived.add(table)
                try:
                    await TableService.of(self.runtime.ctx).archive(  # type: ignore[arg-type]
                        self.system, table, "the tournament's phase at this table is over")
                except GameError as exc:
                    if exc.code != "table_archived":
                        self._archived.discard(table)  # (not served right now: again next turn)

    def _deliver(self, pending: list[E.TableOrdered]) -> None:
        """Each table's next order not yet applied, one at a time per table (in order)."""
        router = self.runtime.ctx.manager.router
        first: dict[str, E.TableOrdered] = {}
        for o in pending:
            if (o.table, o.order) not in self._delivered:
                first.setdefault(o.table, o)
        for table, o in first.items():
            if table in self._sending:
                continue
            cid = f"{self.runtime.info.id}:order:{table}:{o.order}"
            fut = router.submit(self.system, cid, table, o.command, encoder.encode(o.command))
            self._sending[table] = fut
            fut.add_done_callback(lambda f, o=o: self._answered(o, f))

    def _answered(self, o: E.TableOrdered, fut: asyncio.Future) -> None:
        self._sending.pop(o.table, None)
        answer = fut.result() if not fut.cancelled() and fut.exception() is None else None
        if isinstance(answer, Accepted) or (isinstance(answer, Rejected) and answer.code == "order_applied"):
            self._delivered.add((o.table, o.order))
            self.nudge()  # the table's next order, and its report
        elif isinstance(answer, Rejected) and answer.code not in ("table_unavailable", "outcome_unknown"):
            log.error("tournament %s: table %s refused order %d: %s %s", self.runtime.info.id, o.table, o.order,
                      answer.code, answer.message)

    async def _collect(self, coordinator: Coordinator, tables: list[str]) -> None:
        rt = self.runtime
        now = asyncio.get_running_loop().time()
        if now - self._polled >= POLL_SECONDS:  # every table now and then (another process's too)
            self._polled, wanted = now, tables
        else:
            wanted = [t for t in tables if t in self._dirty or t not in self._reported]
        self._dirty.difference_update(wanted)
        for table in wanted:
            since = max(coordinator.report_cursor(table), self._reported.get(table, 0))
            async with rt.ctx.pool.acquire() as conn:
                rows = await store.kinds_after(conn, table, since, list(_REPORTED))
            report = report_of(table, rows)
            if report is None:
                continue
            self._reported[table] = report.seq
            fut = rt.submit(self.system, f"report:{table}:{report.seq}", report)
            fut.add_done_callback(lambda f, t=table, seq=report.seq: self._report_answered(t, seq, f))

    def _report_answered(self, table: str, seq: int, fut: asyncio.Future) -> None:
        answer = fut.result() if not fut.cancelled() and fut.exception() is None else None
        if isinstance(answer, Accepted) or (isinstance(answer, Rejected) and answer.code == "stale_report"):
            self.nudge()  # the coordinator may have new orders (the next phase)
            return
        if self._reported.get(table) == seq:  # not taken: read it again next turn
            del self._reported[table]
        if isinstance(answer, Rejected) and answer.code not in ("table_unavailable", "outcome_unknown"):
            log.error("tournament %s: the report of %s up to seq %d was refused: %s %s", self.runtime.info.id,
                      table, seq, answer.code, answer.message)
