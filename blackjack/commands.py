"""Commands the server sends the blackjack engine (a tagged msgspec union).

A command says what is asked, never who asks: ``BlackjackTable.handle(command, actor)``
takes the ``games.commands.Actor`` apart (a player, staff, or ``system``: the server acting
on a time-out, which may only do what a silent player would, e.g. stand, decline an offer,
pass the cut; or what the house does without a person: shuffle and close the bets at an
RNG table, release a seat, void a round cut off by a crash).
Only a player stakes his own money. Staff enter chips and decisions only for *floor
players* (``games.players``: ``floor:<label>``, a person with cash chips at a live table),
naming them in ``player``; a player's own commands name nobody else (``""``: himself).
Boxes are numbered 1..7 from the dealer's left; box 0 is the dealer. Hands are 0-based.

Every field is bounded here (msgspec ``Meta``); ``BlackjackTable.handle`` applies the
bounds to commands built in Python too (``games.validation.validated``), so an amount is
always a whole number of minor units within int64 before the table's own limits apply.
"""

from __future__ import annotations

from typing import Annotated, Literal

import msgspec

from games.commands import Command as _Command
from games.validation import MAX_AMOUNT, Amount, MaybeName, Name, Text

# Bounds. A player's box is 1..7; ``Card`` and a time-out's ``DeclineOffer`` also take 0
# (the dealer, every offer). A profile allows at most 8 hands a box, so a hand is 0..7.
# ``Sit.box``, card numbers and jackpot meters are only bounded to int64 here: the engine
# refuses the rest with its own precise codes (``no_such_box``, ``not_a_card``, ``bad_meters``).
BoxNumber = Annotated[int, msgspec.Meta(ge=1, le=7)]
BoxOrDealer = Annotated[int, msgspec.Meta(ge=0, le=7)]
HandIndex = Annotated[int, msgspec.Meta(ge=0, le=7)]
Int64 = Annotated[int, msgspec.Meta(ge=-MAX_AMOUNT - 1, le=MAX_AMOUNT)]
CardNumber = Annotated[int, msgspec.Meta(ge=0, le=MAX_AMOUNT)]
CutPoint = Annotated[int, msgspec.Meta(ge=0, le=MAX_AMOUNT)]
ShoeCard = Annotated[int, msgspec.Meta(ge=0, le=51)]
SideBetKind = Literal["perfect_pairs", "21+3", "push_22", "blazing_7s"]


# -- shoe ---------------------------------------------------------------------------------


class Shuffle(_Command, tag="shuffle", frozen=True):
    """A freshly shuffled shoe (RNG tables: the order, from ``shoe.shuffle_order``).
    On a live table ``order`` is empty: the cards are then entered one by one.
    ``salt``: random text from the server, hashed with the order into the commitment and
    revealed with it after the shoe. Staff shuffling a closed table reopens it."""

    order: Annotated[list[ShoeCard], msgspec.Meta(max_length=8 * 52)] = []
    salt: Text = ""


class Cut(_Command, tag="cut", frozen=True):
    """The entitled player cuts at ``at`` cards. ``at`` None: he passes and the house cuts
    at ``random_at`` (drawn by the server) at once, which is allowed only where nobody is
    left to offer the cut to (else ``PassCut``). With nobody entitled, the house cuts:
    staff at ``at`` (or ``random_at``), the server (``system``) at ``random_at``."""

    at: CutPoint | None = None
    random_at: CutPoint | None = None


class PassCut(_Command, tag="pass_cut", frozen=True):
    """The entitled player declines the cut (``system``: his time-out). Campione
    Art. 30 (``cut_passes_left``): it goes to the next box holder on his left, and to the
    house when all have declined; elsewhere straight to the house."""


class Reshuffle(_Command, tag="reshuffle", frozen=True):
    """End the shoe: now if no round is under way, else after the current round."""


class CutCardOut(_Command, tag="cut_card_out", frozen=True):
    """Live tables: the croupier reports that the cut card came out."""


# -- seats and bets -----------------------------------------------------------------------


class Sit(_Command, tag="sit", frozen=True):
    box: Int64


class Leave(_Command, tag="leave", frozen=True):
    pass


class ReleaseSeat(_Command, tag="release_seat", frozen=True):
    """Staff or the server (``system``, after the house's disconnection time-out) free
    the seat at ``box`` between rounds; while betting is open the seated player's bets and
    side bets go back to him."""

    box: BoxNumber
    reason: Text


