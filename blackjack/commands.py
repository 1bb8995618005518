"""Commands the server sends the blackjack engine (a tagged msgspec union).

Every command says who issues it: ``by`` is a player id or a staff id, ``role`` one of
``player``, ``croupier``, ``chef`` or ``system`` (the server acting on a time-out: it may
only do what a silent player would, e.g. stand, decline an offer, pass the cut).
Boxes are numbered 1..7 from the dealer's left; box 0 is the dealer. Hands are 0-based.
"""

from __future__ import annotations

from typing import Literal

import msgspec

Role = Literal["player", "croupier", "chef", "system"]
STAFF = frozenset(("croupier", "chef"))


class _Cmd(msgspec.Struct, frozen=True, kw_only=True, tag_field="type", forbid_unknown_fields=True):
    by: str
    role: Role = "player"


# -- shoe ---------------------------------------------------------------------------------


class Shuffle(_Cmd, tag="shuffle"):
    """A freshly shuffled shoe (RNG tables: the order, from ``shoe.shuffle_order``).
    On a live table ``order`` is empty: the cards are then entered one by one.
    ``salt``: random text from the server, hashed with the order into the commitment and
    revealed with it after the shoe."""

    order: list[int] = []
    salt: str = ""


class Cut(_Cmd, tag="cut"):
    """The entitled player cuts at ``at`` cards, or passes (``at`` None) and the shoe is
    cut at ``random_at``, drawn by the server."""

    at: int | None = None
    random_at: int | None = None


class Reshuffle(_Cmd, tag="reshuffle"):
    """End the shoe: now if no round is under way, else after the current round."""


class CutCardOut(_Cmd, tag="cut_card_out"):
    """Live tables: the croupier reports that the cut card came out."""


# -- seats and bets -----------------------------------------------------------------------


class Sit(_Cmd, tag="sit"):
    box: int


class Leave(_Cmd, tag="leave"):
    pass


class PlaceBet(_Cmd, tag="place_bet"):
    """A player's stake on a box. On a live table the croupier may enter chips already on
    the felt for ``player``; any excess over the maximum is then kept apart (Titano Art. 9:
    not paid on a win, returned on a loss) instead of refused."""

    box: int
    amount: int
    player: str = ""


class WithdrawBet(_Cmd, tag="withdraw_bet"):
    box: int


class PlaceSideBet(_Cmd, tag="place_side_bet"):
    """Lugano: a side bet beside the player's own bet on ``box``, before the first card.
    ``currency`` says what chips they are ("" = the table's); Blazing 7s takes CHF only,
    a fixed stake, and only from the box holder."""

    box: int
    bet: Literal["perfect_pairs", "21+3", "push_22", "blazing_7s"]
    amount: int
    currency: str = ""


class WithdrawSideBet(_Cmd, tag="withdraw_side_bet"):
    box: int
    bet: Literal["perfect_pairs", "21+3", "push_22", "blazing_7s"]


class JackpotMeters(_Cmd, tag="jackpot_meters"):
    """The server relays the linked jackpot's meters (``jackpot.MetersChanged``) so every
    client of the table sees them move. Staff or system only."""

    minor: int
    major: int


class CloseBets(_Cmd, tag="close_bets"):
    """"Rien ne va plus": the croupier closes betting and the deal begins."""


class SetLimits(_Cmd, tag="set_limits"):
    """New table minimum and maximum, in force from the next round."""

    min_bet: int
    max_bet: int


# -- cards on a live table ----------------------------------------------------------------


class Card(_Cmd, tag="card"):
    """Live tables: the card the croupier console or shoe reader saw going to ``box``
    (0 = dealer) / ``hand``."""

    card: int
    box: int
    hand: int = 0


# -- offers after the deal ----------------------------------------------------------------


class Insure(_Cmd, tag="insure"):
    box: int
    amount: int


class EvenMoney(_Cmd, tag="even_money"):
    box: int


class DeclineOffer(_Cmd, tag="decline_offer"):
    box: int


class CloseOffers(_Cmd, tag="close_offers"):
    """The croupier moves on: whoever has not answered declined."""


# -- decisions ----------------------------------------------------------------------------


class Hit(_Cmd, tag="hit"):
    box: int
    hand: int = 0


class Stand(_Cmd, tag="stand"):
    box: int
    hand: int = 0


class Double(_Cmd, tag="double"):
    box: int
    hand: int = 0


class Split(_Cmd, tag="split"):
    box: int
    hand: int = 0


class BehindDouble(_Cmd, tag="behind_double"):
    """A player behind answers the box holder's double: double too, or not."""

    box: int
    accept: bool = False


class BehindSplit(_Cmd, tag="behind_split"):
    """A player behind answers the box holder's split: follow the ``first`` or
    ``second`` hand, or put up a second stake and follow ``both``."""

    box: int
    choice: Literal["first", "second", "both"] = "first"


# -- croupier actions ---------------------------------------------------------------------


class VoidRound(_Cmd, tag="void_round"):
    """Misdeal (Campione Art. 19, Titano Art. 18): the whole round, or only ``boxes``."""

    reason: str = "misdeal"
    boxes: list[int] = []


class BurnCard(_Cmd, tag="burn_card"):
    """A card turned in the shoe during the drawing is eliminated (Campione Art. 17,
    Titano Art. 17). Live tables give the card; RNG tables burn the next one."""

    card: int | None = None


class ExposeCard(_Cmd, tag="expose_card"):
    """A card drawn by mistake (Campione Art. 24): it lies face up and goes to the next
    hand that asks for a card, else to the dealer."""

    card: int | None = None


Command = (
    Shuffle | Cut | Reshuffle | CutCardOut | Sit | Leave | PlaceBet | WithdrawBet | CloseBets
    | SetLimits | PlaceSideBet | WithdrawSideBet | JackpotMeters | Card | Insure | EvenMoney | DeclineOffer | CloseOffers | Hit | Stand | Double
    | Split | BehindDouble | BehindSplit | VoidRound | BurnCard | ExposeCard
)

_decoder = msgspec.json.Decoder(Command)


def decode_command(data: bytes | str) -> Command:
    """Parse a JSON command; a malformed one is a GameError(malformed_command)."""
    from games.errors import GameError

    try:
        return _decoder.decode(data)
    except (msgspec.ValidationError, msgspec.DecodeError) as exc:
        raise GameError("malformed_command", f"That command could not be read: {exc}.") from None
