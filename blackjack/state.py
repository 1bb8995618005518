"""The table's state: plain msgspec Structs that round-trip through msgspec encoding,
so the server can persist them with the ledger and rebuild the engine after a crash."""

from __future__ import annotations

import msgspec

from blackjack.profiles import Profile

# Phases while a round is under way (a shoe that ran short mid-round included), and those
# in which a burned card can be recorded at a house that burns misdrawn cards.
ROUND_PHASES = frozenset(("dealing", "offers", "play", "dealer", "reshuffle"))
BURN_PHASES = frozenset(("dealing", "offers", "play", "dealer"))

# Wager kinds. Lugano's side bets add kinds here, each with its own settle function.
BOX = "box"  # the box holder's stake
BEHIND = "behind"  # a stake behind someone else's box
DOUBLE = "double"
SPLIT = "split"
INSURANCE = "insurance"
# Free Bet (Lugano): the house's chip beside a free double or a free split. It is placed
# and voided as 0 of the player's money and, settled, pays its win with a stake of 0.
FREE_DOUBLE = "free_double"
FREE_SPLIT = "free_split"
FREE_KINDS = frozenset((FREE_DOUBLE, FREE_SPLIT))


class Wager(msgspec.Struct, gc=False):
    """One pile of chips with one owner: one games.wagers id."""

    id: str
    player: str
    kind: str
    amount: int
    hand: int = 0  # the hand it rides on (-1: not on a hand, e.g. insurance)
    settled: bool = False
    excess: int = 0  # part above the maximum: never paid, returned on a loss
    # What the bank kept of the stake when it was settled (stake - returned): given back by
    # a WagerRefunded if the round is annulled after all (Titano Art. 7, a short shoe).
    kept: int = 0


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
    kind: str
    amount: int
    wager: str


class TableState(msgspec.Struct, gc=False):
    table_id: str
    profile: Profile
    live: bool
    min_bet: int
    max_bet: int
    # shuffle, cut, betting, dealing, offers, play, dealer, reshuffle; closed (CloseTable,
    # until a staff Shuffle reopens the table)
    phase: str = "shuffle"
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
    need: list[int] = []  # who the next cards go to: box_index * 8 + hand, or -1 the dealer
    turn_box: int = 0  # index into boxes
    turn_hand: int = 0
    offers: list[str] = []  # "player@box" still to answer insurance / even money
    behind: list[str] = []  # players behind still to answer a double or split
    behind_action: str = ""
    insurance_done: bool = False
    resume_phase: str = ""  # the phase a short shoe interrupted
    seq: int = 0  # wager counter, for unique ids
    wager_serial: int = 0  # across rounds, bets placed while betting
    side_bets: list[SideBet] = []
    # Blazing 7s: this round entered the jackpot pool and has not reported to it yet.
    jackpot_entered: bool = False
    jackpot_meters: list[int] = []  # [minor, major] as the pool last announced them