class PlaceBet(_Command, tag="place_bet", frozen=True):
    """A player's stake on a box. On a live table staff may enter chips already on the felt
    for a floor player named in ``player``; any excess over the maximum is then kept apart
    (Titano Art. 9: not paid on a win, returned on a loss) instead of refused, up to
    ``ENTERED_MAX_FACTOR`` times the maximum."""

    box: BoxNumber
    amount: Amount
    player: MaybeName = ""


class WithdrawBet(_Command, tag="withdraw_bet", frozen=True):
    box: BoxNumber
    player: MaybeName = ""  # staff, for a floor player on a live table


class PlaceSideBet(_Command, tag="place_side_bet", frozen=True):
    """Lugano: a side bet beside the player's own bet on ``box``, before the first card.
    ``currency`` says what chips they are ("" = the table's); Blazing 7s takes CHF only,
    a fixed stake, and only from the box holder."""

    box: BoxNumber
    bet: SideBetKind
    amount: Amount
    currency: Annotated[str, msgspec.Meta(max_length=8)] = ""
    player: MaybeName = ""  # staff, for a floor player on a live table


class WithdrawSideBet(_Command, tag="withdraw_side_bet", frozen=True):
    box: BoxNumber
    bet: SideBetKind
    player: MaybeName = ""  # staff, for a floor player on a live table


class JackpotMeters(_Command, tag="jackpot_meters", frozen=True):
    """The server relays the linked jackpot's meters (``jackpot.MetersChanged``) so every
    client of the table sees them move. Staff or system only."""

    minor: Int64
    major: Int64


class CloseBets(_Command, tag="close_bets", frozen=True):
    """"Rien ne va plus": the croupier closes betting and the deal begins."""


class SetLimits(_Command, tag="set_limits", frozen=True):
    """New table minimum and maximum, in force from the next round; ``reason`` goes into the
    limits' history and the audit."""

    min_bet: Amount
    max_bet: Amount
    reason: Text = ""


class MarkUnclaimed(_Command, tag="mark_unclaimed", frozen=True):
    """Campione Art. 37: "le vincite, ritenute dal capo tavolo abbandonate, saranno
    ritirate": between rounds the chef records what the last round paid a floor player who
    left it on the felt; it goes to the table's unclaimed register (``ChipsUnclaimed``), and
    to the table's float if nobody claims it."""

    player: Name


class CloseTable(_Command, tag="close_table", frozen=True):
    """Close the table between rounds (Campione roulette Art. 15 gives it to the Direzione
    Giochi): a director, or a chef with ``authorised_by`` naming the director whose
    recorded authorisation the server found. Bets and side bets go back, every seat is
    freed; a staff ``Shuffle`` reopens it."""

    reason: Text = ""
    authorised_by: MaybeName = ""


# -- cards on a live table ----------------------------------------------------------------


class Card(_Command, tag="card", frozen=True):
    """Live tables: the card the croupier console or shoe reader saw going to ``box``
    (0 = dealer) / ``hand``."""

    card: CardNumber
    box: BoxOrDealer
    hand: HandIndex = 0


# -- offers after the deal ----------------------------------------------------------------


class Insure(_Command, tag="insure", frozen=True):
    box: BoxNumber
    amount: Amount
    player: MaybeName = ""  # staff, for a floor player on a live table


class EvenMoney(_Command, tag="even_money", frozen=True):
    box: BoxNumber
    player: MaybeName = ""  # staff, for a floor player on a live table


class DeclineOffer(_Command, tag="decline_offer", frozen=True):
    # 0: a time-out's (``system``) answer for every offer still open.
    box: BoxOrDealer
    player: MaybeName = ""  # staff, for a floor player on a live table


class CloseOffers(_Command, tag="close_offers", frozen=True):
    """The croupier moves on: whoever has not answered declined."""


# -- decisions ----------------------------------------------------------------------------
# Staff enter a decision only on a live table and only for a box held by a floor player.


class Hit(_Command, tag="hit", frozen=True):
    box: BoxNumber
    hand: HandIndex = 0


class Stand(_Command, tag="stand", frozen=True):
    box: BoxNumber
    hand: HandIndex = 0


