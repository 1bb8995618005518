"""Events the blackjack engine emits, besides the money events of ``games.wagers``."""

from __future__ import annotations

from typing import Literal

import msgspec

from blackjack.jackpot import JackpotRoundReport, JackpotRoundStarted, MetersChanged
from games.wagers import (
    ChipsUnclaimed,
    StackIssued,
    StackReturned,
    WagerPlaced,
    WagerRefunded,
    WagerSettled,
    WagerVoided,
)


class _Ev(msgspec.Struct, frozen=True, kw_only=True, tag_field="type", gc=False):
    pass


class ShoeShuffled(_Ev, tag="shoe_shuffled", frozen=True):
    cards: int
    # sha256 of the order: the server can publish it now and reveal the order later.
    commitment: str


class ShoeCut(_Ev, tag="shoe_cut", frozen=True):
    by: str
    at: int
    chosen: bool  # False: the player passed and the cut point was drawn


class CutPassed(_Ev, tag="cut_passed", frozen=True):
    """``player`` declined the cut (``by``: he, or the server on his time-out, or the
    croupier for a floor player); it is now offered to ``to`` ("" = the house cuts)."""

    player: str
    to: str
    by: str


class CardsBurned(_Ev, tag="cards_burned", frozen=True):
    count: int


class ShoeEnded(_Ev, tag="shoe_ended", frozen=True):
    cut_entitled: str  # who may cut the next shoe ("" = staff)


class SeatTaken(_Ev, tag="seat_taken", frozen=True):
    player: str
    box: int


class SeatLeft(_Ev, tag="seat_left", frozen=True):
    player: str
    box: int


class SeatReleased(_Ev, tag="seat_released", frozen=True):
    """Staff or the server freed ``player``'s seat (a disconnection time-out, the table
    closing); his open bets went back just before."""

    player: str
    box: int
    reason: str


class TableClosed(_Ev, tag="table_closed", frozen=True):
    """The table is closed (phase ``closed``) until a staff ``Shuffle`` reopens it."""

    reason: str
    by: str
    authorised_by: str  # the director who authorised a chef's closing ("" = a director closed it)


class RoundOpened(_Ev, tag="round_opened", frozen=True):
    round: int
    min_bet: int
    max_bet: int
    button: int  # 0: the profile has no button


class LimitsChanged(_Ev, tag="limits_changed", frozen=True, omit_defaults=True):
    by: str
    min_bet: int
    max_bet: int
    from_round: int
    # (omitted when empty: an event stored before it existed replays byte for byte)
    reason: str = ""


class BetsClosed(_Ev, tag="bets_closed", frozen=True):
    round: int
    by: str
    order: list[int]  # boxes in dealing order
    holders: list[str]


class CardDealt(_Ev, tag="card_dealt", frozen=True):
    box: int  # 0 = dealer
    hand: int
    card: int


class HoleCardDealt(_Ev, tag="hole_card_dealt", frozen=True):
    pass


class HoleCardShown(_Ev, tag="hole_card_shown", frozen=True):
    card: int


class CutCardOut(_Ev, tag="cut_card_out", frozen=True):
    round: int


class OffersOpened(_Ev, tag="offers_opened", frozen=True):
    insurance: bool
    even_money: list[int]  # boxes with a blackjack that may take even money
    waiting: list[str]  # "player@box" still to answer


class OffersClosed(_Ev, tag="offers_closed", frozen=True):
    pass


class Turn(_Ev, tag="turn", frozen=True):
    box: int
    hand: int
    player: str


class Acted(_Ev, tag="acted", frozen=True):
    box: int
    hand: int
    action: str
    by: str


class BehindAsked(_Ev, tag="behind_asked", frozen=True):
    box: int
    hand: int
    action: str  # "double" | "split"
    players: list[str]


class BehindChose(_Ev, tag="behind_chose", frozen=True):
    box: int
    player: str
    choice: str


class HandDone(_Ev, tag="hand_done", frozen=True):
    box: int
    hand: int
    total: int
    bust: bool


class DealerDone(_Ev, tag="dealer_done", frozen=True):
    total: int
    blackjack: bool
    bust: bool
    drew: bool  # False: every box was decided and no insurance stood


