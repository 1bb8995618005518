"""Events a roulette table emits. Money moves only through ``games.wagers`` events;
these say what happened at the table, enough to replay any spin (SpinResult carries the
bets in force and the number, the WagerSettled that follow each settlement)."""

from __future__ import annotations

import msgspec

from games.wagers import ChipsUnclaimed, WagerPlaced, WagerSettled, WagerVoided

from .limits import TableSettings
from .state import Bet, Stake


class _Ev(msgspec.Struct, frozen=True, tag_field="type"):
    pass


# (``omit_defaults``: where a field was added later, an event without it encodes as one
# stored before it existed, so stored events replay byte for byte.)
class SpinOpened(_Ev, tag="spin_opened", frozen=True, omit_defaults=True):
    spin: int
    settings: TableSettings  # in force for this spin
    prisoners: list[str]  # wagers carried over en prison
    commitment: str = ""  # an RNG spin: sha256 of its secret seed (roulette.fair), before any bet


class Piece(msgspec.Struct, frozen=True):
    spot: str
    units: int
    amount: int
    wager: str


class AnnouncedBetPlaced(_Ev, tag="announced_bet_placed", frozen=True):
    announce: str
    player: str
    name: str
    unit: int
    amount: int
    pieces: list[Piece]  # the expansion, reported back


class OverMaximumEntered(_Ev, tag="over_maximum_entered", frozen=True):
    """Art. 8: a croupier-entered bet above the maximum; it plays on the maximum and
    the excess goes back at settlement."""

    wager: str
    player: str
    spot: str
    maximum: int
    excess: int
    entered_by: str


class BetsRestated(_Ev, tag="bets_restated", frozen=True):
    player: str
    stakes: list[Stake]


class LateBetPending(_Ev, tag="late_bet_pending", frozen=True):
    late: str
    player: str
    stakes: list[Stake]
    entered_by: str


class LateBetAccepted(_Ev, tag="late_bet_accepted", frozen=True):
    late: str
    player: str
    by: str


class LateBetRefused(_Ev, tag="late_bet_refused", frozen=True):
    late: str
    player: str
    reason: str
    by: str = ""


class BallLaunched(_Ev, tag="ball_launched", frozen=True):
    spin: int


class BetsClosed(_Ev, tag="bets_closed", frozen=True):
    """"Rien ne va plus"."""

    spin: int


class SpinVoided(_Ev, tag="spin_voided", frozen=True):
    spin: int
    reason: str


class SpinResult(_Ev, tag="spin_result", frozen=True):
    spin: int
    number: int
    colour: str
    source: str
    bets: list[Bet]  # every bet in force at the result, prisoners included
    prison_on_zero: str
    partage_players: list[str]
    # La dernière: nothing can stay en prison, a zero splits the simple chances (partage).
    last_spin: bool = False


class SpinRevealed(_Ev, tag="spin_revealed", frozen=True):
    """Right after an RNG spin's result: the seed its commitment hid, so anyone checks that
    sha256(seed) is the commitment published at ``spin_opened`` and that the seed gives the
    number (``roulette.fair.verify``, ``casino verify``). (Who entered a live wheel's number
    is the result event's actor, stored with it, and the audit log's.)"""

    spin: int
    number: int
    commitment: str
    seed: str


class SpinRefunded(_Ev, tag="spin_refunded", frozen=True):
    """The open spin ended without a number (``refund_spin``): each of its bets came back
    (``wager_voided``, before this event); its seed, if it had one, is revealed."""

    spin: int
    reason: str
    by: str
    commitment: str
    seed: str


class WagerImprisoned(_Ev, tag="wager_imprisoned", frozen=True):
    wager: str
    player: str
    spot: str
    spin: int


class PrisonerStays(_Ev, tag="prisoner_stays", frozen=True):
    wager: str
    player: str
    spot: str
    spin: int


class SpinSettled(_Ev, tag="spin_settled", frozen=True):
    spin: int
    number: int
    staked: int  # stakes decided this spin
    returned: int
    won: int


class PrisonerMoved(_Ev, tag="prisoner_moved", frozen=True):
    wager: str
    player: str
    from_spot: str
    to_spot: str


class PartagePreferenceSet(_Ev, tag="partage_preference_set", frozen=True):
    player: str
    partage: bool


class LastSpinAnnounced(_Ev, tag="last_spin_announced", frozen=True):
    spin: int


class TableSuspended(_Ev, tag="table_suspended", frozen=True):
    spin: int
    reason: str
    by: str
    # Art. 15: the director who decided it (``by`` himself, or the one whose recorded
    # authorisation the chef de table acted on); "" in events stored before it was kept.
    authorised_by: str = ""


class TableClosed(_Ev, tag="table_closed", frozen=True):
    spin: int
    reason: str
    by: str
    # As TableSuspended; "" also when la dernière (Art. 14) closes the table.
    authorised_by: str = ""


class SettingsAnnounced(_Ev, tag="settings_announced", frozen=True):
    """New limits, told to everyone at the table, in force from ``effective_spin``."""

    settings: TableSettings
    effective_spin: int
    by: str
    reason: str


class LimitRaised(_Ev, tag="limit_raised", frozen=True):
    kind: str
    maximum: int
    effective_spin: int
    director: str
    control_officer: str
    reason: str


class SocietaRegistered(_Ev, tag="societa_registered", frozen=True):
    name: str
    members: list[str]
    by: str



Event = (
    WagerPlaced | WagerSettled | WagerVoided | SpinOpened | AnnouncedBetPlaced
    | OverMaximumEntered | BetsRestated | LateBetPending | LateBetAccepted | LateBetRefused
    | BallLaunched | BetsClosed | SpinVoided | SpinResult | WagerImprisoned | PrisonerStays
    | SpinSettled | PrisonerMoved | PartagePreferenceSet | LastSpinAnnounced
    | TableSuspended | TableClosed | SettingsAnnounced | LimitRaised | SocietaRegistered
    | ChipsUnclaimed | SpinRefunded | SpinRevealed
)  # fmt: skip
