"""Commands a roulette table accepts (``games.commands``: frozen, keyword-only, tagged by
``type``, unknown fields refused). Who issues one travels apart from it: the engine is
called ``handle(command, actor)``, the server taking the actor from the token, and checks
what that actor's role may do at the table (``roulette.roles``, ``roulette.phases``).

Every field is bounded (``games.validation``): amounts are whole minor units within
int64, ids are non-empty names, free text has no control characters; unknown fields are
refused. JSON decoding checks that at the edge, and ``RouletteTable.handle`` checks it
again for commands built in Python (``checked``).

``player`` names whose chips a command moves: an online player (his login, only by his
own command) or a floor player (``floor:blue``, ``games.players``: cash chips on a live
table, entered by staff). Where a player may send it himself it may be omitted: it is then
the actor himself (staff must name the player).
"""

from __future__ import annotations

from typing import Annotated, Any, Literal, TypeVar, get_args

import msgspec

from games.commands import Command as GameCommand
from games.errors import GameError
from games.validation import Amount, Name, Text, validated

from .limits import TableSettings

Turns = Annotated[int, msgspec.Meta(ge=0, le=1_000)]  # ball turns: a sane bound
MAX_SOCIETA = 64  # members of one società


# (msgspec makes only a class's own fields keyword-only, and a type checker reads
# ``frozen`` per class: each command repeats both options of the base.)
# An RNG spin's secret: 32 bytes as 64 lowercase hex digits (``roulette.fair``), or none.
Seed = Annotated[str, msgspec.Meta(max_length=64, pattern="^([0-9a-f]{64})?$")]


class OpenSpin(GameCommand, tag="open_spin", frozen=True, kw_only=True):
    """"Faites vos jeux": opens the table, or the next spin after a settlement. At an RNG
    table the server puts the spin's secret ``seed`` in (never a client: ``server.kinds``):
    the table publishes its commitment, and the result must be the number it gives."""

    seed: Seed = ""


class RefundSpin(GameCommand, tag="refund_spin", frozen=True, kw_only=True):
    """The open spin ends without a number: every bet placed on it comes back and its
    committed seed is revealed. The server's after a crash cut a spin off while it took
    bets (its players may be gone); the director's for a wheel that cannot be launched."""

    reason: Text


class PlaceBet(GameCommand, tag="place_bet", frozen=True, kw_only=True):
    player: Name | None = None  # omitted: the actor himself
    spot: Name  # "plein 17", "cheval 0/3", "rouge", ...
    amount: Amount


class PlaceAnnounced(GameCommand, tag="place_announced", frozen=True, kw_only=True):
    player: Name | None = None  # omitted: the actor himself
    announce: Name  # "voisins du zéro", "finale à cheval 1/2", "17 et 2 voisins", ...
    unit: Amount  # per piece unit; the total is unit x the announcement's units


class SameAgain(GameCommand, tag="same_again", frozen=True, kw_only=True):
    """Restate the player's bets of the previous spin (Art. 18)."""

    player: Name | None = None  # omitted: the actor himself


class WithdrawBet(GameCommand, tag="withdraw_bet", frozen=True, kw_only=True):
    """Take a bet back before the launch (a piece takes its whole announcement)."""

    wager: Name


class LaunchBall(GameCommand, tag="launch_ball", frozen=True, kw_only=True):
    pass


class AcceptLate(GameCommand, tag="accept_late", frozen=True, kw_only=True):
    late: Name


class RefuseLate(GameCommand, tag="refuse_late", frozen=True, kw_only=True):
    late: Name
    reason: Text = ""


class NoMoreBets(GameCommand, tag="no_more_bets", frozen=True, kw_only=True):
    """"Rien ne va plus"."""


class Result(GameCommand, tag="result", frozen=True, kw_only=True):
    number: int  # 0-36; the engine answers anything else with ``number_out_of_range``
    source: Literal["rng", "croupier", "wheel_reader"] = "rng"
    # Wheel-reader data (Art. 10-11): fewer than three turns or the ball running the
    # wheel's way voids the spin.
    turns: Turns | None = None
    ball_direction: Literal["opposite", "same"] | None = None


class VoidSpin(GameCommand, tag="void_spin", frozen=True, kw_only=True):
    """"Rien va" (Art. 11): back to before the launch, every bet in place."""

    reason: Text


class LastSpin(GameCommand, tag="last_spin", frozen=True, kw_only=True):
    """"La dernière" (Art. 14): the table closes after this spin."""


class Suspend(GameCommand, tag="suspend", frozen=True, kw_only=True):
    """Art. 15: the Direzione Giochi suspends the game: sent by the director, or by a chef
    de table with ``authorised_by`` naming the director who authorised it (the server
    fills it from a recorded authorisation)."""

    reason: Text = ""
    authorised_by: Text = ""


