"""Blazing 7s, Lugano's progressive side bet, at the table: the pay table (profile data),
what each bet of one round won, and what the table tells its jackpot pool.

``blazing_line`` / ``round_results``: what each Blazing 7s bet of one table's round won from
the box's first two cards and the dealer's up card: a fixed amount (one 7, two 7s, three
7s) paid by the table's bank, envy bonuses paid by the bank to every Blazing 7s bet of
*another player* at the table when a jackpot is hit (never to the winner's own other
boxes), or a jackpot hit (minor: three 7s of one colour, major: of one suit) paid from the
pool (``jackpot_pool``). The stake is never returned; it and the fixed and envy pays are
ordinary ``games.wagers`` events of the table.
"""

from __future__ import annotations

import re

import msgspec

from games.cards import is_red, rank, suit

SEVEN = 6  # rank index of a seven
LEVELS = ("minor", "major")


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


# -- events a table emits for the pool (the server forwards them as Enter / Report) ---------


class _Ev(msgspec.Struct, frozen=True, kw_only=True, tag_field="type"):
    pass


class Hit(msgspec.Struct, frozen=True):
    level: str
    player: str
    wager: str
    box: int


class JackpotRoundStarted(_Ev, tag="jackpot_round_started", frozen=True):
    """A table's round with Blazing 7s bets began dealing: ``Enter`` it into the pool."""

    jackpot: str
    table: str
    round: int


class JackpotRoundReport(_Ev, tag="jackpot_round_report", frozen=True):
    """After the deal (or a void, with no stakes): ``Report`` it to the pool."""

    jackpot: str
    table: str
    round: int
    stakes: int  # Blazing 7s stakes taken (each contributes to both meters)
    hits: list[Hit]


class MetersChanged(_Ev, tag="jackpot_meters", frozen=True):
    """The pool's meters, relayed by the server to every linked table (``JackpotMeters``)."""

    jackpot: str
    minor: int
    major: int
