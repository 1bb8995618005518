"""Blazing 7s: the progressive side bet and its (possibly linked) jackpot pool.

Two parts, both pure:

* ``blazing_line`` / ``round_results``: what each Blazing 7s bet of one table's round won
  from the box's first two cards and the dealer's up card: a fixed amount (one 7, two 7s,
  three 7s) paid by the table's bank, envy bonuses paid by the bank to every Blazing 7s
  bet of *another player* at the table when a jackpot is hit (never to the winner's own
  other boxes), or a jackpot hit (minor: three 7s of one colour, major: of one suit) paid
  from the pool. The stake is never returned.
* ``JackpotPool``: one linked jackpot (minor and major meters) shared by any number of
  tables, an engine of its own (``handle`` / ``state`` / ``from_state`` / ``view``). Each
  round with Blazing 7s bets *enters* the pool when its cards start coming (it gets a
  ticket: the order rounds started in) and *reports* after the deal: its stakes feed the
  meters, its hits are paid. Reports are processed in ticket order, so when two linked
  tables hit at the same moment the round that started first wins the jackpot and the
  other wins the reset (seed) amount, whatever order their reports arrive in. Winners of
  one jackpot in one round share it equally, each share rounded up to CHF 1.

Money: the pool's events map to ledger transfers (``server.money.jackpot_transfers``, for the
server; the engine never imports the ledger): a contribution moves
``bank(table) -> jackpot(level)``, a hit ``jackpot(level) -> wallet(player)``, a (re)seed
``bank(table) -> jackpot(level)``. So each jackpot account's balance is always its meter.
The stake itself and the fixed/envy pays are ordinary ``games.wagers`` events of the table.
"""

from __future__ import annotations

import re
from typing import Any

import msgspec

from blackjack.cards import is_red, rank, suit
from games.errors import GameError

BLAZING_7S = "blazing_7s"  # the wager kind
SEVEN = 6  # rank index of a seven
LEVELS = ("minor", "major")
LINES = ("major", "minor", "three_sevens", "two_sevens", "one_seven")


