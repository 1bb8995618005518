"""Blackjack (Campione, Titano, Lugano profiles) behind the server: who may send what,
the RNG table's shoe and clock, decision time-outs, and what a crash leaves behind.

Commands carry no actor (``games.commands``): the base class decodes a client's with the
typed decoder and the runtime hands the engine the actor of whoever submitted it. The
commands built here are submitted by the runtime as the table's ``system`` principal (the
clock, time-outs, a gone player's seat, the jackpot meters, crash recovery) or as the
member of staff who asked (``close_command``, ``limits_command``)."""

from __future__ import annotations

from typing import Any, get_args

import msgspec

from blackjack import commands as C
from blackjack import events as E
from blackjack import jackpot_pool as pool
from blackjack.phases import ROUND_PHASES, WHO, Phase
from blackjack.profiles import BUILTIN
from blackjack.profiles import profile as load_profile
from blackjack.round.deal import cards_on_table
from blackjack.state import TableState
from blackjack.table import BlackjackTable
from blackjack.view import TableView
from games.commands import ROLES, Actor
from games.errors import GameError
from games.money import currency
from games.shoe import commitment
from server.auth import Principal
from server.companions import Companion
from server.jackpots import JackpotCompanion
from server.kinds.base import GameKind, TableInfo, Timer, staff_check
from server.kinds.shoe_secret import ShoeRevealed, ShoeSecret, new_shoe, random_cut, revealed
from server.kinds.tournament_table import TournamentTableCompanion
from server.store.limits import TableLimits

# The console's commands: those the engine's phase table gives no player (``phases.WHO``).
# A player may send any other, for himself only (the engine checks the seat, the box and the
# turn against his actor); staff send those only for floor players at live tables (the
# engine refuses anything else).
STAFF_COMMANDS = tuple(cls for cls, who in WHO.items() if "player" not in who.roles)
_PLAYER_COMMANDS = tuple(cls for cls in get_args(C.Command) if cls not in STAFF_COMMANDS)
# On an RNG table the server deals and only players play: the console sends none of the
# players' commands (no floor player comes to an RNG table) but the house's cut; and no card
# is misdealt, misdrawn or turned in a shoe nobody touches (so nothing for the console to
# enter, void, burn or expose after seeing the cards). The console may still shuffle, cut for
# the house, close bets and offers, change limits and close.
RNG_ONLY_SERVER = (*(cls for cls in _PLAYER_COMMANDS if cls is not C.Cut),
                   C.Card, C.CutCardOut, C.VoidRound, C.BurnCard, C.ExposeCard, C.MarkUnclaimed)