class CloseTable(GameCommand, tag="close_table", frozen=True, kw_only=True):
    """Art. 15: the Direzione Giochi ends the game; authorised as ``Suspend``."""

    reason: Text = ""
    authorised_by: Text = ""


class ChoosePartage(GameCommand, tag="choose_partage", frozen=True, kw_only=True):
    """Take half of an imprisoned bet back now instead of waiting."""

    wager: Name


class SetPartagePreference(GameCommand, tag="set_partage_preference", frozen=True, kw_only=True):
    player: Name | None = None  # omitted: the actor himself
    partage: bool


class MovePrisoner(GameCommand, tag="move_prisoner", frozen=True, kw_only=True):
    wager: Name
    to: Name  # another simple chance


class RegisterSocieta(GameCommand, tag="register_societa", frozen=True, kw_only=True):
    name: Name
    members: Annotated[list[Name], msgspec.Meta(max_length=MAX_SOCIETA)]


class ChangeSettings(GameCommand, tag="change_settings", frozen=True, kw_only=True):
    """The director's new settings from the next spin: the minimum, and maxima no higher
    than the regulation's (Art. 5); ``currency`` and ``live`` never change, raises come
    only through ``RaiseLimit``."""

    settings: TableSettings
    reason: Text = ""


class RaiseLimit(GameCommand, tag="raise_limit", frozen=True, kw_only=True):
    """The director's raise of the plein or cheval maximum (Art. 5), agreed with the
    municipal control service: sent by the director, ``control_officer`` who agreed."""

    kind: Name  # "plein" or "cheval"; any other kind: ``raise_not_allowed``
    maximum: Amount
    control_officer: Text  # empty: refused with ``missing_authorisation``
    reason: Text = ""


class MarkUnclaimed(GameCommand, tag="mark_unclaimed", frozen=True, kw_only=True):
    """Art. 19: the chef declares a floor player's chips abandoned on the layout (while
    bets are open) or their last wins unclaimed (after the settlement), at a live table."""

    player: Name


Command = (
    OpenSpin | PlaceBet | PlaceAnnounced | SameAgain | WithdrawBet | LaunchBall
    | AcceptLate | RefuseLate | NoMoreBets | Result | VoidSpin | LastSpin | Suspend
    | CloseTable | ChoosePartage | SetPartagePreference | MovePrisoner | RegisterSocieta
    | ChangeSettings | RaiseLimit | MarkUnclaimed | RefundSpin
)  # fmt: skip
# Each command's wire tag (``type``), in the union's order: the vocabulary of the phase
# table (``roulette.phases``), the role rules (``roulette.roles``) and ``legal_commands``.
TAG: dict[type[GameCommand], str] = {cls: str(cls.__struct_config__.tag) for cls in get_args(Command)}
TAGS: tuple[str, ...] = tuple(TAG.values())


T = TypeVar("T")


def checked(command: T) -> T:
    """``command`` with every field within its bounds, as decoding would have checked it
    (for commands built in Python too): first the precise codes the engine has always
    given for some malformed values (a fractional amount, a number off the wheel, an empty
    player), then ``validated`` (``invalid_command``, naming the field)."""
    _precise(command)
    return bounded(command)


def bounded(value: T) -> T:
    """``games.validation.validated``, also for values msgspec cannot represent."""
    try:
        return validated(value)
    except (TypeError, ValueError, OverflowError) as exc:
        raise GameError("invalid_command", str(exc)) from None


def check_amount(amount: Any) -> None:
    if type(amount) is not int:
        raise GameError(
            "invalid_amount", f"{amount!r} is not an amount: bets are whole numbers of the smallest unit."
        )
    if amount <= 0:
        raise GameError("invalid_amount", "A bet must be more than zero.")


def _precise(command: Any) -> None:
    if isinstance(command, PlaceBet):
        check_amount(command.amount)
    elif isinstance(command, PlaceAnnounced):
        check_amount(command.unit)
    elif isinstance(command, Result):
        if type(command.number) is not int:
            raise GameError("number_out_of_range", f"{command.number!r} is not a number of this wheel (0-36).")
        if command.turns is not None and (type(command.turns) is not int or command.turns < 0):
            raise GameError("invalid_wheel_data", "Ball turns must be a whole number >= 0.")
        if command.ball_direction not in (None, "opposite", "same"):
            raise GameError("invalid_wheel_data", "Ball direction is 'opposite' or 'same'.")
    elif isinstance(command, SetPartagePreference) and type(command.partage) is not bool:
        raise GameError("invalid_preference", "Partage is on or off.")
    named = isinstance(command, (PlaceBet, PlaceAnnounced, SameAgain, SetPartagePreference))
    if named and command.player is not None and (not isinstance(command.player, str) or not command.player):
        # (an omitted player is the actor himself: ``roles.named``)
        raise GameError("unknown_player", "Name the player the command is for.")
