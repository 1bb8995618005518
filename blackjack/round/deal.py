"""Cards from the shoe to the table: drawing from an RNG shoe, giving the card due to its
hand or the dealer, what a card does to a hand, and the cut card coming out."""

from __future__ import annotations

from blackjack import events as E
from blackjack.hands import VALUE, hand_value
from blackjack.phases import Phase
from blackjack.round.common import Out, box_numbered, settled
from blackjack.settlement import HAND_KINDS, settle_bust
from blackjack.state import Box, Hand, TableState


def draw(s: TableState, out: Out) -> int:
    """Next card from an RNG shoe, or -1 if none is left."""
    if s.pos >= len(s.order):
        return -1
    if s.pos == s.cut_index:
        cut_card_out(s, out)
    c = s.order[s.pos]
    s.pos += 1
    s.exposed = -1
    return c


def cut_card_out(s: TableState, out: Out) -> None:
    s.cut_index = -1
    if s.last_round:
        return
    s.last_round = True
    # Campione Art. 30: the cut goes to whoever "received" the cut card: the box the
    # next card was for; the dealer passes it to the player on the left.
    if not s.profile.button and s.boxes:
        if s.deal_queue and s.deal_queue[0].box:
            first = s.deal_queue[0].box
        else:
            first = min(b.number for b in s.boxes)
        entitle_cut(s, first, {b.number: b.holder for b in s.boxes})
    out.append(E.CutCardOut(round=s.round))


def entitle_cut(s: TableState, first: int, holders: dict[int, str]) -> None:
    """Offer the next cut to the holder of box ``first``; where the cut passes left
    (Campione Art. 30), line up the other box holders from his left, wrapping round:
    facing the dealer, the left is the next higher box number."""
    entitled = holders.get(first, "")
    chain: list[str] = []
    if s.profile.cut_passes_left and entitled:
        numbers = sorted(holders)
        for n in [n for n in numbers if n > first] + [n for n in numbers if n < first]:
            h = holders[n]
            if h and h != entitled and h not in chain:
                chain.append(h)
    s.cut_entitled = entitled
    s.cut_chain = chain


def give(s: TableState, out: Out, card: int) -> None:
    """Give ``card`` to where the next card is due."""
    target = s.deal_queue.pop(0)
    if not target.box:
        s.dealer.append(card)
        if target.hole:
            s.hole_hidden = True
            out.append(E.HoleCardDealt())
        else:
            out.append(E.CardDealt(box=0, hand=0, card=card))
        return
    box = box_numbered(s, target.box)
    hand = box.hands[target.hand]
    hand.cards.append(card)
    out.append(E.CardDealt(box=box.number, hand=target.hand, card=card))
    if s.phase == Phase.PLAY:
        after_card(s, out, box, hand, target.hand)


def after_card(s: TableState, out: Out, box: Box, hand: Hand, hi: int) -> None:
    p = s.profile
    cards = hand.cards
    total, _soft = hand_value(cards)
    if len(cards) == 2 and hand.split:
        if hand.split_aces:
            if not (VALUE[cards[1]] == 1 and p.resplit_aces and len(box.hands) < p.max_split_hands):
                hand.done = True
        elif p.split_tens_ace_continues and VALUE[cards[0]] == 10 and VALUE[cards[1]] == 1:
            hand.tens_ace = True
    if total > 21:
        hand.done = True
        for w in box.wagers:
            if w.hand == hi and not w.settled and w.kind in HAND_KINDS:
                settled(out, w, settle_bust(w))
    elif hand.doubled or (total == 21 and not (hand.tens_ace and len(cards) == 2)):
        hand.done = True
    elif len(cards) > 2:
        hand.tens_ace = False
    if hand.done:
        out.append(E.HandDone(box=box.number, hand=hi, total=total, bust=total > 21))


def cards_on_table(s: TableState) -> list[int]:
    """Every card dealt this round: a mid-round reshuffle shuffles all the others."""
    out = list(s.dealer)
    for b in s.boxes:
        for h in b.hands:
            out += h.cards
    return out
