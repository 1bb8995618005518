"""A blackjack tournament or Sit&Go behind the server (Titano Art. 22-29, Appendix 1).

The tournament runs like a table: its coordinator (``blackjack.tournament``) is the engine,
owned by one process at a time under a lease, its commands logged and replayed, its events
stored and pushed on its channel (``table.<tournament id>``: registrations, the draw,
seating, standings after every hand, eliminations, prizes). Its money (buy-ins, fees,
refunds, prizes) moves in its own commits (``server.money.tournament_ops``); its tables'
points move in theirs. The driver (``server.tournaments``) rides along as its companion:
it opens the phases' tables, delivers the coordinator's orders to them and brings their
reports back as ``table_report`` commands.
"""

from __future__ import annotations

import secrets
import time
from typing import Any

import msgspec

from blackjack.tournament import commands as C
from blackjack.tournament import events as E
from blackjack.tournament.coordinator import Coordinator
from blackjack.tournament.spec import TournamentSpec, checked
from blackjack.tournament.state import TournamentState
from games.commands import Actor
from games.errors import GameError
from games.ledger import accounts
from games.ledger.accounts import Kind
from games.ledger.model import Op
from server.auth import Principal
from server.companions import Companion
from server.kinds.base import GameKind, TableInfo, Timer
from server.money import TableAccounts, tournament_ops, tournament_wallets

# Art. 23: registration closes 10 minutes before the start.
CLOSE_BEFORE_START = 600
# Who may send the coordinator anything (it checks each command's role itself).
ACTORS = ("player", "croupier", "chef", "director", "cashier", "system")
SERVER_ONLY = (C.TableReport,)


class TournamentAccounts(TableAccounts):
    """A tournament's own accounts: its prize pool, the house's fees, its points pool."""

    def to_open(self) -> list[tuple[str, Kind]]:
        return [(accounts.prize_pool(self.table, self.currency), Kind.PRIZE_POOL),
                (accounts.fees(self.currency), Kind.FEES),
                (accounts.points_pool(self.table), Kind.POINTS_POOL)]

    def opened_by(self, events: Any) -> list[tuple[str, Kind]]:
        """A player who paid at the desk may have no wallet in the tournament's currency yet:
        it opens with his refund or his prize."""
        return tournament_wallets(self.currency, events)


def spec_of(table: TableInfo) -> TournamentSpec:
    try:
        return checked(msgspec.convert(table.settings.get("spec"), TournamentSpec))
    except msgspec.ValidationError as exc:
        raise GameError("invalid_tournament", f"Not a valid tournament: {exc}") from None


class TournamentKind(GameKind):
    name = "tournament"
    engine_cls = Coordinator
    command_type = C.Command
    event_type = E.Event
    state_type = TournamentState
    profiles = ("titano",)
    settings_keys = ("spec",)

    def default_currency(self, profile: str) -> str:
        return "EUR"

    def new_engine(self, table: TableInfo) -> Coordinator:
        return Coordinator(table.id, spec_of(table))

    def check_role(self, who: Principal) -> None:
        self.actor(who)  # the cashier too (over the websocket as over HTTP)

    def actor(self, who: Principal) -> Actor:
        # The cashier registers players who pay at the desk: the one role that acts towards
        # a tournament and never at a table.
        if who.role not in ACTORS:
            raise GameError("forbidden", f"A {who.role} takes no part in tournaments.")
        return Actor(who.id, who.role)  # type: ignore[arg-type]  # checked just above

    def authorize(self, command: Any, who: Principal, table: TableInfo) -> Any:
        if isinstance(command, SERVER_ONLY) and who.role != "system":
            raise GameError("forbidden", "Only the server reports what the tournament's tables recorded.")
        self.actor(who)
        # The draw is the server's, never a client's: filled in by ``draw``.
        if isinstance(command, (C.Start, C.Register)) and command.draw:
            raise GameError("invalid_command", "The draw is made by the server: send no 'draw'.")
        return command

    def draw(self, engine: Coordinator, command: Any) -> Any:
        """The seating draw (Art. 23, 27), recorded with the command that starts the play: a
        director's start, or the entry that fills a Sit&Go enough to start (Appendix 1)."""
        if isinstance(command, C.Start) and not command.draw:
            return msgspec.structs.replace(command, draw=secrets.token_hex(32))
        if (isinstance(command, C.Register) and not command.draw
                and engine.state.spec.format == "sit_and_go"):
            return msgspec.structs.replace(command, draw=secrets.token_hex(32))
        return command

    def accounts(self, table: TableInfo) -> TableAccounts:
        return TournamentAccounts(table.id, table.currency)

    def ledger_ops(self, table: TableInfo, events: list[Any]) -> list[Op]:
        return tournament_ops(table.id, table.currency, events)

    def companions(self, runtime: Any) -> list[Companion]:
        from server.tournaments import TournamentDriver  # (the driver needs the table service)

        return [TournamentDriver(runtime)]

    def next_timer(self, engine: Coordinator, table: TableInfo, settings: Any) -> Timer | None:
        s = engine.state
        if s.status == "registration" and s.spec.format == "tournament" and s.spec.starts_at:
            delay = s.spec.starts_at - CLOSE_BEFORE_START - time.time()
            return Timer("close-registration", max(delay, 0.0),
                         C.CloseRegistration(reason="registration closes 10 minutes before the start (Art. 23)"))
        return None

    def recover(self, engine: Coordinator, table: TableInfo) -> tuple[list[Any], str]:
        """A tournament cut off by a crash rests until its director resumes it: the tables
        come back first (each voids its hand in play), then the play goes on."""
        s = engine.state
        if s.status == "running" and not s.paused:
            return ([C.Pause(reason="the server stopped: the director resumes the tournament")],
                    "the tournament is paused until the director resumes it")
        return [], ""

    def round_id(self, engine: Coordinator) -> str:
        return f"phase-{engine.state.phase}" if engine.state.phase else engine.state.status

    def open_wagers(self, engine: Coordinator) -> list[str]:
        return []  # a tournament holds nothing: its money moves in whole transfers

    def current_limits(self, engine: Coordinator, table: TableInfo) -> Any:
        return None  # the limits are its tables' (``TournamentSeat``)

    def view(self, engine: Coordinator, who: Principal | None) -> Any:
        view = engine.view(who.id if who else None)
        if who is not None and who.role in ACTORS:
            view.legal = [t for t in engine.legal(self.actor(who)) if t != "table_report" or who.role == "system"]
        return view

    def close_command(self, engine: Coordinator, who: Principal, reason: str) -> Any:
        s = engine.state
        if s.status in ("finished", "cancelled"):
            return None
        return C.Cancel(reason=reason)


KIND = TournamentKind()