class RoundSettled(_Ev, tag="round_settled", frozen=True):
    round: int
    last_of_shoe: bool


class RoundVoided(_Ev, tag="round_voided", frozen=True):
    round: int
    by: str
    reason: str
    boxes: list[int]  # [] = the whole round


class CardBurned(_Ev, tag="card_burned", frozen=True):
    by: str
    card: int


class CardExposed(_Ev, tag="card_exposed", frozen=True):
    by: str
    card: int


class ButtonMoved(_Ev, tag="button_moved", frozen=True):
    box: int


class ShoeRanShort(_Ev, tag="shoe_ran_short", frozen=True):
    # "void": the round is void (Titano Art. 7); "reshuffle": the discards are shuffled
    # (a Shuffle command of exactly those cards) and the round goes on.
    action: Literal["void", "reshuffle"]


class ReshuffleOrdered(_Ev, tag="reshuffle_ordered", frozen=True):
    by: str
    after_round: bool  # False: the shoe ended at once


# -- tournament tables (Titano Art. 22-27) ----------------------------------------------------


class TournamentSeated(_Ev, tag="tournament_seated", frozen=True):
    """A tournament phase is seated here: who sits where with how many points (each stack
    issued by a ``games.wagers.StackIssued`` just after), the limits and the shoes to play."""

    order: int
    tournament: str
    phase: int
    shoes: int
    min_bet: int
    max_bet: int
    seats: dict[str, int]  # player -> box
    stacks: dict[str, int]  # player -> points


class TournamentPaused(_Ev, tag="tournament_paused", frozen=True):
    order: int
    paused: bool
    reason: str


class AbsentCharged(_Ev, tag="absent_charged", frozen=True):
    """Art. 27: a seated player who did not bet this hand (absent, or silent) is charged the
    minimum (his whole stack if he has less); the wager events just before move the points."""

    player: str
    hand: int
    amount: int


class PlayerEliminated(_Ev, tag="player_eliminated", frozen=True):
    """Art. 24: ``player`` has no points left after ``hand`` (the phase's hand number at this
    table); ``stack_before``: his points when that hand opened (Art. 25's tie order)."""

    player: str
    phase: int
    hand: int
    stack_before: int


class PlayerExpelled(_Ev, tag="player_expelled", frozen=True):
    """Art. 27: the director expelled ``player``; his ``stack`` went back to the house."""

    order: int
    player: str
    phase: int
    hand: int
    stack: int
    reason: str


class HandStandings(_Ev, tag="hand_standings", frozen=True):
    """After each hand of a tournament phase: every player still in and his points."""

    phase: int
    hand: int
    stacks: dict[str, int]
    shoes_done: int


class TournamentTableDone(_Ev, tag="tournament_table_done", frozen=True):
    """The phase is over at this table (its shoes played, or nobody left): the final
    stacks, each handed back (``games.wagers.StackReturned``) just before."""

    phase: int
    hand: int
    stacks: dict[str, int]
    reason: str = ""  # "": the phase's shoes are played
    order: int = 0  # the ``TournamentEnd`` that ended it (0: none)


# Everything the table emits; Lugano's Blazing 7s adds what the table tells the jackpot
# pool, and the pool's meters.
Event = (
    ShoeShuffled | ShoeCut | CardsBurned | ShoeEnded | SeatTaken | SeatLeft | RoundOpened
    | LimitsChanged | BetsClosed | CardDealt | HoleCardDealt | HoleCardShown | CutCardOut
    | OffersOpened | OffersClosed | Turn | Acted | BehindAsked | BehindChose | HandDone
    | DealerDone | RoundSettled | RoundVoided | CardBurned | CardExposed | ButtonMoved
    | WagerPlaced | WagerSettled | WagerVoided | WagerRefunded | CutPassed | SeatReleased | TableClosed
    | ShoeRanShort | ReshuffleOrdered | JackpotRoundStarted | JackpotRoundReport | MetersChanged
    | TournamentSeated | TournamentPaused | AbsentCharged | PlayerEliminated | PlayerExpelled | HandStandings
    | TournamentTableDone | StackIssued | StackReturned | ChipsUnclaimed
)