class Double(_Command, tag="double", frozen=True):
    box: BoxNumber
    hand: HandIndex = 0


class Split(_Command, tag="split", frozen=True):
    box: BoxNumber
    hand: HandIndex = 0


class BehindDouble(_Command, tag="behind_double", frozen=True):
    """A player behind answers the box holder's double: double too, or not."""

    box: BoxNumber
    accept: bool = False
    player: MaybeName = ""  # staff, for a floor player on a live table


class BehindSplit(_Command, tag="behind_split", frozen=True):
    """A player behind answers the box holder's split: follow the ``first`` or
    ``second`` hand, or put up a second stake and follow ``both``."""

    box: BoxNumber
    choice: Literal["first", "second", "both"] = "first"
    player: MaybeName = ""  # staff, for a floor player on a live table


# -- croupier actions ---------------------------------------------------------------------


class VoidRound(_Command, tag="void_round", frozen=True):
    """Misdeal (Campione Art. 19, Titano Art. 18): the whole round, or only ``boxes``."""

    reason: Text = "misdeal"
    boxes: Annotated[list[BoxNumber], msgspec.Meta(max_length=7)] = []


class BurnCard(_Command, tag="burn_card", frozen=True):
    """A card turned in the shoe during the drawing is eliminated (Campione Art. 17,
    Titano Art. 17). Live tables give the card; RNG tables burn the next one."""

    card: CardNumber | None = None


class ExposeCard(_Command, tag="expose_card", frozen=True):
    """A card drawn by mistake (Campione Art. 24): it lies face up and goes to the next
    hand that asks for a card, else to the dealer."""

    card: CardNumber | None = None


# -- tournament tables (Titano Art. 22-27): the server relays the coordinator's orders --------


class TournamentEntry(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """One drawn seat: ``player`` at ``box`` with ``stack`` points."""

    box: BoxNumber
    player: Name
    stack: Amount


class TournamentSeat(_Command, tag="tournament_seat", frozen=True):
    """Seat a phase of a tournament (``blackjack.tournament``) at this tournament table:
    the drawn seats, each player's stack issued, the phase's limits and its number of
    shoes. Only between phases (the table has no phase in play). ``order`` is the
    coordinator's number for this table's orders: an order already applied is refused
    (``order_applied``), so the server may send it again until it hears it was applied."""

    order: Annotated[int, msgspec.Meta(ge=1, le=MAX_AMOUNT)]
    tournament: Name
    phase: Annotated[int, msgspec.Meta(ge=1, le=1000)]
    shoes: Annotated[int, msgspec.Meta(ge=1, le=100)]
    min_bet: Amount
    max_bet: Amount
    seats: Annotated[list[TournamentEntry], msgspec.Meta(min_length=1, max_length=7)]


class TournamentPause(_Command, tag="tournament_pause", frozen=True):
    """Pause (no new hand is dealt; the hand in play finishes) or resume the table."""

    order: Annotated[int, msgspec.Meta(ge=1, le=MAX_AMOUNT)]
    paused: bool
    reason: Text = ""


class TournamentExpel(_Command, tag="tournament_expel", frozen=True):
    """Expel ``player`` (Art. 27: passing chips): between hands at once, else at the end of
    the hand in play; his stack goes back to the house."""

    order: Annotated[int, msgspec.Meta(ge=1, le=MAX_AMOUNT)]
    player: Name
    reason: Text = ""


class TournamentEnd(_Command, tag="tournament_end", frozen=True):
    """End the phase at this table now (a cancelled tournament): between hands at once,
    else at the end of the hand in play; every stack goes back to the house."""

    order: Annotated[int, msgspec.Meta(ge=1, le=MAX_AMOUNT)]
    reason: Text = ""


Command = (
    Shuffle | Cut | PassCut | Reshuffle | CutCardOut | Sit | Leave | ReleaseSeat | PlaceBet | WithdrawBet
    | CloseBets | SetLimits | CloseTable | PlaceSideBet | WithdrawSideBet | JackpotMeters | Card | Insure
    | EvenMoney | DeclineOffer | CloseOffers | Hit | Stand | Double | Split | BehindDouble | BehindSplit
    | VoidRound | BurnCard | ExposeCard | TournamentSeat | TournamentPause | TournamentExpel
    | TournamentEnd | MarkUnclaimed
)

