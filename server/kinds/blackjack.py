"""Blackjack (Campione, Titano, Lugano profiles) behind the server: who may send what,
the RNG table's shoe and clock, decision time-outs, and what a crash leaves behind."""

from __future__ import annotations

import secrets
from typing import Any

import msgspec

from blackjack import commands as C
from blackjack import events as E
from blackjack import jackpot as J
from blackjack.cards import full_shoe
from blackjack.profiles import BUILTIN, profile as load_profile
from blackjack.shoe import commitment, cut_bounds, shuffle_order
from blackjack.state import TableState
from blackjack.table import ROUND_PHASES, BlackjackTable
from games.errors import GameError
from games.ledger.limits import TableLimits
from games.money import currency
from games.rng import SystemRng, shuffled
from server.auth import Principal
from server.kinds.base import GameKind, TableInfo, Timer, staff_check

# The console's commands. A player may send any other, for himself only (the engine checks
# the seat, the box and the turn against ``by``); staff send those only for floor players at
# live tables (the engine refuses anything else).
STAFF_COMMANDS = (C.Shuffle, C.Reshuffle, C.CutCardOut, C.CloseBets, C.SetLimits, C.Card, C.CloseOffers,
                  C.VoidRound, C.BurnCard, C.ExposeCard, C.JackpotMeters, C.ReleaseSeat, C.CloseTable)
# On an RNG table the server deals and only players play; no card is misdealt, misdrawn or
# turned in a shoe nobody touches (so nothing for the console to void, burn or expose after
# seeing the cards). The console may still shuffle, cut for the house, close bets and
# offers, change limits and close.
RNG_ONLY_SERVER = (C.Card, C.CutCardOut, C.Sit, C.Leave, C.PlaceBet, C.WithdrawBet, C.PlaceSideBet,
                   C.WithdrawSideBet, C.Insure, C.EvenMoney, C.DeclineOffer, C.Hit, C.Stand, C.Double,
                   C.Split, C.BehindDouble, C.BehindSplit, C.PassCut, C.VoidRound, C.BurnCard, C.ExposeCard)
# The server's own: the pool's meters, and freeing the seat of a player gone for the house's
# time (no console may cancel a connected player's bets by freeing his seat).
SERVER_ONLY = (C.JackpotMeters, C.ReleaseSeat)
ENGINE_ROLE = {"player": "player", "croupier": "croupier", "chef": "chef", "director": "director"}

_rng = SystemRng()


class ShoeRevealed(msgspec.Struct, frozen=True, kw_only=True, tag_field="type", tag="shoe_revealed"):
    """The server's event once a shoe is over: the order it committed to at the shuffle (before
    the cut) and the salt, so anyone can check ``sha256(salt ‖ bytes(order)) == commitment``."""

    commitment: str
    salt: str
    order: list[int]


class ShoeSecret(msgspec.Struct, frozen=True):
    """What the commitment of the shoe in play hides until its end."""

    commitment: str
    salt: str
    order: list[int]


class _Persisted(msgspec.Struct):
    """The engine state and, beside it, the secret of the shoe in play (never sent to anyone)."""

    engine: TableState
    shoe: ShoeSecret | None = None


class ServerTable(BlackjackTable):
    """The engine plus the server's secret of the current shoe (RNG tables)."""

    shoe: ShoeSecret | None = None


