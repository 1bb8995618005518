"""What a viewer may see of a table: everything on the felt, nothing in the shoe.

The shoe's order is never shown (the server reveals it after the shoe, against the
commitment), and the hole card is -1 for everyone until the dealer turns it.
"""

from __future__ import annotations

import msgspec

from blackjack.hands import hand_value
from blackjack.round.sidebets import side_bets_offered
from blackjack.state import TableState

HIDDEN = -1


class WagerView(msgspec.Struct):
    id: str
    player: str
    kind: str
    amount: int
    hand: int
    settled: bool


class HandView(msgspec.Struct):
    cards: list[int]
    total: int
    soft: bool
    blackjack: bool
    doubled: bool
    done: bool


class BoxView(msgspec.Struct):
    number: int
    holder: str
    hands: list[HandView]
    wagers: list[WagerView]


class TournamentView(msgspec.Struct):
    """The tournament phase played at the table: everyone sees the points (Titano Art. 27:
    "i gettoni devono essere tenuti bene in vista sul tavolo")."""

    tournament: str
    phase: int
    shoes: int
    shoes_done: int
    hand: int
    stacks: dict[str, int]  # off the felt; the bets and wagers on it are in bets and boxes
    paused: bool
    done: bool


class TableView(msgspec.Struct):
    table_id: str
    profile: str
    live: bool
    phase: str
    round: int
    min_bet: int
    max_bet: int
    seats: list[str]
    button: int
    bets: list[WagerView]
    boxes: list[BoxView]
    dealer: list[int]
    turn: list[int]  # [box, hand] awaiting a decision, [] if none
    offers: list[str]
    behind: list[str]
    cards_left: int
    last_round: bool
    exposed: int
    cut_entitled: str
    viewer: str | None
    side_bets: list[WagerView] = []  # Lugano side bets placed while betting (hand = box)
    jackpot_meters: list[int] = []  # Blazing 7s [minor, major], as the pool last announced
    cut_chain: list[str] = []  # Campione Art. 30: who is offered the cut after cut_entitled
    # The command types (``type`` tags) the viewer may send now; the server fills it in.
    legal: list[str] = []
    tournament_table: bool = False
    tournament: TournamentView | None = None  # the last phase seated at a tournament table
    # The dealer's cards as everyone sees them: the value of those face up (his hole card
    # counts once it is turned), and whether an ace counts 11 in it.
    dealer_total: int = 0
    dealer_soft: bool = False
    side_bets_offered: list[str] = []  # what ``place_side_bet`` takes here ([] : none)


def table_view(s: TableState, viewer: str | None) -> TableView:
    dealer = list(s.dealer)
    if s.hole_hidden and len(dealer) > 1:
        dealer[1] = HIDDEN
    boxes = []
    for b in s.boxes:
        hands: list[HandView] = []
        for h in b.hands:
            total, soft = hand_value(h.cards)
            hands.append(HandView(list(h.cards), total, soft, h.blackjack, h.doubled, h.done))
        wagers = [WagerView(w.id, w.player, w.kind, w.amount, w.hand, w.settled) for w in b.wagers]
        boxes.append(BoxView(b.number, b.holder, hands, wagers))
    turn: list[int] = []
    if s.phase == "play" and not s.deal_queue and s.turn_box < len(s.boxes):
        turn = [s.boxes[s.turn_box].number, s.turn_hand]
    left = sum(s.left) if s.live else len(s.order) - s.pos
    dealer_total, dealer_soft = hand_value([c for c in dealer if c != HIDDEN])
    return TableView(
        table_id=s.table_id,
        profile=s.profile.name,
        live=s.live,
        phase=s.phase,
        round=s.round,
        min_bet=s.min_bet,
        max_bet=s.max_bet,
        seats=list(s.seats[1:]),
        button=s.button,
        bets=[WagerView(b.wager, b.player, "bet", b.amount, b.box, False) for b in s.bets],
        boxes=boxes,
        dealer=dealer,
        turn=turn,
        offers=[o.label() for o in s.offers],
        behind=list(s.behind),
        cards_left=left,
        last_round=s.last_round,
        exposed=s.exposed,
        cut_entitled=s.cut_entitled,
        viewer=viewer,
        side_bets=[WagerView(b.wager, b.player, b.kind, b.amount, b.box, False) for b in s.side_bets],
        jackpot_meters=list(s.jackpot_meters),
        cut_chain=list(s.cut_chain),
        tournament_table=s.tournament_table,
        tournament=_tournament_view(s),
        dealer_total=dealer_total,
        dealer_soft=dealer_soft,
        side_bets_offered=side_bets_offered(s.profile),
    )


def _tournament_view(s: TableState) -> TournamentView | None:
    t = s.tournament
    if t is None:
        return None
    return TournamentView(t.tournament, t.phase, t.shoes, t.shoes_done, t.hand, dict(t.stacks), t.paused, t.done)
