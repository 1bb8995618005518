"""The interface between the table runtime and one game's engine."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

import msgspec

from games.commands import ROLES, Actor
from games.errors import GameError
from games.ledger.model import Op
from server.auth import Principal
from server.companions import Companion
from server.money import TableAccounts, accounts_for, ops_for
from server.policy import STAFF_ROLES, check_assigned, check_table_role

if TYPE_CHECKING:
    from server.runtime import TableRuntime


class Authorisation(msgspec.Struct, frozen=True):
    """A director's recorded leave for a chef de table to suspend or close a table (Art. 15)."""

    action: str  # "suspend" or "close"
    chef: str
    director: str
    valid_until: datetime


class TableInfo(msgspec.Struct):
    """A table as the database describes it (not its game state)."""

    id: str
    game: str
    profile: str
    mode: str  # "rng": the server draws and runs the clock; "live": the croupier console does
    currency: str
    name: str
    settings: dict[str, Any] = {}
    staff: list[str] = []
    archived: bool = False
    authorisations: list[Authorisation] = []

    def authorised_by(self, chef: str, action: str) -> str:
        """The director whose authorisation lets ``chef`` do ``action`` now ("" if none)."""
        now = datetime.now(UTC)
        for a in self.authorisations:
            if a.chef == chef and a.action == action and a.valid_until > now:
                return a.director
        return ""


class Timer(msgspec.Struct):
    """The next automatic command: sent as the table after ``delay`` seconds.

    ``key`` names the moment (e.g. "close-bets:s12"); re-arming with the same key keeps
    the original deadline, so bets placed meanwhile do not stretch the window."""

    key: str
    delay: float
    command: Any


