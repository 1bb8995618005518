"""The roulette table: the one place that owns its transitions.

closed -> open ("faites vos jeux") -> launched -> no_more_bets ("rien ne va plus")
-> settled (the result settles at once) -> open ... ; "rien va" takes launched or
no_more_bets back to open with every bet in place; suspend/close return every bet.

Every handler validates first and mutates last, so a refused command (GameError)
leaves the state exactly as it was.

Only a player stakes his own money: a player's command acts for himself alone; staff
(croupier, chef, director) place, restate, withdraw, split, move, set preferences or
record unclaimed chips only for floor players (``games.players``: cash chips on a live
felt), and only at a live table.
"""

from __future__ import annotations

from collections import defaultdict
from typing import Any, NamedTuple

import msgspec

from games.errors import GameError
from games.money import currency
from games.players import FLOOR_PREFIX, is_floor
from games.validation import ENTERED_MAX_FACTOR, validated
from games.wagers import ChipsUnclaimed, WagerPlaced, WagerSettled, WagerVoided

from . import commands as C
from . import events as E
from .announced import parse_announced
from .layout import KIND_BY_NAME, KIND_LABELS, KINDS, colour, parse_spot
from .limits import TableSettings, check_settings, default_settings, regulation_maximum
from .settlement import PRISON, PRISON_STAYS, partage_return, settle
from .state import Actor, Bet, LateBet, RouletteState, Stake

ROLE_RANK = {"player": 0, "croupier": 1, "chef": 2, "director": 3}
ROLE_LABEL = {"croupier": "croupier", "chef": "chef de table", "director": "director of games"}
LAST_NUMBERS = 20
# Where an imprisoned bet may still be moved or split: "before the next spin closes".
PRISON_CHOICE_PHASES = ("settled", "open", "launched")


class TableView(msgspec.Struct, frozen=True):
    """What anyone at the table sees: every bet on the layout, as at a real table."""

    table: str
    phase: str
    spin: int
    settings: TableSettings
    pending_settings: TableSettings | None
    bets: list[Bet]
    prisoners: list[str]
    late: list[LateBet]
    last_numbers: list[int]
    derniere: bool
    derniere_spin: int  # the announced last spin, 0 if none
    societa: dict[str, list[str]]
    viewer: str | None
    viewer_staked: int
    viewer_partage: bool


class _Piece(NamedTuple):
    spot: str
    units: int  # 0 for a direct bet
    amount: int
    excess: int
    maximum: int


class _Plan(NamedTuple):
    stake: Stake
    pieces: list[_Piece]


