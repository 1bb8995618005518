"""Commands a roulette table accepts. Each names who issues it (``by``); the server has
already authenticated them, the engine checks what their role may do at the table.

Every field is bounded (``games.validation``): amounts are whole minor units within
int64, ids are non-empty names, free text has no control characters; unknown fields are
refused. JSON decoding checks that at the edge, and ``RouletteTable.handle`` checks it
again for commands built in Python (``validated``).

``player`` names whose chips a command moves: an online player (his login, only by his
own command) or a floor player (``floor:blue``, ``games.players``: cash chips on a live
table, entered by staff).
"""

from __future__ import annotations

from typing import Annotated, Literal

import msgspec

from games.validation import Amount, Name, Text

from .limits import TableSettings
from .state import Actor

Turns = Annotated[int, msgspec.Meta(ge=0, le=1_000)]  # ball turns: a sane bound
MAX_SOCIETA = 64  # members of one società


class _Cmd(msgspec.Struct, frozen=True, tag_field="type", kw_only=True, forbid_unknown_fields=True):
    by: Actor


class OpenSpin(_Cmd, tag="open_spin"):
    """"Faites vos jeux": opens the table, or the next spin after a settlement."""


class PlaceBet(_Cmd, tag="place_bet"):
    player: Name
    spot: Name  # "plein 17", "cheval 0/3", "rouge", ...
    amount: Amount


class PlaceAnnounced(_Cmd, tag="place_announced"):
    player: Name
    announce: Name  # "voisins du zéro", "finale à cheval 1/2", "17 et 2 voisins", ...
    unit: Amount  # per piece unit; the total is unit x the announcement's units


class SameAgain(_Cmd, tag="same_again"):
    """Restate the player's bets of the previous spin (Art. 18)."""

    player: Name


class WithdrawBet(_Cmd, tag="withdraw_bet"):
    """Take a bet back before the launch (a piece takes its whole announcement)."""

    wager: Name


class LaunchBall(_Cmd, tag="launch_ball"):
    pass


class AcceptLate(_Cmd, tag="accept_late"):
    late: Name


class RefuseLate(_Cmd, tag="refuse_late"):
    late: Name
    reason: Text = ""


class NoMoreBets(_Cmd, tag="no_more_bets"):
    """"Rien ne va plus"."""


class Result(_Cmd, tag="result"):
    number: int  # 0-36; the engine answers anything else with ``number_out_of_range``
    source: Literal["rng", "croupier", "wheel_reader"] = "rng"
    # Wheel-reader data (Art. 10-11): fewer than three turns or the ball running the
    # wheel's way voids the spin.
    turns: Turns | None = None
    ball_direction: Literal["opposite", "same"] | None = None


class VoidSpin(_Cmd, tag="void_spin"):
    """"Rien va" (Art. 11): back to before the launch, every bet in place."""

    reason: Text


class LastSpin(_Cmd, tag="last_spin"):
    """"La dernière" (Art. 14): the table closes after this spin."""


class Suspend(_Cmd, tag="suspend"):
    """Art. 15: the Direzione Giochi suspends the game. ``by`` is the director, or a chef
    de table with ``authorised_by`` naming the director who authorised it (the server
    fills it from a recorded authorisation)."""

    reason: Text = ""
    authorised_by: Text = ""


class CloseTable(_Cmd, tag="close_table"):
    """Art. 15: the Direzione Giochi ends the game; authorised as ``Suspend``."""

    reason: Text = ""
    authorised_by: Text = ""


class ChoosePartage(_Cmd, tag="choose_partage"):
    """Take half of an imprisoned bet back now instead of waiting."""

    wager: Name


class SetPartagePreference(_Cmd, tag="set_partage_preference"):
    player: Name
    partage: bool


class MovePrisoner(_Cmd, tag="move_prisoner"):
    wager: Name
    to: Name  # another simple chance


class RegisterSocieta(_Cmd, tag="register_societa"):
    name: Name
    members: Annotated[list[Name], msgspec.Meta(max_length=MAX_SOCIETA)]


class ChangeSettings(_Cmd, tag="change_settings"):
    """The director's new settings from the next spin: the minimum, and maxima no higher
    than the regulation's (Art. 5); ``currency`` and ``live`` never change, raises come
    only through ``RaiseLimit``."""

    settings: TableSettings
    reason: Text = ""


class RaiseLimit(_Cmd, tag="raise_limit"):
    """The director's raise of the plein or cheval maximum (Art. 5), agreed with the
    municipal control service: ``by`` is the director, ``control_officer`` who agreed."""

    kind: Name  # "plein" or "cheval"; any other kind: ``raise_not_allowed``
    maximum: Amount
    control_officer: Text  # empty: refused with ``missing_authorisation``
    reason: Text = ""


class MarkUnclaimed(_Cmd, tag="mark_unclaimed"):
    """Art. 19: the chef declares a floor player's chips abandoned on the layout (while
    bets are open) or their last wins unclaimed (after the settlement), at a live table."""

    player: Name


Command = (
    OpenSpin | PlaceBet | PlaceAnnounced | SameAgain | WithdrawBet | LaunchBall
    | AcceptLate | RefuseLate | NoMoreBets | Result | VoidSpin | LastSpin | Suspend
    | CloseTable | ChoosePartage | SetPartagePreference | MovePrisoner | RegisterSocieta
    | ChangeSettings | RaiseLimit | MarkUnclaimed
)  # fmt: skip
