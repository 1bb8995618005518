"""The Blazing 7s jackpot pool: one linked jackpot (minor and major meters) shared by any
number of tables, an engine of its own (``handle`` / ``state`` / ``from_state`` / ``view``)
that only the server drives.

Each round with Blazing 7s bets *enters* the pool when its cards start coming (it gets a
ticket: the order rounds started in) and *reports* after the deal: its stakes feed the
meters, its hits are paid. Reports are processed in ticket order, so when two linked tables
hit at the same moment the round that started first wins the jackpot and the other wins the
reset (seed) amount, whatever order their reports arrive in. Winners of one jackpot in one
round share it equally, each share rounded up to CHF 1.

Money: the pool's events map to ledger transfers (``server.money.jackpot_transfers``, for the
server; the engine never imports the ledger): a contribution moves
``bank(table) -> jackpot(level)``, a hit ``jackpot(level) -> wallet(player)``, a (re)seed
``bank(table) -> jackpot(level)``. So each jackpot account's balance is always its meter.
"""

from __future__ import annotations

import msgspec

from blackjack.jackpot import LEVELS, Blazing7s, Hit, MetersChanged
from games.commands import Actor
from games.commands import Command as _Command
from games.errors import GameError


def share(amount: int, winners: int, unit: int) -> int:
    """Each winner's equal share of ``amount``, rounded up to a multiple of ``unit``."""
    return -(-amount // (winners * unit)) * unit


# -- commands and events -------------------------------------------------------------------


class _Ev(msgspec.Struct, frozen=True, kw_only=True, tag_field="type"):
    pass


class Open(_Command, tag="jackpot_open", frozen=True):
    """Seed both meters, funded by ``table``'s bank."""

    table: str


class Enter(_Command, tag="jackpot_enter", frozen=True):
    table: str
    round: int


class Report(_Command, tag="jackpot_report", frozen=True):
    table: str
    round: int
    stakes: int
    hits: list[Hit] = []


class RoundEntered(_Ev, tag="jackpot_round_entered", frozen=True):
    ticket: int
    table: str
    round: int


class JackpotContributed(_Ev, tag="jackpot_contributed", frozen=True):
    jackpot: str
    level: str
    table: str
    round: int
    amount: int


class JackpotSeeded(_Ev, tag="jackpot_seeded", frozen=True):
    """The house (``table``'s bank) funds the meter: the opening seed, the reset after a
    win (plus what rounding up the shares cost), or the reset amount a later round won."""

    jackpot: str
    level: str
    table: str
    round: int
    amount: int
    why: str  # "open", "reset" (after a win) or "reset_amount" (a later-started round won it)


class JackpotWon(_Ev, tag="jackpot_won", frozen=True):
    jackpot: str
    level: str
    table: str
    round: int
    amount: int  # what the winners share: the meter, or the seed for a later-started round
    reset_amount: bool  # True: this round started before the jackpot was last won
    winners: int
    each: int


class JackpotPaid(_Ev, tag="jackpot_paid", frozen=True):
    jackpot: str
    level: str
    table: str
    round: int
    player: str
    wager: str
    amount: int


class LevelState(msgspec.Struct):
    name: str
    meter: int = 0
    # Tickets below this belong to rounds that started before this level was last won.
    guard: int = 0


class PendingRound(msgspec.Struct):
    ticket: int
    table: str
    round: int
    reported: bool = False
    stakes: int = 0
    hits: list[Hit] = []


class PoolState(msgspec.Struct):
    name: str
    table: Blazing7s
    opened: bool = False
    levels: list[LevelState] = msgspec.field(default_factory=lambda: [LevelState("minor"), LevelState("major")])
    next_ticket: int = 1
    pending: list[PendingRound] = []  # in ticket order


class PoolView(msgspec.Struct):
    jackpot: str
    currency: str
    minor: int
    major: int
    waiting: int  # rounds entered and not yet settled with the pool


PoolCommand = Open | Enter | Report
PoolEvent = RoundEntered | JackpotContributed | JackpotSeeded | JackpotWon | JackpotPaid | MetersChanged


class JackpotPool:
    """One jackpot, linked to every table whose profile names it."""

    def __init__(self, table: Blazing7s) -> None:
        self.state = PoolState(table.jackpot, table)
        self._ev: list[PoolEvent] = []

    @classmethod
    def from_state(cls, state: PoolState) -> JackpotPool:
        p = cls.__new__(cls)
        p.state = state
        p._ev = []
        return p

    def view(self, viewer: str | None = None) -> PoolView:
        s = self.state
        return PoolView(s.name, s.table.currency, s.levels[0].meter, s.levels[1].meter, len(s.pending))

    @property
    def meters(self) -> tuple[int, int]:
        return self.state.levels[0].meter, self.state.levels[1].meter

    def handle(self, command: PoolCommand, actor: Actor) -> list[PoolEvent]:
        """Apply one command; a refused one raises ``GameError`` and changes nothing. Only
        the server (``system``) feeds the pool, forwarding its tables' rounds."""
        if actor.role != "system":
            raise GameError("forbidden", "Only the server feeds the jackpot pool.")
        s = self.state
        ev: list[PoolEvent] = []
        self._ev = ev  # _seed, _meters and _settle append to it
        match command:
            case Open():
                if s.opened:
                    raise GameError("jackpot_open", "The jackpot is already open.")
                s.opened = True
                for lv in s.levels:
                    self._seed(lv, command.table, 0, s.table.level(lv.name).seed, "open")
                self._meters()
            case Enter():
                self._check_open()
                if self._find(command.table, command.round) is not None:
                    raise GameError("already_entered", f"Round {command.round} of {command.table} already entered.")
                s.pending.append(PendingRound(s.next_ticket, command.table, command.round))
                ev.append(RoundEntered(ticket=s.next_ticket, table=command.table, round=command.round))
                s.next_ticket += 1
            case Report():
                self._check_open()
                r = self._find(command.table, command.round)
                if r is None or r.reported:
                    raise GameError("not_entered",
                                    f"Round {command.round} of {command.table} is not waiting for the jackpot.")
                wagers = {h.wager for h in command.hits}
                if any(h.level not in LEVELS for h in command.hits) or len(wagers) != len(command.hits):
                    raise GameError("bad_report", "Each hit names one wager and the minor or major jackpot.")
                if command.stakes < len(wagers):
                    raise GameError("bad_report", "Every hit needs a stake.")
                r.reported, r.stakes, r.hits = True, command.stakes, list(command.hits)
                while s.pending and s.pending[0].reported:
                    self._settle(s.pending.pop(0))
            case _:
                raise GameError("malformed_command", "That is not a jackpot command.")
        self._ev = []
        return ev

    def _check_open(self) -> None:
        if not self.state.opened:
            raise GameError("jackpot_closed", "The jackpot has not been opened (seeded) yet.")

    def _find(self, table: str, round: int) -> PendingRound | None:
        return next((r for r in self.state.pending if r.table == table and r.round == round), None)

    def _seed(self, lv: LevelState, table: str, round: int, amount: int, why: str) -> None:
        if amount > 0:
            lv.meter += amount
            self._ev.append(JackpotSeeded(jackpot=self.state.name, level=lv.name, table=table, round=round,
                                          amount=amount, why=why))

    def _meters(self) -> None:
        m1, m2 = self.meters
        self._ev.append(MetersChanged(jackpot=self.state.name, minor=m1, major=m2))

    def _settle(self, r: PendingRound) -> None:
        s = self.state
        cfg = s.table
        name = s.name
        for lv in s.levels:
            amount = r.stakes * cfg.level(lv.name).contribution
            if amount:
                lv.meter += amount
                self._ev.append(JackpotContributed(jackpot=name, level=lv.name, table=r.table, round=r.round,
                                                   amount=amount))
        for lv in s.levels:
            hits = [h for h in r.hits if h.level == lv.name]
            if not hits:
                continue
            seed = cfg.level(lv.name).seed
            later = r.ticket < lv.guard  # started before this jackpot was last won
            pot = seed if later else lv.meter
            each = share(pot, len(hits), cfg.share_unit)
            self._ev.append(JackpotWon(jackpot=name, level=lv.name, table=r.table, round=r.round, amount=pot,
                                       reset_amount=later, winners=len(hits), each=each))
            for h in hits:
                lv.meter -= each
                self._ev.append(JackpotPaid(jackpot=name, level=lv.name, table=r.table, round=r.round,
                                            player=h.player, wager=h.wager, amount=each))
            if later:
                # The house pays the reset amount; the meter stays as it was.
                self._seed(lv, r.table, r.round, len(hits) * each, "reset_amount")
            else:
                # Reset: back to the seed, the house covering what rounding up cost.
                self._seed(lv, r.table, r.round, seed - lv.meter, "reset")
                lv.guard = s.next_ticket
        self._meters()