class RouletteTable:
    def __init__(self, table: str = "roulette", settings: TableSettings | None = None) -> None:
        settings = settings or default_settings()
        check_settings(settings)
        self.state = RouletteState(table=table, settings=settings)
        self._reindex()

    @classmethod
    def from_state(cls, state: RouletteState) -> RouletteTable:
        self = cls.__new__(cls)
        self.state = state
        self._reindex()
        return self

    def _reindex(self) -> None:
        # Derived, never persisted: chips per (player, spot) and each player's società.
        self._totals: defaultdict[tuple[str, str], int] = defaultdict(int)
        for b in self.state.bets:
            self._totals[(b.player, b.spot)] += b.amount
        self._group = {m: ms for ms in self.state.societa.values() for m in ms}

    # ------------------------------------------------------------ public API

    def handle(self, command: Any) -> list[Any]:
        handler = _HANDLERS.get(type(command))
        if handler is None:
            raise GameError("unknown_command", f"A roulette table cannot do {type(command).__name__}.")
        by = getattr(command, "by", None)
        if not isinstance(by, Actor) or by.role not in ROLE_RANK or not isinstance(by.id, str) or not by.id:
            raise GameError("not_allowed", "Every command must name who gives it and their role.")
        if by.role == "player" and by.id.startswith(FLOOR_PREFIX):
            raise GameError(
                "not_allowed", "A floor player has no account to play from: the table's staff enter floor chips."
            )
        _precise(command)
        return handler(self, _validated(command))

    def view(self, viewer: str | None = None) -> TableView:
        s = self.state
        return TableView(
            table=s.table,
            phase=s.phase,
            spin=s.spin,
            settings=s.settings,
            pending_settings=s.pending_settings,
            bets=list(s.bets),
            prisoners=[b.wager for b in s.bets if b.prison],
            late=list(s.late),
            last_numbers=list(s.last_numbers),
            derniere=s.derniere_spin != 0,
            derniere_spin=s.derniere_spin,
            societa={k: list(v) for k, v in s.societa.items()},
            viewer=viewer,
            viewer_staked=sum(b.amount for b in s.bets if b.player == viewer),
            viewer_partage=viewer in s.partage_players,
        )

    # ------------------------------------------------------------ helpers

    def _fmt(self, amount: int) -> str:
        return currency(self.state.settings.currency).format(amount)

    def _next_id(self, prefix: str) -> str:
        self.state.seq += 1
        return f"s{self.state.spin}-{prefix}{self.state.seq}"

    def _find(self, wager: str) -> Bet:
        for b in self.state.bets:
            if b.wager == wager:
                return b
        raise GameError("unknown_wager", f"There is no bet {wager!r} on this table.", wager=wager)

    def _members(self, player: str) -> list[str]:
        return self._group.get(player, [player])

    def _held(self, player: str, spot: str) -> int:
        """Chips on ``spot`` that count toward ``player``'s maximum: theirs and their
        società's, prisoners included (Art. 3, 6-7)."""
        return sum(self._totals.get((m, spot), 0) for m in self._members(player))

    def _acting_for(self, by: Actor, player: str, mine_only: str) -> None:
        """Only a player stakes his own money: a player acts for himself alone (else
        ``mine_only``); staff act only for a floor player, and only at a live table."""
        if by.role == "player":
            if by.id != player:
                raise GameError("not_allowed", mine_only)
            return
        if not is_floor(player):
            raise GameError(
                "floor_only",
                f"{player!r} is not a floor player: only his own commands move an online player's "
                "chips; staff enter chips only for floor players (floor:<label>).",
                player=player,
            )
        if not self.state.settings.live:
            raise GameError(
                "rng_table", "This is an RNG table: there are no floor players and no chips for staff to enter."
            )

    def _bet_phase(self, late_ok: bool = True) -> None:
        phase = self.state.phase
        if phase == "open" or (late_ok and phase == "launched"):
            return
        if phase == "closed":
            raise GameError("table_closed", "The table is closed: no bets.")
        if phase == "suspended":
            raise GameError("table_suspended", "Play at this table is suspended: no bets.")
        if phase == "no_more_bets":
            raise GameError("wrong_phase", "Rien ne va plus: nothing can be placed or taken back now.")
        if phase == "launched":
            raise GameError("wrong_phase", "The ball is running: bets can no longer be taken back.")
        raise GameError("wrong_phase", "Wait for \"faites vos jeux\" before betting.")

    def _plan(self, by: Actor, player: str, stakes: list[Stake]) -> list[_Plan]:
        """Validate stakes against the layout, the minimum and the maxima (Art. 5-8)."""
        st = self.state.settings
        staff = by.role != "player"
        members = self._members(player)
        added: defaultdict[str, int] = defaultdict(int)
        plans: list[_Plan] = []
        for stake in stakes:
            _check_amount(stake.amount)
            if stake.announced:
                ann = parse_announced(stake.spot)
                if stake.amount < st.minimum:
                    raise GameError(
                        "below_minimum",
                        f"Each piece of {ann.name} must be at least the table minimum of "
                        f"{self._fmt(st.minimum)}: announce a unit of at least that.",
                        minimum=st.minimum,
                    )
                raw = [(p.spot, p.units, p.units * stake.amount) for p in ann.pieces]
                canonical = Stake(ann.name, stake.amount, True)
            else:
                combo = parse_spot(stake.spot)
                if stake.amount < st.minimum:
                    raise GameError(
                        "below_minimum",
                        f"The table minimum is {self._fmt(st.minimum)}.",
                        minimum=st.minimum,
                    )
                raw = [(combo.name, 0, stake.amount)]
                canonical = Stake(combo.name, stake.amount, False)
            pieces: list[_Piece] = []
            for spot, units, amount in raw:
                maximum = st.maximum(KIND_BY_NAME[spot])
                have = added[spot] + self._held(player, spot)
                room = max(0, maximum - have)
                excess = 0
                limit = ENTERED_MAX_FACTOR * maximum
                if staff and amount > limit:
                    raise GameError(
                        "above_entry_limit",
                        f"{self._fmt(amount)} on {spot} is more than {ENTERED_MAX_FACTOR} times its maximum "
                        f"of {self._fmt(maximum)}: enter at most {self._fmt(limit)} (a pile above the maximum "
                        "plays on the maximum and the excess is returned, Art. 8).",
                        spot=spot, maximum=maximum, limit=limit,
                    )
                if amount > room:
                    if not staff:
                        raise self._over_max(canonical, spot, units, amount, room, maximum, members)
                    excess = amount - room  # Art. 8: plays on the maximum, excess returned
                added[spot] += amount
                pieces.append(_Piece(spot, units, amount, excess, maximum))
            plans.append(_Plan(canonical, pieces))
        return plans

    def _over_max(self, stake, spot, units, amount, room, maximum, members) -> GameError:
        who = "you and your società have" if len(members) > 1 else "you have"
        if stake.announced:
            msg = (
                f"{stake.spot} puts {self._fmt(amount)} on {spot}, where {who} "
                f"{self._fmt(room)} left under the maximum of {self._fmt(maximum)}."
            )
        else:
            msg = (
                f"The maximum on {spot} is {self._fmt(maximum)} per player per spin; "
                f"{who} {self._fmt(room)} left on it."
            )
        return GameError("over_maximum", msg, spot=spot, room=room, maximum=maximum, units=units)

    def _apply(self, by: Actor, player: str, plans: list[_Plan]) -> list[Any]:
        s = self.state
        out: list[Any] = []
        mine = s.placed.setdefault(player, [])
        for plan in plans:
            announce = self._next_id("a") if plan.stake.announced else ""
            pieces: list[E.Piece] = []
            evs: list[Any] = []
            for p in plan.pieces:
                wager = self._next_id("w")
                s.bets.append(Bet(wager, player, p.spot, p.amount, s.spin, p.excess, by.id, announce))
                self._totals[(player, p.spot)] += p.amount
                pieces.append(E.Piece(p.spot, p.units, p.amount, wager))
                evs.append(WagerPlaced(wager, player, p.amount, p.spot))
                if p.excess:
                    evs.append(E.OverMaximumEntered(wager, player, p.spot, p.maximum, p.excess, by.id))
            if announce:
                total = sum(p.amount for p in plan.pieces)
                out.append(
                    E.AnnouncedBetPlaced(announce, player, plan.stake.spot, plan.stake.amount, total, pieces)
                )
            out += evs
            mine.append(msgspec.structs.replace(plan.stake, ref=announce or pieces[0].wager))
        return out

    def _request(self, by: Actor, player: str, stakes: list[Stake], lead: list[Any]) -> list[Any]:
        """Place now while bets are open; after the launch, wait for the chef (Art. 9),
        at a live table only: an RNG table has no chef to accept a late bet. (A missing player:
        ``_precise``, before any handler.)"""
        self._acting_for(by, player, "You can only place bets for yourself.")
        self._bet_phase()
        if self.state.phase == "launched" and not self.state.settings.live:
            raise GameError(
                "no_more_bets", "The ball is running: an RNG table takes no late bets (Art. 9 needs a chef de table)."
            )
        plans = self._plan(by, player, stakes)
        if self.state.phase == "launched":
            late = LateBet(self._next_id("l"), player, by, [p.stake for p in plans])
            self.state.late.append(late)
            return lead + [E.LateBetPending(late.late, player, late.stakes, by.id)]
        return lead + self._apply(by, player, plans)

    def _remove(self, gone: set[str]) -> None:
        keep = []
        for b in self.state.bets:
            if b.wager in gone:
                self._totals[(b.player, b.spot)] -= b.amount
            else:
                keep.append(b)
        self.state.bets = keep

    def _refuse_all_late(self, reason: str) -> list[Any]:
        out = [E.LateBetRefused(late.late, late.player, reason) for late in self.state.late]
        self.state.late = []
        return out

    def _return_everything(self, reason: str) -> list[Any]:
        s = self.state
        out = self._refuse_all_late(reason)
        out += [WagerVoided(b.wager, b.player, b.amount, reason) for b in s.bets]
        s.bets = []
        s.placed = {}
        self._totals.clear()
        return out

    # ------------------------------------------------------------ handlers

    def _open_spin(self, c: C.OpenSpin) -> list[Any]:
        _need(c.by, "croupier", "open the table for bets")
        s = self.state
        if s.phase == "suspended":  # Art. 15: the Direzione suspended it; it alone resumes play
            _need(c.by, "director", "resume a suspended table")
        if s.phase not in ("closed", "suspended", "settled"):
            raise GameError("wrong_phase", "Bets are already open or the spin is not settled yet.")
        s.spin += 1
        if s.pending_settings is not None:
            s.settings, s.pending_settings = s.pending_settings, None
        s.phase = "open"
        s.last_paid = {}
        return [E.SpinOpened(s.spin, s.settings, [b.wager for b in s.bets if b.prison])]

    def _place_bet(self, c: C.PlaceBet) -> list[Any]:
        return self._request(c.by, c.player, [Stake(c.spot, c.amount)], [])

    def _place_announced(self, c: C.PlaceAnnounced) -> list[Any]:
        return self._request(c.by, c.player, [Stake(c.announce, c.unit, True)], [])

    def _same_again(self, c: C.SameAgain) -> list[Any]:
        self._acting_for(c.by, c.player, "You can only restate your own bets.")
        previous = self.state.previous.get(c.player)
        if not previous:
            raise GameError("no_previous_bets", "There are no bets of yours from the previous spin to repeat.")
        stakes = [Stake(st.spot, st.amount, st.announced) for st in previous]
        return self._request(c.by, c.player, stakes, [E.BetsRestated(c.player, stakes)])

    def _withdraw_bet(self, c: C.WithdrawBet) -> list[Any]:
        s = self.state
        b = self._find(c.wager)
        self._acting_for(c.by, b.player, "That bet is not yours.")
        if b.prison:
            raise GameError(
                "imprisoned",
                "An imprisoned bet cannot be taken back: choose partage or move it to another simple chance.",
            )
        self._bet_phase(late_ok=False)  # Art. 12: nothing comes back once the ball runs
        group = [x for x in s.bets if b.announce and x.announce == b.announce] or [b]
        self._remove({x.wager for x in group})
        ref = b.announce or b.wager
        if b.player in s.placed:
            s.placed[b.player] = [st for st in s.placed[b.player] if st.ref != ref]
        return [WagerVoided(x.wager, x.player, x.amount, "withdrawn") for x in group]

    def _launch_ball(self, c: C.LaunchBall) -> list[Any]:
        _need(c.by, "croupier", "launch the ball")
        if self.state.phase != "open":
            raise GameError("wrong_phase", "The ball can only be launched while bets are open.")
        self.state.phase = "launched"
        return [E.BallLaunched(self.state.spin)]

    def _find_late(self, late_id: str) -> LateBet:
        if self.state.phase != "launched":
            raise GameError("wrong_phase", "Late bets are decided only while the ball is running.")
        for late in self.state.late:
            if late.late == late_id:
                return late
        raise GameError("unknown_late_bet", f"There is no late bet {late_id!r} waiting.", late=late_id)

    def _accept_late(self, c: C.AcceptLate) -> list[Any]:
        _need(c.by, "chef", "accept a late bet")
        late = self._find_late(c.late)
        plans = self._plan(late.entered_by, late.player, late.stakes)
        self.state.late = [x for x in self.state.late if x.late != c.late]
        return [E.LateBetAccepted(late.late, late.player, c.by.id)] + self._apply(
            late.entered_by, late.player, plans
        )

    def _refuse_late(self, c: C.RefuseLate) -> list[Any]:
        _need(c.by, "chef", "refuse a late bet")
        late = self._find_late(c.late)
        self.state.late = [x for x in self.state.late if x.late != c.late]
        return [E.LateBetRefused(late.late, late.player, c.reason or "refused by the chef de table", c.by.id)]

    def _no_more_bets(self, c: C.NoMoreBets) -> list[Any]:
        _need(c.by, "croupier", "call rien ne va plus")
        if self.state.phase != "launched":
            raise GameError("wrong_phase", "Rien ne va plus is called while the ball is running.")
        out: list[Any] = [E.BetsClosed(self.state.spin)]
        out += self._refuse_all_late("rien ne va plus before the chef decided")
        self.state.phase = "no_more_bets"
        return out

    def _void(self, reason: str) -> list[Any]:
        out: list[Any] = [E.SpinVoided(self.state.spin, reason)]
        out += self._refuse_all_late("spin void")
        self.state.phase = "open"
        return out

    def _void_spin(self, c: C.VoidSpin) -> list[Any]:
        _need(c.by, "chef", "declare the spin void")
        if self.state.phase not in ("launched", "no_more_bets"):
            raise GameError("wrong_phase", "Only a spin whose ball is running can be declared void.")
        if not c.reason:
            raise GameError("missing_reason", "Say why the spin is void (Art. 11).")
        return self._void(c.reason)

    def _result(self, c: C.Result) -> list[Any]:
        _need(c.by, "croupier", "enter the result")
        s = self.state
        if s.phase != "no_more_bets":
            raise GameError("wrong_phase", "The result is entered after rien ne va plus.")
        if not 0 <= c.number <= 36:  # (its type: _precise, before any handler)
            raise GameError("number_out_of_range", f"{c.number!r} is not a number of this wheel (0-36).")
        if c.turns is not None and c.turns < 3:
            return self._void(f"the ball made {c.turns} turns, fewer than three (Art. 10)")
        if c.ball_direction == "same":
            return self._void("the ball turned the same way as the wheel (Art. 10)")
        number = c.number
        policy = s.settings.prison_on_zero
        partage = frozenset(s.partage_players)
        last = s.derniere_spin == s.spin
        outcomes = settle(s.bets, number, policy, partage, last=last)
        out: list[Any] = [
            E.SpinResult(
                s.spin, number, colour(number), c.source, s.bets, policy, sorted(partage), last
            )
        ]
        remaining: list[Bet] = []
        paid: defaultdict[str, int] = defaultdict(int)
        staked = returned = won = 0
        append = out.append
        for b, result, ret, win in outcomes:
            if result == PRISON:
                remaining.append(msgspec.structs.replace(b, prison=True))
                append(E.WagerImprisoned(b.wager, b.player, b.spot, s.spin))
            elif result == PRISON_STAYS:
                remaining.append(b)
                append(E.PrisonerStays(b.wager, b.player, b.spot, s.spin))
            else:
                append(WagerSettled(b.wager, b.player, b.amount, ret, win, result))
                staked += b.amount
                returned += ret
                won += win
                paid[b.player] += ret + win
        out.append(E.SpinSettled(s.spin, number, staked, returned, won))
        s.bets = remaining
        self._reindex()
        s.previous = s.placed
        s.placed = {}
        s.last_numbers = ([number] + s.last_numbers)[:LAST_NUMBERS]
        s.last_paid = {p: v for p, v in paid.items() if v}
        s.phase = "settled"
        if last:  # settle() left no prisoner: the table closes empty
            s.derniere_spin = 0
            s.phase = "closed"
            out.append(E.TableClosed(s.spin, "la dernière", c.by.id))
        return out

    def _last_spin(self, c: C.LastSpin) -> list[Any]:
        _need(c.by, "croupier", "announce la dernière")
        s = self.state
        if s.phase in ("closed", "suspended"):
            raise GameError("table_closed", "The table is not playing.")
        if s.derniere_spin:
            raise GameError("already_announced", "La dernière has already been announced.")
        # Art. 14: announced before the players bet on it, so once the ball runs the
        # last spin is the next one.
        s.derniere_spin = s.spin if s.phase == "open" else s.spin + 1
        return [E.LastSpinAnnounced(s.derniere_spin)]

    def _suspend(self, c: C.Suspend) -> list[Any]:
        authorised_by = _direzione(c.by, c.authorised_by, "suspend the table")
        s = self.state
        if s.phase in ("closed", "suspended"):
            raise GameError("wrong_phase", "The table is not playing.")
        out = self._return_everything("table suspended")
        s.phase = "suspended"
        s.derniere_spin = 0
        return out + [E.TableSuspended(s.spin, c.reason, c.by.id, authorised_by)]

    def _close_table(self, c: C.CloseTable) -> list[Any]:
        authorised_by = _direzione(c.by, c.authorised_by, "close the table")
        s = self.state
        if s.phase == "closed":
            raise GameError("table_closed", "The table is already closed.")
        out = self._return_everything("table closed")
        s.phase = "closed"
        s.derniere_spin = 0
        return out + [E.TableClosed(s.spin, c.reason, c.by.id, authorised_by)]

    def _prisoner(self, by: Actor, wager: str) -> Bet:
        b = self._find(wager)
        self._acting_for(by, b.player, "That bet is not yours.")
        if not b.prison:
            raise GameError("not_imprisoned", f"Bet {wager} is not en prison.", wager=wager)
        if self.state.phase not in PRISON_CHOICE_PHASES:
            raise GameError("wrong_phase", "Rien ne va plus: the imprisoned bet plays this spin as it stands.")
        return b

    def _choose_partage(self, c: C.ChoosePartage) -> list[Any]:
        b = self._prisoner(c.by, c.wager)
        self._remove({b.wager})
        return [WagerSettled(b.wager, b.player, b.amount, partage_return(b), 0, "partage")]

    def _move_prisoner(self, c: C.MovePrisoner) -> list[Any]:
        b = self._prisoner(c.by, c.wager)
        target = parse_spot(c.to)
        if not target.simple:
            raise GameError("not_simple_chance", "An imprisoned bet can only move to another simple chance.")
        if target.name == b.spot:
            raise GameError("same_spot", f"The bet is already on {b.spot}.")
        maximum = self.state.settings.maximum("simple")
        have = self._held(b.player, target.name)
        if have + b.amount - b.excess > maximum:
            room = max(0, maximum - have)
            raise GameError(
                "over_maximum",
                f"Moving it would put you over the maximum of {self._fmt(maximum)} on "
                f"{target.name}; {self._fmt(room)} is left there.",
                spot=target.name, room=room, maximum=maximum,
            )
        self._remove({b.wager})
        moved = msgspec.structs.replace(b, spot=target.name)
        self.state.bets.append(moved)
        self._totals[(b.player, target.name)] += b.amount
        return [E.PrisonerMoved(b.wager, b.player, b.spot, target.name)]

    def _set_partage(self, c: C.SetPartagePreference) -> list[Any]:
        self._acting_for(c.by, c.player, "You can only set your own preference.")
        players = set(self.state.partage_players)
        players.add(c.player) if c.partage else players.discard(c.player)
        self.state.partage_players = sorted(players)
        return [E.PartagePreferenceSet(c.player, c.partage)]

    def _register_societa(self, c: C.RegisterSocieta) -> list[Any]:
        _need(c.by, "chef", "register a società")
        s = self.state
        members = list(dict.fromkeys(c.members))
        if not c.name or c.name in s.societa:
            raise GameError("invalid_societa", "A società needs a name not already registered here.")
        if len(members) < 2 or not all(isinstance(m, str) and m for m in members):
            raise GameError("invalid_societa", "A società has at least two players.")
        already = [m for m in members if m in self._group]
        if already:
            raise GameError("invalid_societa", f"{', '.join(already)} already play in a società.")
        together: defaultdict[str, int] = defaultdict(int)
        for b in s.bets:
            if b.player in members:
                together[b.spot] += b.amount - b.excess
        for spot, amount in together.items():
            maximum = s.settings.maximum(KIND_BY_NAME[spot])
            if amount > maximum:
                raise GameError(
                    "societa_over_maximum",
                    f"Together these players already have {self._fmt(amount)} on {spot}, over the "
                    f"maximum of {self._fmt(maximum)} (Art. 7).",
                    spot=spot,
                )
        s.societa[c.name] = members
        self._reindex()
        return [E.SocietaRegistered(c.name, members, c.by.id)]

    def _change_settings(self, c: C.ChangeSettings) -> list[Any]:
        _need(c.by, "director", "change the table's limits")
        if not isinstance(c.settings, TableSettings):
            raise GameError("invalid_settings", "Settings are a TableSettings.")
        check_settings(c.settings)
        if c.settings.currency != self.state.settings.currency:
            raise GameError("invalid_settings", "A table's currency cannot change.")
        if c.settings.live != self.state.settings.live:
            raise GameError("invalid_settings", "Whether a table is live or RNG cannot change.")
        base = self.state.pending_settings or self.state.settings
        if (c.settings.raised, c.settings.raise_ceilings) != (base.raised, base.raise_ceilings):
            # Art. 5: a raise is agreed with the control service, so only RaiseLimit,
            # which names the officer, may grant one or move its ceiling.
            raise GameError(
                "missing_authorisation",
                "The plein and cheval raises are granted only as the director's raise naming "
                "the control officer (Art. 5), not with a settings change.",
            )
        for kind in KINDS:
            # Art. 5: maxima are fixed with the municipal administration; the director may
            # lower them, or raise them back up to the regulation's, no higher.
            ceiling = regulation_maximum(c.settings, kind)
            if c.settings.maximum_base(kind) > ceiling:
                label = KIND_LABELS[kind]
                beyond = (
                    "only the director's raise agreed with the control officer goes above it (RaiseLimit)"
                    if kind in c.settings.raise_ceilings
                    else "it cannot be raised"
                )
                raise GameError(
                    "above_regulation_maximum",
                    f"The regulation's maximum on {label} is {self._fmt(ceiling)} (Art. 5): a settings "
                    f"change may set up to that; {beyond}.",
                    kind=kind, ceiling=ceiling,
                )
        self.state.pending_settings = c.settings
        return [E.SettingsAnnounced(c.settings, self.state.spin + 1, c.by.id, c.reason)]

    def _raise_limit(self, c: C.RaiseLimit) -> list[Any]:
        _need(c.by, "director", "raise a maximum")
        s = self.state
        base = s.pending_settings or s.settings
        ceiling = base.raise_ceilings.get(c.kind)
        if ceiling is None:
            raise GameError("raise_not_allowed", f"The maximum on {c.kind} cannot be raised.")
        if not c.control_officer.strip():
            raise GameError(
                "missing_authorisation",
                "A raise is agreed with the municipal control service: name the officer (Art. 5).",
            )
        floor = base.maximum_base(c.kind)
        if type(c.maximum) is not int or not floor <= c.maximum <= ceiling:
            raise GameError(
                "raise_out_of_range",
                f"The {KIND_LABELS[c.kind]} maximum can be raised from {self._fmt(floor)} "
                f"up to {self._fmt(ceiling)}.",
                ceiling=ceiling,
            )
        raised = {k: v for k, v in base.raised.items() if k != c.kind}
        if c.maximum > floor:
            raised[c.kind] = c.maximum
        new = msgspec.structs.replace(base, raised=raised)
        s.pending_settings = new
        reason = c.reason or f"{KIND_LABELS[c.kind]} maximum raised"
        return [
            E.LimitRaised(c.kind, c.maximum, s.spin + 1, c.by.id, c.control_officer, reason),
            E.SettingsAnnounced(new, s.spin + 1, c.by.id, reason),
        ]

    def _mark_unclaimed(self, c: C.MarkUnclaimed) -> list[Any]:
        _need(c.by, "chef", "record unclaimed bets or wins")
        # Art. 19 takes physical chips off a live felt; an online player's wins are
        # already in his wallet and his bets are his own to withdraw.
        self._acting_for(c.by, c.player, "Only staff record unclaimed chips.")
        s = self.state
        # Wins stay claimable until the next spin opens, also once la dernière or the
        # director has closed the table right after the result.
        if s.phase in ("settled", "closed", "suspended"):
            amount = s.last_paid.get(c.player, 0)
            if not amount:
                raise GameError("nothing_unclaimed", f"{c.player} has no winnings from the last spin.")
            del s.last_paid[c.player]
            return [ChipsUnclaimed(c.player, s.spin, "wins", amount, [], c.by.id)]
        if s.phase == "open":
            bets = [b for b in s.bets if b.player == c.player and not b.prison]
            if not bets:
                raise GameError("nothing_unclaimed", f"{c.player} has no bets on the layout.")
            self._remove({b.wager for b in bets})
            s.placed.pop(c.player, None)
            out: list[Any] = [WagerVoided(b.wager, b.player, b.amount, "abandoned") for b in bets]
            out.append(
                ChipsUnclaimed(
                    c.player, s.spin, "bets", sum(b.amount for b in bets), [b.wager for b in bets], c.by.id
                )
            )
            return out
        raise GameError(
            "wrong_phase", "Abandoned bets are taken while bets are open; unclaimed wins after a settlement."
        )


