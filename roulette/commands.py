"""Commands a roulette table accepts. Each names who issues it (``by``); the server has
already authenticated them, the engine checks what their role may do at the table."""

from __future__ import annotations

from typing import Literal

import msgspec

from .limits import TableSettings
from .state import Actor


class _Cmd(msgspec.Struct, frozen=True, tag_field="type", kw_only=True):
    by: Actor


class OpenSpin(_Cmd, tag="open_spin"):
    """"Faites vos jeux": opens the table, or the next spin after a settlement."""


class PlaceBet(_Cmd, tag="place_bet"):
    player: str
    spot: str  # "plein 17", "cheval 0/3", "rouge", ...
    amount: int


class PlaceAnnounced(_Cmd, tag="place_announced"):
    player: str
    announce: str  # "voisins du zéro", "finale à cheval 1/2", "17 et 2 voisins", ...
    unit: int  # per piece unit; the total is unit x the announcement's units


class SameAgain(_Cmd, tag="same_again"):
    """Restate the player's bets of the previous spin (Art. 18)."""

    player: str


class WithdrawBet(_Cmd, tag="withdraw_bet"):
    """Take a bet back before the launch (a piece takes its whole announcement)."""

    wager: str


class LaunchBall(_Cmd, tag="launch_ball"):
    pass


class AcceptLate(_Cmd, tag="accept_late"):
    late: str


class RefuseLate(_Cmd, tag="refuse_late"):
    late: str
    reason: str = ""


class NoMoreBets(_Cmd, tag="no_more_bets"):
    """"Rien ne va plus"."""


class Result(_Cmd, tag="result"):
    number: int
    source: Literal["rng", "croupier", "wheel_reader"] = "rng"
    # Wheel-reader data (Art. 10-11): fewer than three turns or the ball running the
    # wheel's way voids the spin.
    turns: int | None = None
    ball_direction: Literal["opposite", "same"] | None = None


class VoidSpin(_Cmd, tag="void_spin"):
    """"Rien va" (Art. 11): back to before the launch, every bet in place."""

    reason: str


class LastSpin(_Cmd, tag="last_spin"):
    """"La dernière" (Art. 14): the table closes after this spin."""


class Suspend(_Cmd, tag="suspend"):
    reason: str = ""


class CloseTable(_Cmd, tag="close_table"):
    reason: str = ""


class ChoosePartage(_Cmd, tag="choose_partage"):
    """Take half of an imprisoned bet back now instead of waiting."""

    wager: str


class SetPartagePreference(_Cmd, tag="set_partage_preference"):
    player: str
    partage: bool


class MovePrisoner(_Cmd, tag="move_prisoner"):
    wager: str
    to: str  # another simple chance


class RegisterSocieta(_Cmd, tag="register_societa"):
    name: str
    members: list[str]


class ChangeSettings(_Cmd, tag="change_settings"):
    settings: TableSettings
    reason: str = ""


class RaiseLimit(_Cmd, tag="raise_limit"):
    """The director's raise of the plein or cheval maximum (Art. 5), agreed with the
    municipal control service: ``by`` is the director, ``control_officer`` who agreed."""

    kind: Literal["plein", "cheval"]
    maximum: int
    control_officer: str
    reason: str = ""


class MarkUnclaimed(_Cmd, tag="mark_unclaimed"):
    """Art. 19: the chef declares a player's bets abandoned (while bets are open) or
    their last wins unclaimed (after the settlement)."""

    player: str


Command = (
    OpenSpin | PlaceBet | PlaceAnnounced | SameAgain | WithdrawBet | LaunchBall
    | AcceptLate | RefuseLate | NoMoreBets | Result | VoidSpin | LastSpin | Suspend
    | CloseTable | ChoosePartage | SetPartagePreference | MovePrisoner | RegisterSocieta
    | ChangeSettings | RaiseLimit | MarkUnclaimed
)  # fmt: skip