# The server's own: the pool's meters, and freeing the seat of a player gone for the house's
# time (no console may cancel a connected player's bets by freeing his seat).
SERVER_ONLY = (C.JackpotMeters, C.ReleaseSeat)
# A tournament's orders: the server relays its coordinator's (``server.tournaments``).
TOURNAMENT_ORDERS = (C.TournamentSeat, C.TournamentPause, C.TournamentExpel, C.TournamentEnd)
SERVER_ONLY += TOURNAMENT_ORDERS
_TAGS = {cls: str(cls.__struct_config__.tag) for cls in (*STAFF_COMMANDS, *RNG_ONLY_SERVER)}


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
    event_type = (E.Event | ShoeRevealed | pool.RoundEntered | pool.JackpotContributed | pool.JackpotSeeded
                  | pool.JackpotWon | pool.JackpotPaid)
    state_type = TableState
    profiles = tuple(BUILTIN)
    # A tournament's table: ``tournament`` (its id; the table plays in points, PTS) and
    # ``decks`` (the tournament's shoe, the profile's cut card scaled to it).
    settings_keys = ("min_bet", "max_bet", "tournament", "decks")

    def default_currency(self, profile: str) -> str:
        return load_profile(profile).currency

    @staticmethod
    def _profile(table: TableInfo) -> Any:
        """The table's rules: its house's profile, in its currency, with its shoe."""
        p = load_profile(table.profile)
        if p.currency != table.currency:
            p = msgspec.structs.replace(p, currency=table.currency)
        decks = table.settings.get("decks", p.decks)
        if type(decks) is not int or not max(p.min_decks, 1) <= decks <= 8:
            raise GameError("invalid_settings", f"decks is a whole number of decks, {p.min_decks} to 8.")
        if decks != p.decks:  # the cut card as far from the end, in proportion
            p = msgspec.structs.replace(p, decks=decks, cut_card_from_end=p.cut_card_from_end * decks // p.decks)
        return p

    def new_engine(self, table: TableInfo) -> BlackjackTable:
        p = self._profile(table)
        self.accounts(table)  # points exactly at a tournament's table (``server.money.accounts_for``)
        tournament = "tournament" in table.settings
        cur = currency(table.currency)
        s = table.settings
        min_bet = s.get("min_bet", cur.units(10))
        max_bet = s.get("max_bet", cur.units(100))
        if type(min_bet) is not int or type(max_bet) is not int:
            raise GameError("invalid_settings", "min_bet and max_bet are whole amounts in minor units.")
        return ServerTable(table.id, p, min_bet=min_bet, max_bet=max_bet, live=table.mode == "live",
                           tournament=tournament)

    def load(self, state: bytes) -> ServerTable:
        try:
            # (an old ``need`` would be dropped silently as an unknown field: upgrade it)
            saved = _upgraded(state) if b'"need"' in state else _persisted_decoder.decode(state)
        except msgspec.ValidationError:  # an older layout: upgraded below
            saved = _upgraded(state)
        engine = ServerTable.from_state(saved.engine)
        engine.shoe = saved.shoe
        return engine

    def dump(self, engine: ServerTable) -> bytes:
        return msgspec.json.encode(_Persisted(engine.state, engine.shoe))

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

    def draw(self, engine: ServerTable, command: Any) -> Any:
        s: TableState = engine.state
        if isinstance(command, C.Shuffle) and not s.live and not command.order:
            # An RNG table's new shoe, drawn here. Mid-round every card not on the table goes
            # back into the shoe.
            secret = new_shoe(s.profile, cards_on_table(s) if s.phase == Phase.RESHUFFLE else None)
            return msgspec.structs.replace(command, order=secret.order, salt=secret.salt)
        return command

    def engine_events(self, engine: ServerTable, command: Any, actor: Actor) -> list[Any]:
        s: TableState = engine.state
        command = self.draw(engine, command)  # (drawn already when the runtime applies it)
        secret = None
        if isinstance(command, C.Shuffle) and not s.live:
            # An RNG table's shoe: its order and salt stay the server's secret until its end.
            secret = ShoeSecret(commitment(command.order, command.salt), command.salt, command.order)
        events: list[Any] = list(engine.handle(command, actor))
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
        return revealed(shoe)

    def _random_cut(self, table: TableInfo) -> int:
        p = self._profile(table)  # (the table's shoe: a tournament's may be smaller than its house's)
        return random_cut(p, p.cards)

    def next_timer(self, engine: BlackjackTable, table: TableInfo, settings: Any) -> Timer | None:
        s: TableState = engine.state
        r = s.round
        # Decisions time out on every table: the default action is sent as a command.
        if s.phase == Phase.OFFERS:
            return Timer(f"offers:{r}", settings.decision_seconds, C.DeclineOffer(box=0))
        if s.phase == Phase.PLAY and s.behind:
            box = s.boxes[s.turn_box].number
            cmd = (C.BehindDouble(box=box, accept=False) if s.behind_action == "double"
                   else C.BehindSplit(box=box, choice="first"))
            return Timer(f"behind:{r}:{box}:{s.turn_hand}", settings.decision_seconds, cmd)
        if s.phase == Phase.PLAY and not s.deal_queue and s.turn_box < len(s.boxes):
            box_ = s.boxes[s.turn_box]
            hand = box_.hands[s.turn_hand]
            return Timer(f"turn:{r}:{box_.number}:{s.turn_hand}:{len(hand.cards)}", settings.decision_seconds,
                         C.Stand(box=box_.number, hand=s.turn_hand))
        if s.phase == Phase.CUT and s.cut_entitled:
            # A silent player passes the cut: to the next on his left (Campione Art. 30) or the house.
            return Timer(f"cut:{r}:{s.cut_entitled}", settings.decision_seconds, C.PassCut())
        t = s.tournament
        if s.tournament_table and (t is None or t.done or t.paused):
            return None  # between phases, or paused: nothing is dealt (decisions above still time out)
        if table.mode != "rng":
            return None
        # An RNG table's croupier is the server: it shuffles, cuts for the house and closes the bets.
        if s.phase in (Phase.SHUFFLE, Phase.RESHUFFLE):
            return Timer(f"shuffle:{r}:{s.phase}", 0.0, C.Shuffle())
        if s.phase == Phase.CUT:
            return Timer(f"cut:{r}", 0.0, lambda: C.Cut(random_at=self._random_cut(table)))
        if s.phase == Phase.BETTING and t is not None:
            # Art. 27: every hand is played; who has not bet when the window closes is charged
            # the minimum. Once everyone in has bet, there is nothing to wait for.
            if {b.player for b in s.bets} >= set(t.stacks):
                return Timer(f"close-all:{r}", 0.0, C.CloseBets())
            return Timer(f"close:{r}", settings.betting_seconds, C.CloseBets())
        if s.phase == Phase.BETTING and s.bets:
            return Timer(f"close:{r}", settings.betting_seconds, C.CloseBets())
        return None

    def recover(self, engine: BlackjackTable, table: TableInfo) -> tuple[list[Any], str]:
        s: TableState = engine.state
        if s.phase in ROUND_PHASES:
            return ([C.VoidRound(reason="the server stopped during the round")],
                    f"round {s.round} void: every stake of the round is returned")
        return [], ""

    def current_limits(self, engine: BlackjackTable, table: TableInfo) -> TableLimits:
        s: TableState = engine.state
        return TableLimits(table.currency, s.min_bet, s.max_bet)

    def limits_changes(self, events: list[Any], table: TableInfo) -> list[tuple[Any, int, str, str]]:
        return [(TableLimits(table.currency, e.min_bet, e.max_bet), e.from_round, e.by, e.reason)
                for e in events if isinstance(e, E.LimitsChanged)]

    def limits_command(self, engine: BlackjackTable, who: Principal, minimum: int, maximum: int | None,
                       maxima: dict[str, int] | None, reason: str) -> Any:
        if maximum is None:
            raise GameError("invalid_limits", "A blackjack table needs a minimum and a maximum.")
        if maxima:
            raise GameError("invalid_limits", "A blackjack table has one minimum and one maximum, no 'maxima'.")
        return C.SetLimits(min_bet=minimum, max_bet=maximum, reason=reason)

    def seated(self, engine: BlackjackTable) -> list[str]:
        return [p for p in engine.state.seats[1:] if p]

    def release_command(self, engine: BlackjackTable, table: TableInfo, player: str) -> Any:
        s: TableState = engine.state
        # At a tournament table an absent player keeps his drawn seat and is charged (Art. 27).
        if s.tournament_table or player not in s.seats[1:] or s.phase in ROUND_PHASES:
            return None
        return C.ReleaseSeat(box=s.seats.index(player, 1), reason="the player left the table")

    def close_command(self, engine: BlackjackTable, who: Principal, reason: str) -> Any:
        if engine.state.phase == Phase.CLOSED:
            return None
        return C.CloseTable(reason=reason)

    def companions(self, runtime: Any) -> list[Companion]:
        info: TableInfo = runtime.info
        out: list[Companion] = []
        if load_profile(info.profile).blazing_7s is not None:
            out.append(JackpotCompanion(runtime))
        if "tournament" in info.settings:
            out.append(TournamentTableCompanion(runtime))
        return out

    def meters_command(self, table: TableInfo, minor: int, major: int) -> Any:
        return C.JackpotMeters(minor=minor, major=major)

    def open_wagers(self, engine: BlackjackTable) -> list[str]:
        s: TableState = engine.state
        out = [b.wager for b in s.bets] + [b.wager for b in s.side_bets]
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


    def view(self, engine: BlackjackTable, who: Principal | None) -> TableView:
        """What ``who`` sees, with the commands he may send now: the engine's rules, less
        what the server keeps to itself (the console's commands from a player, an RNG
        table's dealing from the staff, the server's own from anyone). Staff must also be
        assigned to the table (``staff_check``), which the view does not know."""
        view = engine.view(who.id if who else None)
        if who is None or who.role not in ROLES:
            return view
        legal = engine.legal_commands(self.actor(who))
        if who.role == "player":
            hidden = set(STAFF_COMMANDS)
        else:
            hidden = set(SERVER_ONLY) if who.role != "system" else set()
            if not engine.state.live:
                hidden |= set(RNG_ONLY_SERVER)
        tags = {_TAGS[c] for c in hidden}
        view.legal = [t for t in legal if t not in tags]
        return view


_persisted_decoder = msgspec.json.Decoder(_Persisted)


def _upgraded(state: bytes) -> _Persisted:
    """A state saved before the shoe's secret was kept beside it, or before card targets
    and offers had their own types (``need``: box index * 8 + hand, -1 the dealer, -2 the
    hole card; ``offers``: "player@box")."""
    raw = msgspec.json.decode(state)
    if "engine" not in raw:
        raw = {"engine": raw}
    engine = raw["engine"]
    if "need" in engine:
        numbers = [b["number"] for b in engine.get("boxes", [])]
        engine["deal_queue"] = [
            {"box": 0, "hole": t == -2} if t < 0 else {"box": numbers[t >> 3], "hand": t & 7}
            for t in engine.pop("need")
        ]
    engine["offers"] = [
        {"player": o[: o.rindex("@")], "box": int(o[o.rindex("@") + 1:])} if isinstance(o, str) else o
        for o in engine.get("offers", [])
    ]
    return msgspec.convert(raw, _Persisted)

KIND = BlackjackKind()
