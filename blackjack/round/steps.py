"""The automatic steps: everything that needs no one's decision (dealing from an RNG shoe,
blackjacks and side bets after the deal, opening the offers, moving the turn, the
dealer's play, settlement), run after a command until the table waits for someone again.
On a live table the engine also waits for each card (``Card``)."""

from __future__ import annotations

from blackjack import events as E
from blackjack.hands import VALUE, is_blackjack
from blackjack.phases import Phase
from blackjack.round.common import Out, settled
from blackjack.round.deal import draw, give
from blackjack.round.dealer import dealer_step, settle_hand, short_shoe
from blackjack.round.sidebets import settle_blazing
from blackjack.settlement import AFTER_DEAL
from blackjack.state import Box, CardTarget, Offer, TableState
from blackjack.wager_kinds import WagerKind
from games.errors import GameError


def run(s: TableState, out: Out) -> None:
    while True:
        if s.deal_queue:
            if s.live:
                return
            card = draw(s, out)
            if card < 0:
                short_shoe(s, out)
                return
            give(s, out, card)
            continue
        ph = s.phase
        if ph == Phase.DEALING:
            if not after_deal(s, out):
                return
        elif ph == Phase.PLAY:
            if s.behind or not advance(s, out):
                return
        elif ph == Phase.DEALER:
            if not dealer_step(s, out):
                return
        else:
            return


def after_deal(s: TableState, out: Out) -> bool:
    """Blackjacks, the side bets settled on the first cards, and the offers; False if the
    table now waits for the offers to be answered."""
    up = VALUE[s.dealer[0]]
    for box in s.boxes:
        h = box.hands[0]
        if is_blackjack(h.cards):
            h.blackjack = h.done = True
    if AFTER_DEAL:
        for box in reversed(s.boxes):
            for w in box.wagers:
                if not w.settled and w.kind in AFTER_DEAL:
                    settled(out, w, AFTER_DEAL[w.kind](w, box, s))
    if s.jackpot_entered:
        settle_blazing(s, out)
    if up != 1 and up != 10:
        # The dealer cannot tie: blackjacks are paid at once.
        for box in reversed(s.boxes):
            if box.hands[0].blackjack:
                settle_hand(s, out, box, 0, 21, True, 0, False)
    offers: list[Offer] = []
    em_boxes: list[int] = []
    for box in s.boxes:
        even_money = even_money_refusal(s, box) is None
        if even_money:
            em_boxes.append(box.number)
        offered = even_money or insurance_refusal(s, box) is None
        for w in box.wagers:
            if w.settled or w.kind not in (WagerKind.BOX, WagerKind.BEHIND):
                continue  # a box voided during the deal (Art. 19) gets no offer
            if offered:
                offers.append(Offer(w.player, box.number))
    s.phase = Phase.PLAY
    if offers:
        s.phase = Phase.OFFERS
        s.offers = offers
        out.append(E.OffersOpened(insurance=up == 1, even_money=em_boxes, waiting=[o.label() for o in offers]))
        return False
    return True


# What a box is offered after the deal is what it may then take (``round.offers``).


def insurance_refusal(s: TableState, box: Box) -> GameError | None:
    if VALUE[s.dealer[0]] != 1:
        return GameError("no_insurance", "Insurance is offered only against an ace.")
    if box.hands[0].blackjack and not s.profile.blackjack_insurable:
        return GameError("blackjack_not_insurable", "At this house a blackjack takes even money, not insurance.")
    return None


def even_money_refusal(s: TableState, box: Box) -> GameError | None:
    if not box.hands[0].blackjack:
        return GameError("no_even_money", "Even money is offered only on a blackjack.")
    if VALUE[s.dealer[0]] not in s.profile.even_money_against:
        return GameError("no_even_money", "This house offers no even money against that card.")
    return None


def advance(s: TableState, out: Out) -> bool:
    """Move the turn to the next hand awaiting a decision (dealing a split hand its second
    card first); after the last one, the dealer's turn. False if a decision is awaited."""
    boxes = s.boxes
    while s.turn_box < len(boxes):
        box = boxes[s.turn_box]
        while s.turn_hand < len(box.hands):
            h = box.hands[s.turn_hand]
            if not h.done:
                if len(h.cards) == 1:
                    s.deal_queue.append(CardTarget(box.number, s.turn_hand))
                    return True
                out.append(E.Turn(box=box.number, hand=s.turn_hand, player=box.holder))
                return False
            s.turn_hand += 1
        s.turn_box += 1
        s.turn_hand = 0
    s.phase = Phase.DEALER
    return True
