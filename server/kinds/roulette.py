"""Roulette (Campione rules) behind the server: who may send what, the RNG table's clock,
and what a crash leaves behind.

Commands carry no actor (``games.commands``): the base class decodes a client's with the
typed decoder and the runtime hands the engine the actor of whoever submitted it. The
commands built here are submitted by the runtime as the table's ``system`` principal (the
clock, crash recovery) or as the director who asked (``close_command``,
``limits_command``); the engine's role rules (``roulette.roles``) say what each may do."""

from __future__ import annotations

import secrets
from typing import Any

import msgspec

from games.commands import ROLES
from games.errors import GameError
from games.rng import SystemRng
from roulette import commands as C
from roulette import events as E
from roulette import fair, roles
from roulette.draw import draw_number
from roulette.engine import RouletteTable
from roulette.limits import default_settings
from roulette.state import RouletteState
from server.auth import Principal
from server.kinds.base import GameKind, TableInfo, Timer, staff_check
from server.store.limits import TableLimits

# The engine's role rules, checked here at the edge too, before a command is queued:
# the commands that move a player's chips: a player sends them for himself; staff only for
# floor players at a live table (the engine refuses anything else). The rest is the console's.
CHIP_COMMANDS = tuple(cls for cls, tag in C.TAG.items() if tag in roles.CHIPS)
# On an RNG table the server runs the wheel and only players stake (no ball to void, no
# chips left on a felt); the console may still open, suspend, close.
RNG_ONLY_SERVER = tuple(cls for cls, tag in C.TAG.items() if tag in roles.WHEEL | roles.FLOOR_ENTRY)
# Art. 15: what a chef may do only on a director's recorded authorisation.
AUTHORISED = {C.Suspend: "suspend", C.CloseTable: "close"}

_rng = SystemRng()