class GameKind:
    """Subclasses tie one engine to the server."""

    name: str
    engine_cls: Any
    command_type: Any  # the engine's command union (AsyncAPI, decoding)
    event_type: Any  # the engine's event union (AsyncAPI)
    state_type: Any
    profiles: tuple[str, ...] = ()
    settings_keys: tuple[str, ...] = ()  # what a table's ``settings`` may say

    def __init__(self) -> None:
        self._decoder = msgspec.json.Decoder(self.command_type)
        self._state_decoder = msgspec.json.Decoder(self.state_type)

    # ---- engines and state -------------------------------------------------------------
    def default_currency(self, profile: str) -> str:
        return "CHF"

    def new_engine(self, table: TableInfo) -> Any:
        raise NotImplementedError

    def load(self, state: bytes) -> Any:
        return self.engine_cls.from_state(self._state_decoder.decode(state))

    def upgrade(self, engine: Any, table: TableInfo) -> bool:
        """Bring a state saved by an older build in line with the table (True if changed)."""
        return False

    def dump(self, engine: Any) -> bytes:
        return msgspec.json.encode(engine.state)

    def check_role(self, who: Principal) -> None:
        """Before a command is even read: roles that never act at this kind of table."""
        check_table_role(who.role)

    def actor(self, who: Principal) -> Actor:
        """The engine's actor for an authenticated principal (one role vocabulary for every
        game, ``games.commands``); roles that never play or deal are refused here too."""
        if who.role not in ROLES:
            raise GameError("forbidden", f"A {who.role} does not act at the tables.")
        return Actor(who.id, who.role)  # type: ignore[arg-type]  # checked just above

    def draw(self, engine: Any, command: Any) -> Any:
        """The command with every draw the server makes for it filled in (an RNG shoe's order
        and salt): what the runtime applies, logs and replays after a crash, so
        ``engine_events`` must be a pure function of the engine and what this returns.
        By default the command as it is (a clock's draw is made when its timer fires)."""
        return command

    def engine_events(self, engine: Any, command: Any, actor: Actor) -> list[Any]:
        """Apply one command issued by ``actor``; the events to record and broadcast."""
        return list(engine.handle(command, actor))

    def decode_command(self, raw: bytes) -> Any:
        """The client's JSON -> the engine's command, with the game's one typed decoder.
        Who issues it is never part of it: the actor comes from the token (``actor``), and
        a command that names one (``by``, ``role``) is refused as an unknown field."""
        try:
            return self._decoder.decode(raw)
        except msgspec.ValidationError as exc:
            raise GameError("invalid_command", f"Not a valid {self.name} command: {exc}") from None
        except (msgspec.DecodeError, UnicodeDecodeError) as exc:  # not JSON, nested too deep, not UTF-8
            raise GameError("malformed", f"Malformed JSON: {exc}") from None

    # ---- who may do what ---------------------------------------------------------------

    def authorize(self, command: Any, who: Principal, table: TableInfo) -> Any:
        """Check the role and the seat; return the command to apply (actor filled in)."""
        raise NotImplementedError

    def seated(self, engine: Any) -> list[str]:
        """The players holding a seat at the table (a game without seats: none)."""
        return []

    def release_command(self, engine: Any, table: TableInfo, player: str) -> Any:
        """The command that frees ``player``'s seat now (he has been gone the house's time),
        or None: he holds no seat, or a round is being played (seats go between rounds)."""
        return None

    # ---- time and recovery -------------------------------------------------------------
    def next_timer(self, engine: Any, table: TableInfo, settings: Any) -> Timer | None:
        return None

    def recover(self, engine: Any, table: TableInfo) -> tuple[list[Any], str]:
        """Commands that complete or void a round cut off by a crash, and what they do."""
        return [], ""

    def round_id(self, engine: Any) -> str:
        return ""

    def open_wagers(self, engine: Any) -> list[str]:
        """The wager ids the engine still has in play (their holds may be pending)."""
        raise NotImplementedError

    def label_rounds(self, events: list[Any], before: str, after: str) -> list[str]:
        """The round each event belongs to, given the round before and after the command."""
        return [after] * len(events)

    # ---- limits (recorded as versions in server.store.limits.LimitsStore) -------------------
    def limits_changes(self, events: list[Any], table: TableInfo) -> list[tuple[Any, int, str, str]]:
        """(TableLimits, from_round, changed_by, reason) for each limits change among ``events``."""
        return []

    def current_limits(self, engine: Any, table: TableInfo) -> Any:
        raise NotImplementedError

    def limits_command(self, engine: Any, who: Principal, minimum: int, maximum: int | None,
                       maxima: dict[str, int] | None, reason: str) -> Any:
        raise GameError("unsupported", f"{self.name} tables have no limits command.")

    # ---- money and companions --------------------------------------------------------------
    def accounts(self, table: TableInfo) -> TableAccounts:
        """Whose accounts the table's money moves through (``server.money``)."""
        return accounts_for(table.id, table.currency, table.settings)

    def ledger_ops(self, table: TableInfo, events: list[Any]) -> list[Op]:
        """The ledger operations for a committed batch's events."""
        return ops_for(self.accounts(table), events)

    def companions(self, runtime: TableRuntime) -> list[Companion]:
        """What rides along with this table (``server.companions``): none by default."""
        return []

    # ---- linked jackpots ------------------------------------------------------------------
    def meters_command(self, table: TableInfo, minor: int, major: int) -> Any:
        """The command that shows a linked pool's meters at ``table`` (only kinds whose
        profiles have a linked jackpot are ever asked)."""
        raise GameError("unsupported", f"{self.name} tables have no jackpot meters.")

    # ---- what people see ---------------------------------------------------------------
    def view(self, engine: Any, who: Principal | None) -> Any:
        return engine.view(who.id if who else None)

    def public_event(self, event: Any) -> Any:
        """The event as everyone at the table may see it (override to hide a card)."""
        return event

    def public_payload(self, payload: bytes) -> Any:
        """A stored event (JSON) as everyone may see it; by default verbatim."""
        return msgspec.Raw(payload)

    def close_command(self, engine: Any, who: Principal, reason: str) -> Any:
        """The engine command that closes the table for good (every open bet returned), given
        by a director; None when it is closed already."""
        raise GameError("unsupported", f"{self.name} tables cannot be closed.")


def staff_check(who: Principal, table: TableInfo) -> None:
    """Console commands: staff, and croupiers and chefs only at the tables they are assigned to."""
    if who.role == "system":  # the runtime's own principal: no token carries the role
        return
    if who.role not in STAFF_ROLES:
        raise GameError("forbidden", "Only the croupier's console may do that.")
    check_assigned(who, table)