def _need(by: Actor, role: str, what: str) -> None:
    if ROLE_RANK[by.role] < ROLE_RANK[role]:
        raise GameError("not_allowed", f"Only the {ROLE_LABEL[role]} may {what}.")


def _direzione(by: Actor, authorised_by: str, what: str) -> str:
    """Art. 15: suspending or closing is for the Direzione Giochi: the director, or a chef
    de table on the director's recorded authorisation. Returns who authorised it."""
    _need(by, "chef", what)
    if by.role == "director":
        return authorised_by or by.id
    if not authorised_by.strip():
        raise GameError(
            "missing_authorisation",
            f"Only the Direzione Giochi may {what} (Art. 15): name the director who authorised it.",
        )
    return authorised_by


def _precise(command: Any) -> None:
    """The engine's own codes for malformed values it has always named precisely (a
    fractional amount, a number off the wheel, no player); ``validated`` answers the rest
    with ``invalid_command``. The one place these are checked: it runs before any handler."""
    if isinstance(command, C.PlaceBet):
        _check_amount(command.amount)
    elif isinstance(command, C.PlaceAnnounced):
        _check_amount(command.unit)
    elif isinstance(command, C.Result):
        if type(command.number) is not int:
            raise GameError("number_out_of_range", f"{command.number!r} is not a number of this wheel (0-36).")
        if command.turns is not None and (type(command.turns) is not int or command.turns < 0):
            raise GameError("invalid_wheel_data", "Ball turns must be a whole number >= 0.")
        if command.ball_direction not in (None, "opposite", "same"):
            raise GameError("invalid_wheel_data", "Ball direction is 'opposite' or 'same'.")
    elif isinstance(command, C.SetPartagePreference) and type(command.partage) is not bool:
        raise GameError("invalid_preference", "Partage is on or off.")
    if isinstance(command, (C.PlaceBet, C.PlaceAnnounced, C.SameAgain, C.SetPartagePreference)):
        if not isinstance(command.player, str) or not command.player:
            raise GameError("unknown_player", "Name the player the command is for.")