class BlackjackKind(GameKind):
    name = "blackjack"
    engine_cls = ServerTable
    command_type = C.Command
    # The table's events and the linked jackpot pool's (they join the table's stream).
    event_type = E.Event | ShoeRevealed | J.RoundEntered | J.JackpotContributed | J.JackpotSeeded | J.JackpotWon | J.JackpotPaid
    state_type = TableState
    profiles = tuple(BUILTIN)
    settings_keys = ("min_bet", "max_bet")

    def default_currency(self, profile: str) -> str:
        return load_profile(profile).currency

    def new_engine(self, table: TableInfo) -> BlackjackTable:
        p = load_profile(table.profile)
        if p.currency != table.currency:
            p = msgspec.structs.replace(p, currency=table.currency)
        cur = currency(table.currency)
        s = table.settings
        min_bet = s.get("min_bet", cur.units(10))
        max_bet = s.get("max_bet", cur.units(100))
        if type(min_bet) is not int or type(max_bet) is not int:
            raise GameError("invalid_settings", "min_bet and max_bet are whole amounts in minor units.")
        return ServerTable(table.id, p, min_bet=min_bet, max_bet=max_bet, live=table.mode == "live")

    def load(self, state: bytes) -> ServerTable:
        try:
            saved = _persisted_decoder.decode(state)
        except msgspec.ValidationError:  # a state written before the shoe's secret was kept
            return ServerTable.from_state(self._state_decoder.decode(state))
        engine = ServerTable.from_state(saved.engine)
        engine.shoe = saved.shoe
        return engine

    def dump(self, engine: ServerTable) -> bytes:
        return msgspec.json.encode(_Persisted(engine.state, engine.shoe))

    def fill_actor(self, obj: dict[str, Any], who: Principal) -> None:
        obj["by"] = who.id
        obj["role"] = ENGINE_ROLE.get(who.role, "player")

    def authorize(self, command: Any, who: Principal, table: TableInfo) -> Any:
        if who.role == "player":
            if isinstance(command, STAFF_COMMANDS):
                raise GameError("forbidden", "Only the croupier's console may do that.")
            if getattr(command, "player", "") not in ("", who.id):
                raise GameError("not_your_seat", "You can only play for yourself.")
            if isinstance(command, C.Cut) and command.at is None:
                raise GameError("cut_point_missing", "Say where you cut (at), or pass the cut.")
            return command
        staff_check(who, table)
        if isinstance(command, SERVER_ONLY) and who.role != "system":
            raise GameError("forbidden", "Only the server does that (the pool's meters; a gone player's seat).")
        if isinstance(command, C.CloseTable):  # never the client's word: the recorded authorisation, if any
            director = table.authorised_by(who.id, "close") if who.role == "chef" else ""
            return msgspec.structs.replace(command, authorised_by=director)
        if table.mode == "rng":
            if isinstance(command, RNG_ONLY_SERVER):
                raise GameError("rng_table", "At an RNG table the server deals and only players play.")
            if isinstance(command, C.Shuffle):
                # The console asks for a new shoe; the server's RNG shuffles it.
                return msgspec.structs.replace(command, order=[], salt="")
        if isinstance(command, C.Cut) and command.at is None:  # the house cuts where the RNG says
            return msgspec.structs.replace(command, random_at=self._random_cut(table))
        return command

    def engine_events(self, engine: ServerTable, command: Any, actor: Any) -> list[Any]:
        # Transitional: the engine still reads its actor from the command's ``by``.
        s: TableState = engine.state
        secret = None
        if isinstance(command, C.Shuffle) and not s.live and not command.order:
            # A fresh salt per shoe: the commitment published now hides the order until the reveal.
            command = msgspec.structs.replace(command, order=self._order(engine), salt=secrets.token_hex(16))
            secret = ShoeSecret(commitment(command.order, command.salt), command.salt, command.order)
        events = list(engine.handle(command))
        out: list[Any] = []
        for ev in events:
            if isinstance(ev, E.ShoeShuffled) and secret is not None:
                out += self._reveal(engine)  # a mid-round reshuffle replaces a shoe still in play
                engine.shoe = secret
            out.append(ev)
            if isinstance(ev, E.ShoeEnded):
                out += self._reveal(engine)
        return out

    @staticmethod
    def _reveal(engine: ServerTable) -> list[ShoeRevealed]:
        shoe, engine.shoe = engine.shoe, None
        return [] if shoe is None else [ShoeRevealed(commitment=shoe.commitment, salt=shoe.salt, order=shoe.order)]

    def _order(self, engine: BlackjackTable) -> list[int]:
        s: TableState = engine.state
        if s.phase == "reshuffle":
            # Mid-round: every card not on the table goes back into the shoe.
            expected = full_shoe(s.profile.decks)
            for c in engine._cards_on_table():
                expected.remove(c)
            return shuffled(expected, _rng)
        return shuffle_order(s.profile, _rng)

    def _random_cut(self, table: TableInfo) -> int:
        p = load_profile(table.profile)
        lo, hi = cut_bounds(p, p.cards)
        return lo + _rng.randbelow(hi - lo + 1)

    def _croupier(self, table: TableInfo) -> dict[str, str]:
        return {"by": f"system-{table.id}", "role": "croupier"}

    def _system(self, table: TableInfo) -> dict[str, str]:
        return {"by": f"system-{table.id}", "role": "system"}

    def next_timer(self, engine: BlackjackTable, table: TableInfo, settings: Any) -> Timer | None:
        s: TableState = engine.state
        r = s.round
        system = self._system(table)
        # Decisions time out on every table: the default action is sent as a command.
        if s.phase == "offers":
            return Timer(f"offers:{r}", settings.decision_seconds, C.DeclineOffer(box=0, **system))
        if s.phase == "play" and s.behind:
            box = s.boxes[s.turn_box].number
            cmd = (C.BehindDouble(box=box, accept=False, **system) if s.behind_action == "double"
                   else C.BehindSplit(box=box, choice="first", **system))
            return Timer(f"behind:{r}:{box}:{s.turn_hand}", settings.decision_seconds, cmd)
        if s.phase == "play" and not s.need and s.turn_box < len(s.boxes):
            box = s.boxes[s.turn_box]
            hand = box.hands[s.turn_hand]
            return Timer(f"turn:{r}:{box.number}:{s.turn_hand}:{len(hand.cards)}", settings.decision_seconds,
                         C.Stand(box=box.number, hand=s.turn_hand, **system))
        if s.phase == "cut" and s.cut_entitled:
            # A silent player passes the cut: to the next on his left (Campione Art. 30) or the house.
            return Timer(f"cut:{r}:{s.cut_entitled}", settings.decision_seconds, C.PassCut(**system))
        if table.mode != "rng":
            return None
        croupier = self._croupier(table)
        if s.phase in ("shuffle", "reshuffle"):
            return Timer(f"shuffle:{r}:{s.phase}", 0.0, C.Shuffle(**croupier))
        if s.phase == "cut":
            return Timer(f"cut:{r}", 0.0, lambda: C.Cut(random_at=self._random_cut(table), **system))
        if s.phase == "betting" and s.bets:
            return Timer(f"close:{r}", settings.betting_seconds, C.CloseBets(**croupier))
        return None

    def recover(self, engine: BlackjackTable, table: TableInfo) -> tuple[list[Any], str]:
        s: TableState = engine.state
        if s.phase in ROUND_PHASES:
            return ([C.VoidRound(reason="the server stopped during the round", **self._croupier(table))],
                    f"round {s.round} void: every stake of the round is returned")
        return [], ""

    def current_limits(self, engine: BlackjackTable, table: TableInfo) -> TableLimits:
        s: TableState = engine.state
        return TableLimits(table.currency, s.min_bet, s.max_bet)

    def limits_changes(self, events: list[Any], table: TableInfo) -> list[tuple[Any, int, str, str]]:
        return [(TableLimits(table.currency, e.min_bet, e.max_bet), e.from_round, e.by, "")
                for e in events if isinstance(e, E.LimitsChanged)]

    def limits_command(self, engine: BlackjackTable, who: Principal, minimum: int, maximum: int | None,
                       maxima: dict[str, int] | None, reason: str) -> Any:
        if maximum is None:
            raise GameError("invalid_limits", "A blackjack table needs a minimum and a maximum.")
        if maxima:
            raise GameError("invalid_limits", "A blackjack table has one minimum and one maximum, no 'maxima'.")
        return C.SetLimits(min_bet=minimum, max_bet=maximum, by=who.id, role=ENGINE_ROLE.get(who.role, "player"))

    def seated(self, engine: BlackjackTable) -> list[str]:
        return [p for p in engine.state.seats[1:] if p]

    def release_command(self, engine: BlackjackTable, table: TableInfo, player: str) -> Any:
        s: TableState = engine.state
        if player not in s.seats[1:] or s.phase in ROUND_PHASES:
            return None
        return C.ReleaseSeat(box=s.seats.index(player, 1), reason="the player left the table",
                             **self._system(table))

    def close_command(self, engine: BlackjackTable, who: Principal, reason: str) -> Any:
        if engine.state.phase == "closed":
            return None
        return C.CloseTable(by=who.id, role="director", reason=reason)

    def meters_command(self, table: TableInfo, minor: int, major: int) -> Any:
        return C.JackpotMeters(minor=minor, major=major, **self._system(table))

    def open_wagers(self, engine: BlackjackTable) -> list[str]:
        s: TableState = engine.state
        out = [b.wager for b in s.bets] + [b.wager for b in getattr(s, "side_bets", [])]
        out += [w.id for box in s.boxes for w in box.wagers if not w.settled]
        return out

    def round_id(self, engine: BlackjackTable) -> str:
        return f"round-{engine.state.round}"

    def label_rounds(self, events: list[Any], before: str, after: str) -> list[str]:
        """A round's events run from its start to its end and the wrap-up the end brings in the
        same command (button_moved, the jackpot report, shoe_ended and the server's
        shoe_revealed when the round was the shoe's last): all of that is recalled under the
        round that ended. The next round's events begin with its round_opened."""
        end = -1
        for i, ev in enumerate(events):
            if isinstance(ev, (E.RoundSettled, E.RoundVoided)) and (not isinstance(ev, E.RoundVoided) or not ev.boxes):
                end = i
        if end >= 0:
            while end + 1 < len(events) and not isinstance(events[end + 1], E.RoundOpened):
                end += 1
        return [before if i <= end else after for i in range(len(events))]


_persisted_decoder = msgspec.json.Decoder(_Persisted)

KIND = BlackjackKind()
