"""The roulette table: the one place that applies its rules.

``RouletteTable.handle(command, actor)`` takes a command (commands.py) and the actor who
gives it (``games.commands.Actor``: the server takes it from the token) and returns the
events it caused (events.py, and the ``games.wagers`` money events). It decides in one
order, each step read from one place:

1. the actor: a role of the one vocabulary, never a floor id (``roles.actor_refusal``);
2. the fields: within their bounds (``commands.checked``);
3. who: may this role send the command to this table (``roles.refusal``; Art. 15's
   authorisation: ``roles.direzione``);
4. whose chips: the wager it names, a player's own or, for staff, a floor player's at a
   live table (``roles.acting_for``), and that the chips are there (``_chips``);
5. when: does the phase accept it (``phases.refusal``: the phase table);
6. what: the handler checks what the command asks for (amounts, maxima, the late bet or
   spot it names), then changes the state. Stakes are planned against the minimum and
   the maxima, then placed or left for the chef, in ``staking``.

Each step validates before anything changes and handlers mutate last, so a refused
command (GameError) leaves the state exactly as it was. ``legal_commands(actor)`` reads
steps 3 and 5: what an actor may send now.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import msgspec

from games.commands import Actor, checked_actor
from games.errors import GameError
from games.wagers import ChipsUnclaimed, WagerSettled, WagerVoided

from . import commands as C
from . import events as E
from . import fair, phases, roles, staking
from .layout import KIND_LABELS, colour, parse_spot
from .limits import TableSettings, check_change, check_settings, default_settings, raise_maximum
from .phases import Phase
from .settlement import PRISON, PRISON_STAYS, partage_return, settle
from .state import Bet, LateBet, RouletteState, Stake
from .view import TableView, table_view

if TYPE_CHECKING:
    from games.engine import Engine

__all__ = ["RouletteTable", "TableView"]

LAST_NUMBERS = 20
Events = list[E.Event]


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
        # Derived, never persisted: chips per (player, spot) and each player's società;
        # handed to ``staking``, which reads both and keeps the chips up to date.
        self._totals: defaultdict[tuple[str, str], int] = defaultdict(int)
        for b in self.state.bets:
            self._totals[(b.player, b.spot)] += b.amount
        self._group = {m: ms for ms in self.state.societa.values() for m in ms}

    # ------------------------------------------------------------ public API

    def handle(self, command: C.Command, actor: Actor) -> Events:
        """Apply ``command`` given by ``actor``: the events it caused, in order.

        :raises GameError: refused (the module docstring gives the order of the checks);
            the state is unchanged.
        """
        handler = _HANDLERS.get(type(command))
        if handler is None:
            raise GameError("unknown_command", f"A roulette table cannot do {type(command).__name__}.")
        refused = roles.actor_refusal(actor)
        if refused is not None:
            raise refused
        command = C.checked(command)
        actor = checked_actor(actor, C.bounded)
        s = self.state
        tag, live = C.TAG[type(command)], s.settings.live
        refused = roles.refusal(tag, actor, live=live, phase=s.phase)
        if refused is not None:
            raise refused
        if isinstance(command, (C.Suspend, C.CloseTable)):
            roles.direzione(actor, command.authorised_by, roles.CONSOLE[tag].what)
        self._chips(command, actor)
        why = phases.refusal(s.phase, tag, live=live)
        if why is not None:
            raise GameError(why.code, why.message)
        return handler(self, command, actor)

    def legal_commands(self, actor: Actor) -> list[str]:
        """The command types (their ``type`` tags, in the order of ``commands.Command``)
        ``actor`` may send now: those the phase table accepts and his role may send to
        this table. A listed command may still be refused for what it names: another
        player's chips, a wager or late bet that is not there, an amount over a maximum."""
        if roles.actor_refusal(actor) is not None:
            return []
        phase, live = self.state.phase, self.state.settings.live
        return [
            tag
            for tag in C.TAGS
            if phases.accepts(phase, tag, live=live) and roles.may_send(tag, actor, live=live, phase=phase)
        ]

    def view(self, viewer: str | None = None, actor: Actor | None = None) -> TableView:
        """What ``viewer`` (a player id, or None for the public) sees; given the ``actor``
        he acts as (his id is then the viewer), also what he may send now."""
        if actor is not None and viewer is None:
            viewer = actor.id
        return table_view(self.state, viewer, self.legal_commands(actor) if actor is not None else [])

    # ------------------------------------------------------------ helpers

    def _find(self, wager: str) -> Bet:
        for b in self.state.bets:
            if b.wager == wager:
                return b
        raise GameError("unknown_wager", f"There is no bet {wager!r} on this table.", wager=wager)

    def _chips(self, c: C.Command, actor: Actor) -> None:
        """Whose chips a command moves, and that they are there: a player's own or, for
        staff, a floor player's (``roles.acting_for``); the wager it names, imprisoned or
        not as the command needs; the previous spin's stakes it restates."""
        live = self.state.settings.live
        if isinstance(c, (C.PlaceBet, C.PlaceAnnounced)):
            roles.acting_for(actor, roles.named(c.player, actor), "You can only place bets for yourself.", live=live)
        elif isinstance(c, C.SameAgain):
            player = roles.named(c.player, actor)
            roles.acting_for(actor, player, "You can only restate your own bets.", live=live)
            if not self.state.previous.get(player):
                raise GameError("no_previous_bets", "There are no bets of yours from the previous spin to repeat.")
        elif isinstance(c, C.SetPartagePreference):
            roles.acting_for(actor, roles.named(c.player, actor), "You can only set your own preference.", live=live)
        elif isinstance(c, C.MarkUnclaimed):
            # Art. 19 takes physical chips off a live felt; an online player's wins are
            # already in his wallet and his bets are his own to withdraw.
            roles.acting_for(actor, c.player, "Only staff record unclaimed chips.", live=live)
        elif isinstance(c, (C.WithdrawBet, C.ChoosePartage, C.MovePrisoner)):
            b = self._find(c.wager)
            roles.acting_for(actor, b.player, "That bet is not yours.", live=live)
            if isinstance(c, C.WithdrawBet) and b.prison:
                raise GameError(
                    "imprisoned",
                    "An imprisoned bet cannot be taken back: choose partage or move it to another simple chance.",
                )
            if not isinstance(c, C.WithdrawBet) and not b.prison:
                raise GameError("not_imprisoned", f"Bet {c.wager} is not en prison.", wager=c.wager)

    def _remove(self, gone: set[str]) -> None:
        keep = []
        for b in self.state.bets:
            if b.wager in gone:
                self._totals[(b.player, b.spot)] -= b.amount
            else:
                keep.append(b)
        self.state.bets = keep

    def _refuse_all_late(self, reason: str) -> Events:
        out: Events = [E.LateBetRefused(late.late, late.player, reason) for late in self.state.late]
        self.state.late = []
        return out

    def _return_everything(self, reason: str) -> Events:
        s = self.state
        s.seed = s.commitment = ""  # (a spin suspended or closed never comes: nothing to reveal)
        out = self._refuse_all_late(reason)
        out += [WagerVoided(b.wager, b.player, b.amount, reason) for b in s.bets]
        s.bets = []
        s.placed = {}
        self._totals.clear()
        return out

    # ------------------------------------------------------------ handlers
    # Each runs once ``handle`` has checked who, whose chips and the phase.

    def _open_spin(self, c: C.OpenSpin, actor: Actor) -> Events:
        s = self.state
        if c.seed and s.settings.live:
            raise GameError("seed_not_allowed", "A live wheel's number is the ball's: no seed is committed to.")
        s.spin += 1
        if s.pending_settings is not None:
            s.settings, s.pending_settings = s.pending_settings, None
        s.phase = Phase.OPEN
        s.last_paid = {}
        # An RNG spin: its number is fixed now (roulette.fair), and only the commitment is published.
        s.seed, s.commitment = c.seed, fair.commitment(c.seed) if c.seed else ""
        return [E.SpinOpened(s.spin, s.settings, [b.wager for b in s.bets if b.prison], s.commitment)]

    def committed_number(self) -> int | None:
        """The number the open spin's seed gives (an RNG spin), or None (a live wheel)."""
        s = self.state
        return fair.spin_number(s.seed, s.table, s.spin) if s.seed else None

    def _refund_spin(self, c: C.RefundSpin, actor: Actor) -> Events:
        if not c.reason:
            raise GameError("missing_reason", "Say why the spin is refunded.")
        s = self.state
        mine = [b for b in s.bets if not b.prison]  # this spin's bets; prisoners wait for the next
        out = self._refuse_all_late(c.reason)
        out += [WagerVoided(b.wager, b.player, b.amount, "refunded") for b in mine]
        s.bets = [b for b in s.bets if b.prison]
        self._reindex()
        s.placed = {}
        out.append(E.SpinRefunded(s.spin, c.reason, actor.id, s.commitment, s.seed))
        s.seed = s.commitment = ""
        s.phase = Phase.SETTLED
        return out

    def _place_bet(self, c: C.PlaceBet, actor: Actor) -> Events:
        player, stakes = roles.named(c.player, actor), [Stake(c.spot, c.amount)]
        return staking.request(self.state, self._totals, self._group, actor, player, stakes, [])

    def _place_announced(self, c: C.PlaceAnnounced, actor: Actor) -> Events:
        player, stakes = roles.named(c.player, actor), [Stake(c.announce, c.unit, True)]
        return staking.request(self.state, self._totals, self._group, actor, player, stakes, [])

    def _same_again(self, c: C.SameAgain, actor: Actor) -> Events:
        player = roles.named(c.player, actor)
        stakes = [Stake(st.spot, st.amount, st.announced) for st in self.state.previous[player]]
        lead: Events = [E.BetsRestated(player, stakes)]
        return staking.request(self.state, self._totals, self._group, actor, player, stakes, lead)

    def _withdraw_bet(self, c: C.WithdrawBet, actor: Actor) -> Events:
        # Art. 12: nothing comes back once the ball runs (the phase table).
        s = self.state
        b = self._find(c.wager)
        group = [x for x in s.bets if b.announce and x.announce == b.announce] or [b]
        self._remove({x.wager for x in group})
        ref = b.announce or b.wager
        if b.player in s.placed:
            s.placed[b.player] = [st for st in s.placed[b.player] if st.ref != ref]
        return [WagerVoided(x.wager, x.player, x.amount, "withdrawn") for x in group]

    def _launch_ball(self, c: C.LaunchBall, actor: Actor) -> Events:
        self.state.phase = Phase.LAUNCHED
        return [E.BallLaunched(self.state.spin)]

    def _late_bet(self, late_id: str) -> LateBet:
        for late in self.state.late:
            if late.late == late_id:
                return late
        raise GameError("unknown_late_bet", f"There is no late bet {late_id!r} waiting.", late=late_id)

    def _accept_late(self, c: C.AcceptLate, actor: Actor) -> Events:
        late = self._late_bet(c.late)
        s = self.state
        plans = staking.plan(s, self._totals, self._group, late.entered_by, late.player, late.stakes)
        s.late = [x for x in s.late if x.late != c.late]
        accepted: Events = [E.LateBetAccepted(late.late, late.player, actor.id)]
        return accepted + staking.apply(s, self._totals, late.entered_by, late.player, plans)

    def _refuse_late(self, c: C.RefuseLate, actor: Actor) -> Events:
        late = self._late_bet(c.late)
        self.state.late = [x for x in self.state.late if x.late != c.late]
        return [E.LateBetRefused(late.late, late.player, c.reason or "refused by the chef de table", actor.id)]

    def _no_more_bets(self, c: C.NoMoreBets, actor: Actor) -> Events:
        out: Events = [E.BetsClosed(self.state.spin)]
        out += self._refuse_all_late("rien ne va plus before the chef decided")
        self.state.phase = Phase.NO_MORE_BETS
        return out

    def _void(self, reason: str) -> Events:
        out: Events = [E.SpinVoided(self.state.spin, reason)]
        out += self._refuse_all_late("spin void")
        self.state.phase = Phase.OPEN
        return out

    def _void_spin(self, c: C.VoidSpin, actor: Actor) -> Events:
        if not c.reason:
            raise GameError("missing_reason", "Say why the spin is void (Art. 11).")
        return self._void(c.reason)

    def _result(self, c: C.Result, actor: Actor) -> Events:
        s = self.state
        if not 0 <= c.number <= 36:  # (its type: commands.checked, before any handler)
            raise GameError("number_out_of_range", f"{c.number!r} is not a number of this wheel (0-36).")
        if c.turns is not None and c.turns < 3:
            return self._void(f"the ball made {c.turns} turns, fewer than three (Art. 10)")
        if c.ball_direction == "same":
            return self._void("the ball turned the same way as the wheel (Art. 10)")
        number = c.number
        if s.seed and number != fair.spin_number(s.seed, s.table, s.spin):
            raise GameError("not_committed_number", f"Spin {s.spin} is committed to another number than {number}.")
        policy = s.settings.prison_on_zero
        partage = frozenset(s.partage_players)
        last = s.derniere_spin == s.spin
        outcomes = settle(s.bets, number, policy, partage, last=last)
        out: Events = [E.SpinResult(s.spin, number, colour(number), c.source, s.bets, policy, sorted(partage), last)]
        if s.seed:
            out.append(E.SpinRevealed(s.spin, number, s.commitment, s.seed))
            s.seed = s.commitment = ""
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
        s.phase = Phase.SETTLED
        if last:  # settle() left no prisoner: the table closes empty
            s.derniere_spin = 0
            s.phase = Phase.CLOSED
            out.append(E.TableClosed(s.spin, "la dernière", actor.id))
        return out

    def _last_spin(self, c: C.LastSpin, actor: Actor) -> Events:
        s = self.state
        if s.derniere_spin:
            raise GameError("already_announced", "La dernière has already been announced.")
        # Art. 14: announced before the players bet on it, so once the ball runs the
        # last spin is the next one.
        s.derniere_spin = s.spin if s.phase == Phase.OPEN else s.spin + 1
        return [E.LastSpinAnnounced(s.derniere_spin)]

    def _suspend(self, c: C.Suspend, actor: Actor) -> Events:
        authorised_by = roles.direzione(actor, c.authorised_by, "suspend the table")
        s = self.state
        out = self._return_everything("table suspended")
        s.phase = Phase.SUSPENDED
        s.derniere_spin = 0
        return out + [E.TableSuspended(s.spin, c.reason, actor.id, authorised_by)]

    def _close_table(self, c: C.CloseTable, actor: Actor) -> Events:
        authorised_by = roles.direzione(actor, c.authorised_by, "close the table")
        s = self.state
        out = self._return_everything("table closed")
        s.phase = Phase.CLOSED
        s.derniere_spin = 0
        return out + [E.TableClosed(s.spin, c.reason, actor.id, authorised_by)]

    def _choose_partage(self, c: C.ChoosePartage, actor: Actor) -> Events:
        b = self._find(c.wager)
        self._remove({b.wager})
        return [WagerSettled(b.wager, b.player, b.amount, partage_return(b), 0, "partage")]

    def _move_prisoner(self, c: C.MovePrisoner, actor: Actor) -> Events:
        b = self._find(c.wager)
        target = parse_spot(c.to)
        if not target.simple:
            raise GameError("not_simple_chance", "An imprisoned bet can only move to another simple chance.")
        if target.name == b.spot:
            raise GameError("same_spot", f"The bet is already on {b.spot}.")
        staking.check_move(self.state, self._totals, self._group, b, target.name)
        self._remove({b.wager})
        moved = msgspec.structs.replace(b, spot=target.name)
        self.state.bets.append(moved)
        self._totals[(b.player, target.name)] += b.amount
        return [E.PrisonerMoved(b.wager, b.player, b.spot, target.name)]

    def _set_partage(self, c: C.SetPartagePreference, actor: Actor) -> Events:
        player = roles.named(c.player, actor)
        players = set(self.state.partage_players)
        if c.partage:
            players.add(player)
        else:
            players.discard(player)
        self.state.partage_players = sorted(players)
        return [E.PartagePreferenceSet(player, c.partage)]

    def _register_societa(self, c: C.RegisterSocieta, actor: Actor) -> Events:
        s = self.state
        members = list(dict.fromkeys(c.members))
        if not c.name or c.name in s.societa:
            raise GameError("invalid_societa", "A società needs a name not already registered here.")
        if len(members) < 2 or not all(isinstance(m, str) and m for m in members):
            raise GameError("invalid_societa", "A società has at least two players.")
        already = [m for m in members if m in self._group]
        if already:
            raise GameError("invalid_societa", f"{', '.join(already)} already play in a società.")
        staking.check_societa(s, members)
        s.societa[c.name] = members
        self._reindex()
        return [E.SocietaRegistered(c.name, members, actor.id)]

    def _change_settings(self, c: C.ChangeSettings, actor: Actor) -> Events:
        s = self.state
        s.pending_settings = check_change(s.settings, s.pending_settings or s.settings, c.settings)
        return [E.SettingsAnnounced(c.settings, s.spin + 1, actor.id, c.reason)]

    def _raise_limit(self, c: C.RaiseLimit, actor: Actor) -> Events:
        s = self.state
        new = raise_maximum(s.pending_settings or s.settings, c.kind, c.maximum, c.control_officer)
        s.pending_settings = new
        reason = c.reason or f"{KIND_LABELS[c.kind]} maximum raised"
        return [
            E.LimitRaised(c.kind, c.maximum, s.spin + 1, actor.id, c.control_officer, reason),
            E.SettingsAnnounced(new, s.spin + 1, actor.id, reason),
        ]

    def _mark_unclaimed(self, c: C.MarkUnclaimed, actor: Actor) -> Events:
        s = self.state
        # Wins stay claimable until the next spin opens, also once la dernière or the
        # director has closed the table right after the result.
        if s.phase in (Phase.SETTLED, Phase.CLOSED, Phase.SUSPENDED):
            amount = s.last_paid.get(c.player, 0)
            if not amount:
                raise GameError("nothing_unclaimed", f"{c.player} has no winnings from the last spin.")
            del s.last_paid[c.player]
            return [ChipsUnclaimed(c.player, s.spin, "wins", amount, [], actor.id)]
        bets = [b for b in s.bets if b.player == c.player and not b.prison]  # open: bets abandoned
        if not bets:
            raise GameError("nothing_unclaimed", f"{c.player} has no bets on the layout.")
        self._remove({b.wager for b in bets})
        s.placed.pop(c.player, None)
        out: Events = [WagerVoided(b.wager, b.player, b.amount, "abandoned") for b in bets]
        wagers = [b.wager for b in bets]
        out.append(ChipsUnclaimed(c.player, s.spin, "bets", sum(b.amount for b in bets), wagers, actor.id))
        return out


_HANDLERS: dict[type[Any], Callable[[RouletteTable, Any, Actor], Events]] = {
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
    C.RefundSpin: RouletteTable._refund_spin,
}

if TYPE_CHECKING:  # the engine contract every game keeps (games.engine), checked by mypy
    _contract: Engine[C.Command, E.Event, RouletteState, TableView] = RouletteTable()
