"""Events the tournament coordinator emits: what the tournament channel carries.

Money events (the server turns them into ledger transfers, ``server.money``):
``EntryPaid`` (buy-in to the prize pool, fee to the house), ``BuyInRefunded``,
``FeeRefunded``, ``PrizePaid``. Orders to tables: ``TableOrdered``.
"""

from __future__ import annotations

from typing import Literal

import msgspec

from blackjack.commands import TournamentEnd, TournamentExpel, TournamentPause, TournamentSeat


class _Ev(msgspec.Struct, frozen=True, kw_only=True, tag_field="type", gc=False):
    pass


class RegistrationOpened(_Ev, tag="registration_opened", frozen=True):
    by: str


class RegistrationClosed(_Ev, tag="registration_closed", frozen=True):
    by: str
    reason: str


class Registered(_Ev, tag="registered", frozen=True):
    """``ticket``: the participation ticket's number (Art. 23), 1, 2, ... in order."""

    player: str
    ticket: int
    source: str
    reference: str
    by: str


class EntryPaid(_Ev, tag="entry_paid", frozen=True):
    """Money: ``buy_in`` to the prize pool and ``fee`` to the house, from the player's wallet
    (``source="wallet"``) or from the cashier's desk (cash or a bank transfer)."""

    player: str
    buy_in: int
    fee: int
    source: str
    reference: str


class CheckedIn(_Ev, tag="checked_in", frozen=True):
    player: str
    by: str


class NotAdmitted(_Ev, tag="not_admitted", frozen=True):
    """Not checked in at the start (Art. 23): out, the fee kept, the buy-in returned (RULES.md)."""

    player: str


class BuyInRefunded(_Ev, tag="buy_in_refunded", frozen=True):
    """Money: the buy-in back from the prize pool to the player's wallet."""

    player: str
    amount: int
    reason: str


class FeeRefunded(_Ev, tag="fee_refunded", frozen=True):
    """Money: the fee back from the house to the player's wallet (a cancelled tournament)."""

    player: str
    amount: int


class Started(_Ev, tag="started", frozen=True):
    """The draw: ``order`` is the admitted players in drawn order (seats follow it; it also
    breaks ties nothing else breaks, Art. 25)."""

    draw: str
    order: list[str]
    pool: int  # the prize pool: the admitted players' buy-ins


class TableSeating(msgspec.Struct, frozen=True):
    table: str
    seats: dict[str, int]  # player -> box


class PhaseStarted(_Ev, tag="phase_started", frozen=True):
    phase: int
    kind: Literal["elimination", "final", "tiebreak"]
    shoes: int
    stacks: dict[str, int]  # player -> points issued
    tables: list[TableSeating]


class TableOrdered(_Ev, tag="table_ordered", frozen=True):
    """An order for a table, numbered per table: the server delivers it until the table's
    report says it was applied (``TableReport.order``)."""

    table: str
    order: int
    command: TournamentSeat | TournamentPause | TournamentExpel | TournamentEnd


class Standing(msgspec.Struct, frozen=True):
    place: int
    player: str
    points: int  # 0 for the eliminated
    out: str = ""  # "": still in; "eliminated", "expelled", "not_admitted", "cut"
    table: str = ""


class StandingsUpdated(_Ev, tag="standings_updated", frozen=True):
    """After each hand a table reports: the phase's ranking as it stands, and the cut line
    (the points of the last place that goes on; 0 when everyone goes on)."""

    phase: int
    table: str
    hand: int
    standings: list[Standing]
    cut_line: int


class Eliminated(_Ev, tag="eliminated", frozen=True):
    player: str
    phase: int
    table: str
    hand: int
    stack_before: int


class Expelled(_Ev, tag="expelled", frozen=True):
    player: str
    by: str
    reason: str


class PhaseEnded(_Ev, tag="phase_ended", frozen=True):
    phase: int
    kind: str
    standings: list[Standing]
    advancing: list[str]  # to the next phase ([] after the final)


class TieBreak(_Ev, tag="tie_break", frozen=True):
    """Art. 25: players tied on points where the place matters (a final seat, a prize) play
    one more shoe (``phase``) until separated."""

    phase: int
    players: list[str]
    points: int
    places: list[int]


class Paused(_Ev, tag="paused", frozen=True):
    by: str
    reason: str


class Resumed(_Ev, tag="resumed", frozen=True):
    by: str


class PrizePaid(_Ev, tag="prize_paid", frozen=True):
    """Money: ``amount`` from the prize pool to the player's wallet (Art. 26)."""

    player: str
    place: int
    amount: int


class PoolForfeited(_Ev, tag="pool_forfeited", frozen=True):
    """Money: the prize pool to the house when nobody may be paid (every player expelled)."""

    amount: int
    reason: str


class Finished(_Ev, tag="finished", frozen=True):
    standings: list[Standing]
    prizes: dict[str, int]  # player -> cents


class Cancelled(_Ev, tag="cancelled", frozen=True):
    by: str
    reason: str


Event = (
    RegistrationOpened | RegistrationClosed | Registered | EntryPaid | CheckedIn | NotAdmitted | BuyInRefunded
    | FeeRefunded | Started | PhaseStarted | TableOrdered | StandingsUpdated | Eliminated | Expelled | PhaseEnded
    | TieBreak | Paused | Resumed | PrizePaid | PoolForfeited | Finished | Cancelled
)