def _validated(command: Any) -> Any:
    """``validated`` (every field's bounds), also for values msgspec cannot represent."""
    try:
        return validated(command)
    except (TypeError, ValueError, OverflowError) as exc:
        raise GameError("invalid_command", str(exc)) from None


def _check_amount(amount: Any) -> None:
    if type(amount) is not int:
        raise GameError(
            "invalid_amount", f"{amount!r} is not an amount: bets are whole numbers of the smallest unit."
        )
    if amount <= 0:
        raise GameError("invalid_amount", "A bet must be more than zero.")


_HANDLERS = {
    C.OpenSpin: RouletteTable._open_spin,
    C.PlaceBet: RouletteTable._place_bet,
    C.PlaceAnnounced: RouletteTable._place_announced,
    C.SameAgain: RouletteTable._same_again,
    C.WithdrawBet: RouletteTable._withdraw_bet,
    C.LaunchBall: RouletteTable._launch_ball,
    C.AcceptLate: RouletteTable._accept_late,
    C.RefuseLate: RouletteTable._refuse_late,
    C.NoMoreBets: RouletteTable._no_more_bets,
    C.Result: RouletteTable._result,
    C.VoidSpin: RouletteTable._void_spin,
    C.LastSpin: RouletteTable._last_spin,
    C.Suspend: RouletteTable._suspend,
    C.CloseTable: RouletteTable._close_table,
    C.ChoosePartage: RouletteTable._choose_partage,
    C.SetPartagePreference: RouletteTable._set_partage,
    C.MovePrisoner: RouletteTable._move_prisoner,
    C.RegisterSocieta: RouletteTable._register_societa,
    C.ChangeSettings: RouletteTable._change_settings,
    C.RaiseLimit: RouletteTable._raise_limit,
    C.MarkUnclaimed: RouletteTable._mark_unclaimed,
}