class JackpotLevel(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    seed: int  # the reset amount, minor units
    contribution: int  # added to the meter for each Blazing 7s stake


class Blazing7s(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """The bet's pay table and its jackpot, as profile data (amounts in minor units)."""

    stake: int = 500  # fixed, CHF 5
    currency: str = "CHF"  # CHF chips only
    one_seven: int = 1000
    two_sevens: int = 10000
    three_sevens: int = 100000
    envy_minor: int = 10000
    envy_major: int = 50000
    # The pool's name: tables whose profiles name the same jackpot are linked.
    jackpot: str = "blazing7s"
    minor: JackpotLevel = JackpotLevel(seed=500000, contribution=10)
    major: JackpotLevel = JackpotLevel(seed=10000000, contribution=20)
    share_unit: int = 100  # each share of a jackpot is rounded up to this (CHF 1)

    def level(self, name: str) -> JackpotLevel:
        return self.major if name == "major" else self.minor

    def envy(self, level: str) -> int:
        return self.envy_major if level == "major" else self.envy_minor

    def fixed(self, line: str) -> int:
        return getattr(self, line) if line in ("one_seven", "two_sevens", "three_sevens") else 0

    def contribution_total(self) -> int:
        return self.minor.contribution + self.major.contribution


def check_blazing(b: Blazing7s) -> str:
    """Why a Blazing 7s table is unusable, or ""."""
    from games.money import CURRENCIES

    if b.stake <= 0:
        return "blazing_7s: the stake must be positive"
    if b.currency not in CURRENCIES or not CURRENCIES[b.currency].cash:
        return f"blazing_7s: {b.currency!r} is not a chip currency"
    if min(b.one_seven, b.two_sevens, b.three_sevens, b.envy_minor, b.envy_major) < 0:
        return "blazing_7s: pays cannot be negative"
    for lv in (b.minor, b.major):
        if lv.seed < 0 or not 0 <= lv.contribution <= b.stake:
            return "blazing_7s: a seed cannot be negative nor a contribution exceed the stake"
    if b.contribution_total() > b.stake:
        return "blazing_7s: the contributions exceed the stake"
    if b.share_unit <= 0:
        return "blazing_7s: share_unit must be positive"
    if not _POOL_NAME.fullmatch(b.jackpot):
        return "blazing_7s: the jackpot's name must be 1-50 letters, digits or . _ - @ # / +"
    return ""


# What a ledger account name may hold (games.ledger.accounts), leaving room for "-minor".
_POOL_NAME = re.compile(r"[A-Za-z0-9_.@#/+-]{1,50}")


# -- one table's round ----------------------------------------------------------------------


def blazing_line(c1: int, c2: int, up: int) -> str:
    """The line of one bet: "major", "minor", "three_sevens", "two_sevens", "one_seven"
    or "" (lost). One and two 7s look only at the box's cards; the up card counts only
    when both of them are 7s."""
    sevens = (rank(c1) == SEVEN) + (rank(c2) == SEVEN)
    if sevens == 0:
        return ""
    if sevens == 1:
        return "one_seven"
    if rank(up) != SEVEN:
        return "two_sevens"
    if suit(c1) == suit(c2) == suit(up):
        return "major"
    if is_red(c1) == is_red(c2) == is_red(up):
        return "minor"
    return "three_sevens"


class BlazingBet(msgspec.Struct, frozen=True):
    wager: str
    player: str
    box: int
    cards: tuple[int, int]


class BlazingResult(msgspec.Struct, frozen=True):
    wager: str
    player: str
    box: int
    line: str
    fixed: int  # paid by the table's bank (one, two, three 7s)
    envy: int  # paid by the table's bank: the envy bonuses of other bets' jackpot hits

    @property
    def jackpot(self) -> str:
        return self.line if self.line in LEVELS else ""


def round_results(bets: list[BlazingBet], up: int, table: Blazing7s) -> list[BlazingResult]:
    """Every Blazing 7s bet of one round at one table. Each jackpot hit pays an envy bonus
    to every other Blazing 7s bet at the table, except bets that won that same jackpot
    (they share it instead) and the hitting player's own bets on his other boxes (envy is
    for the others); two hits, two bonuses."""
    lines = [blazing_line(b.cards[0], b.cards[1], up) for b in bets]
    out = []
    for i, b in enumerate(bets):
        envy = sum(
            table.envy(ln)
            for j, ln in enumerate(lines)
            if j != i and ln in LEVELS and ln != lines[i] and bets[j].player != b.player
        )
        out.append(BlazingResult(b.wager, b.player, b.box, lines[i], table.fixed(lines[i]), envy))
    return out


def share(amount: int, winners: int, unit: int) -> int:
    """Each winner's equal share of ``amount``, rounded up to a multiple of ``unit``."""
    return -(-amount // (winners * unit)) * unit


# -- events a table emits for the pool (the server forwards them as Enter / Report) ---------


class _Ev(msgspec.Struct, frozen=True, kw_only=True, tag_field="type"):
    pass


class Hit(msgspec.Struct, frozen=True):
    level: str
    player: str
    wager: str
    box: int


class JackpotRoundStarted(_Ev, tag="jackpot_round_started"):
    """A table's round with Blazing 7s bets began dealing: ``Enter`` it into the pool."""

    jackpot: str
    table: str
    round: int


class JackpotRoundReport(_Ev, tag="jackpot_round_report"):
    """After the deal (or a void, with no stakes): ``Report`` it to the pool."""

    jackpot: str
    table: str
    round: int
    stakes: int  # Blazing 7s stakes taken (each contributes to both meters)
    hits: list[Hit]


# -- the pool -------------------------------------------------------------------------------


class _Cmd(msgspec.Struct, frozen=True, kw_only=True, tag_field="type", forbid_unknown_fields=True):
    by: str = "system"


class Open(_Cmd, tag="jackpot_open"):
    """Seed both meters, funded by ``table``'s bank."""

    table: str


class Enter(_Cmd, tag="jackpot_enter"):
    table: str
    round: int


class Report(_Cmd, tag="jackpot_report"):
    table: str
    round: int
    stakes: int
    hits: list[Hit] = []


class RoundEntered(_Ev, tag="jackpot_round_entered"):
    ticket: int
    table: str
    round: int


class JackpotContributed(_Ev, tag="jackpot_contributed"):
    jackpot: str
    level: str
    table: str
    round: int
    amount: int


class JackpotSeeded(_Ev, tag="jackpot_seeded"):
    """The house (``table``'s bank) funds the meter: the opening seed, the reset after a
    win (plus what rounding up the shares cost), or the reset amount a later round won."""

    jackpot: str
    level: str
    table: str
    round: int
    amount: int
    why: str  # "open", "reset" (after a win) or "reset_amount" (a later-started round won it)


class JackpotWon(_Ev, tag="jackpot_won"):
    jackpot: str
    level: str
    table: str
    round: int
    amount: int  # what the winners share: the meter, or the seed for a later-started round
    reset_amount: bool  # True: this round started before the jackpot was last won
    winners: int
    each: int


class JackpotPaid(_Ev, tag="jackpot_paid"):
    jackpot: str
    level: str
    table: str
    round: int
    player: str
    wager: str
    amount: int


class MetersChanged(_Ev, tag="jackpot_meters"):
    jackpot: str
    minor: int
    major: int


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


def _err(code: str, message: str) -> GameError:
    return GameError(code, message)


class JackpotPool:
    """One jackpot, linked to every table whose profile names it."""

    def __init__(self, table: Blazing7s) -> None:
        self.state = PoolState(table.jackpot, table)
        self._ev: list[Any] = []

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

    def handle(self, cmd: Any) -> list[Any]:
        s = self.state
        self._ev = ev = []
        if isinstance(cmd, Open):
            if s.opened:
                raise _err("jackpot_open", "The jackpot is already open.")
            s.opened = True
            for lv in s.levels:
                self._seed(lv, cmd.table, 0, s.table.level(lv.name).seed, "open")
            self._meters()
        elif isinstance(cmd, Enter):
            self._check_open()
            if self._find(cmd.table, cmd.round) is not None:
                raise _err("already_entered", f"Round {cmd.round} of {cmd.table} already entered.")
            s.pending.append(PendingRound(s.next_ticket, cmd.table, cmd.round))
            ev.append(RoundEntered(ticket=s.next_ticket, table=cmd.table, round=cmd.round))
            s.next_ticket += 1
        elif isinstance(cmd, Report):
            self._check_open()
            r = self._find(cmd.table, cmd.round)
            if r is None or r.reported:
                raise _err("not_entered", f"Round {cmd.round} of {cmd.table} is not waiting for the jackpot.")
            wagers = {h.wager for h in cmd.hits}
            if any(h.level not in LEVELS for h in cmd.hits) or len(wagers) != len(cmd.hits):
                raise _err("bad_report", "Each hit names one wager and the minor or major jackpot.")
            if cmd.stakes < len(wagers):
                raise _err("bad_report", "Every hit needs a stake.")
            r.reported, r.stakes, r.hits = True, cmd.stakes, list(cmd.hits)
            while s.pending and s.pending[0].reported:
                self._settle(s.pending.pop(0))
        else:
            raise _err("malformed_command", "That is not a jackpot command.")
        self._ev = []
        return ev

    def _check_open(self) -> None:
        if not self.state.opened:
            raise _err("jackpot_closed", "The jackpot has not been opened (seeded) yet.")

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
                self._ev.append(JackpotContributed(jackpot=name, level=lv.name, table=r.table, round=r.round, amount=amount))
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
