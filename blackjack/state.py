"""The table's state: plain msgspec Structs that round-trip through msgspec encoding,
so the server can persist them with the ledger and rebuild the engine after a crash."""

from __future__ import annotations

from typing import Literal

import msgspec

from blackjack.phases import Phase
from blackjack.profiles import Profile
from blackjack.wager_kinds import WagerKind


class Wager(msgspec.Struct, gc=False):
    """One pile of chips with one owner: one games.wagers id."""

    id: str
    player: str
    kind: WagerKind
    amount: int
    hand: int = 0  # the hand it rides on (-1: not on a hand, e.g. insurance)
    settled: bool = False
    excess: int = 0  # part above the maximum: never paid, returned on a loss
    # What the bank kept of the stake when it was settled (stake - returned): given back by
    # a WagerRefunded if the round is annulled after all (Titano Art. 7, a short shoe).
    kept: int = 0
    paid: int = 0  # what its settlement paid back (returned + won): the round's wins per player


class Hand(msgspec.Struct, gc=False):
    cards: list[int]
    split: bool = False  # made by a split: never a blackjack
    split_aces: bool = False  # one card each
    tens_ace: bool = False  # Campione: split ten + ace, may go on as 11
    doubled: bool = False
    blackjack: bool = False
    done: bool = False


class Box(msgspec.Struct, gc=False):
    number: int
    holder: str
    wagers: list[Wager]
    hands: list[Hand]


class Bet(msgspec.Struct, gc=False):
    """A stake placed while betting is open; at the close it becomes a box or behind wager."""

    box: int
    player: str
    amount: int
    wager: str
    excess: int = 0


class SideBet(msgspec.Struct, gc=False):
    """A side bet placed while betting is open (Lugano); a box wager from the close."""

    box: int
    player: str
    kind: WagerKind
    amount: int
    wager: str


class CardTarget(msgspec.Struct, frozen=True, gc=False):
    """Where the next card due goes: hand ``hand`` of box ``box`` (a box number, as in the
    ``Card`` command), or the dealer (box 0), face down if it is his ``hole`` card."""

    box: int
    hand: int = 0
    hole: bool = False


DEALER = CardTarget(0)
HOLE = CardTarget(0, hole=True)


class Offer(msgspec.Struct, frozen=True, order=True, gc=False):
    """Insurance or even money still to be answered by ``player`` for his stake on ``box``."""

    player: str
    box: int

    def label(self) -> str:
        """How events and views name it: ``"player@box"``."""
        return f"{self.player}@{self.box}"


class PendingExpulsion(msgspec.Struct, frozen=True, gc=False):
    player: str
    order: int
    reason: str


class TournamentPlay(msgspec.Struct, gc=False):
    """A tournament phase being played at this table (``TournamentSeat``; Titano Art. 24-27).
    Points a player holds off the felt are ``stacks``; what he has on the felt is in the
    round's bets and wagers, so a stack plus his open wagers is his ledger balance."""

    tournament: str
    phase: int
    shoes: int
    shoes_done: int = 0
    hand: int = 0  # hands opened in this phase at this table (the elimination clock)
    stacks: dict[str, int] = {}
    before: dict[str, int] = {}  # the stacks when the current hand opened
    paused: bool = False
    # Orders that wait for the hand in play to end: expulsions, the phase's end.
    expelled: list[PendingExpulsion] = []
    ending: str = ""  # a TournamentEnd's reason, until the hand ends
    ending_order: int = 0
    done: bool = False


class TableState(msgspec.Struct, gc=False):
    table_id: str
    profile: Profile
    live: bool
    min_bet: int
    max_bet: int
    phase: Phase = Phase.SHUFFLE
    round: int = 1
    next_limits: list[int] = []  # [min, max] from the next round
    seats: list[str] = msgspec.field(default_factory=lambda: [""] * 8)  # index = box
    button: int = 0
    # The shoe. RNG tables: ``order`` is the cut shoe, ``pos`` the next card. Live tables:
    # ``left`` counts what is still unseen of each card int (burned cards stay unseen).
    order: list[int] = []
    pos: int = 0
    cut_index: int = -1
    left: list[int] = []
    exposed: int = -1  # a misdrawn card lying face up, next to be given (Art. 24)
    last_round: bool = False
    reshuffle_after: bool = False
    cut_entitled: str = ""
    # Campione Art. 30: the box holders the cut passes to, in turn, if ``cut_entitled``
    # declines ([] = the house next).
    cut_chain: list[str] = []
    # The round.
    bets: list[Bet] = []
    boxes: list[Box] = []  # in dealing order
    dealer: list[int] = []
    hole_hidden: bool = False
    deal_queue: list[CardTarget] = []  # where the cards due go, in order
    turn_box: int = 0  # index into boxes
    turn_hand: int = 0
    offers: list[Offer] = []  # insurance / even money still to answer
    behind: list[str] = []  # players behind still to answer a double or split
    behind_action: Literal["", "double", "split"] = ""
    insurance_done: bool = False
    resume_phase: str = ""  # the phase a short shoe interrupted ("": none)
    seq: int = 0  # wager counter, for unique ids
    wager_serial: int = 0  # across rounds, bets placed while betting
    side_bets: list[SideBet] = []
    # Blazing 7s: this round entered the jackpot pool and has not reported to it yet.
    jackpot_entered: bool = False
    jackpot_meters: list[int] = []  # [minor, major] as the pool last announced them
    # A tournament table (Titano Art. 22-27): seats are drawn, not taken; it plays only the
    # phases the coordinator seats here (``tournament``), in points. ``tournament_order``:
    # the last coordinator order applied here (orders are applied once).
    tournament_table: bool = False
    tournament: TournamentPlay | None = None
    tournament_order: int = 0
    # What the last round paid each floor player (returned + won), until the next one ends:
    # what the chef may record as wins left on the felt (Campione Art. 37, ``mark_unclaimed``).
    last_paid: dict[str, int] = {}