class RouletteKind(GameKind):
    name = "roulette"
    engine_cls = RouletteTable
    command_type = C.Command
    event_type = E.Event
    state_type = RouletteState
    profiles = ("campione",)
    # ``crowd``: each player's stream and view are his share of the table (server.crowd)
    settings_keys = ("minimum", "doubled_plein", "prison_on_zero", "crowd")

    def new_engine(self, table: TableInfo) -> RouletteTable:
        s = table.settings
        for switch in ("crowd", "doubled_plein"):  # (bool("false") would be True)
            if not isinstance(s.get(switch, False), bool):
                raise GameError("invalid_settings", f"A roulette table's {switch} setting is true or false.")
        try:
            settings = default_settings(table.currency, minimum=s.get("minimum"),
                                        doubled_plein=s.get("doubled_plein", False),
                                        prison_on_zero=s.get("prison_on_zero", "lose"),
                                        live=table.mode == "live")
        except (TypeError, ValueError) as exc:
            raise GameError("invalid_settings", f"Bad roulette settings: {exc}") from None
        return RouletteTable(table.id, settings)

    def upgrade(self, engine: RouletteTable, table: TableInfo) -> bool:
        # States saved before TableSettings.live read as live: an RNG table is not.
        s: RouletteState = engine.state
        live = table.mode == "live"
        if s.settings.live == live and (s.pending_settings is None or s.pending_settings.live == live):
            return False
        s.settings = msgspec.structs.replace(s.settings, live=live)
        if s.pending_settings is not None:
            s.pending_settings = msgspec.structs.replace(s.pending_settings, live=live)
        return True

    def authorize(self, command: Any, who: Principal, table: TableInfo) -> Any:
        if who.role == "player":
            if not isinstance(command, CHIP_COMMANDS):
                raise GameError("forbidden", "Only the croupier's console may do that.")
            # (an omitted ``player`` is the player himself: the engine's rule)
            if getattr(command, "player", None) not in (None, who.id):
                raise GameError("not_your_seat", "You can only play for yourself.")
            return command
        staff_check(who, table)
        if isinstance(command, C.OpenSpin) and command.seed:
            raise GameError("seed_not_allowed", "The server draws an RNG spin's secret; nobody sends one.")
        if table.mode == "rng" and isinstance(command, RNG_ONLY_SERVER):
            raise GameError("rng_table", "At an RNG table the server runs the wheel and only players stake.")
        action = AUTHORISED.get(type(command))
        if action is not None:  # never the client's word: the recorded authorisation, if any
            director = table.authorised_by(who.id, action) if who.role == "chef" else ""
            return msgspec.structs.replace(command, authorised_by=director)
        return command

    def draw(self, engine: RouletteTable, command: Any) -> Any:
        """An RNG spin's secret, drawn as it opens (``roulette.fair``): from then on its number
        is fixed, and only the commitment is published. Logged with the command, so a replay
        after a crash opens the same spin with the same secret."""
        if isinstance(command, C.OpenSpin) and not engine.state.settings.live:
            return msgspec.structs.replace(command, seed=secrets.token_hex(fair.SEED_BYTES))
        return command

    def next_timer(self, engine: RouletteTable, table: TableInfo, settings: Any) -> Timer | None:
        if table.mode != "rng":
            return None
        s: RouletteState = engine.state
        if s.phase == "closed" and s.spin == 0 or s.phase == "settled":
            delay = 0.0 if s.spin == 0 else settings.pause_seconds
            return Timer(f"open:{s.spin + 1}", delay, C.OpenSpin())
        if s.phase == "open":
            return Timer(f"launch:{s.spin}", settings.betting_seconds, C.LaunchBall())
        if s.phase == "launched":
            return Timer(f"close:{s.spin}", min(2.0, settings.pause_seconds), C.NoMoreBets())
        if s.phase == "no_more_bets":
            spin, committed = s.spin, engine.committed_number()
            if committed is not None:  # the number its seed fixed when the spin opened
                return Timer(f"result:{spin}", min(2.0, settings.pause_seconds),
                             C.Result(number=committed, source="rng"))
            # (a spin opened before spins had seeds: drawn when the timer fires)
            return Timer(f"result:{spin}", min(2.0, settings.pause_seconds),
                         lambda: C.Result(number=draw_number(_rng), source="rng"))
        return None

    def recover(self, engine: RouletteTable, table: TableInfo) -> tuple[list[Any], str]:
        s: RouletteState = engine.state
        committed = engine.committed_number()
        if table.mode == "rng" and s.phase in ("launched", "no_more_bets") and committed is not None:
            # The ball ran: the spin is settled on the number its seed fixed before any bet.
            steps = [C.NoMoreBets()] if s.phase == "launched" else []
            return [*steps, C.Result(number=committed, source="rng")], \
                f"spin {s.spin} settled on its committed number"
        if table.mode == "rng" and s.phase in ("launched", "no_more_bets"):
            # (no seed: opened before spins had one) Art. 10-11: void, every bet stays for the next launch.
            return [C.VoidSpin(reason="the server stopped during the spin")], \
                f"spin {s.spin} void: every bet stays on the layout"
        if table.mode == "rng" and s.phase == "open" and any(not b.prison for b in s.bets):
            # Still taking bets: whoever bet may be gone; each bet comes back, the seed is revealed.
            return [C.RefundSpin(reason="the server stopped while the spin took bets")], \
                f"spin {s.spin} refunded: every bet placed on it is returned"
        if s.phase in ("launched", "no_more_bets"):
            return [], f"spin {s.spin} waits for the croupier: enter the number or declare the spin void"
        return [], ""

    def _limits(self, settings: Any) -> TableLimits:
        spot = {k: settings.maximum(k) for k in settings.maxima}
        return TableLimits(settings.currency, settings.minimum, max(spot.values()), spot)

    def current_limits(self, engine: RouletteTable, table: TableInfo) -> TableLimits:
        return self._limits(engine.state.settings)

    def limits_changes(self, events: list[Any], table: TableInfo) -> list[tuple[Any, int, str, str]]:
        return [(self._limits(e.settings), e.effective_spin, e.by, e.reason)
                for e in events if isinstance(e, E.SettingsAnnounced)]

    def limits_command(self, engine: RouletteTable, who: Principal, minimum: int, maximum: int | None,
                       maxima: dict[str, int] | None, reason: str) -> Any:
        if maximum is not None:
            raise GameError("invalid_limits", "Roulette maxima are per combination kind: send 'maxima' "
                                              "(plein, cheval, ..., simple), not one 'maximum'.")
        s: RouletteState = engine.state
        base = s.pending_settings or s.settings
        new = msgspec.structs.replace(base, minimum=minimum, maxima={**base.maxima, **(maxima or {})})
        return C.ChangeSettings(settings=new, reason=reason)

    def close_command(self, engine: RouletteTable, who: Principal, reason: str) -> Any:
        if engine.state.phase == "closed" and not engine.state.bets:
            return None
        return C.CloseTable(reason=reason)

    def view(self, engine: RouletteTable, who: Principal | None) -> Any:
        # With what the viewer may send now: the engine's phase table and role rules (the
        # server's own rule on top: croupiers and chefs act only where they are assigned).
        if who is None:
            return engine.view(None)
        return engine.view(who.id, self.actor(who) if who.role in ROLES else None)

    def open_wagers(self, engine: RouletteTable) -> list[str]:
        return [b.wager for b in engine.state.bets]  # this spin's and the prisoners

    def round_id(self, engine: RouletteTable) -> str:
        return f"spin-{engine.state.spin}"


KIND = RouletteKind()
