"""The end of a round: the dealer's play, settling every hand, voiding boxes, a shoe that
runs short, and what comes next (the next round, or the end of the shoe)."""

from __future__ import annotations

from blackjack import events as E
from blackjack.hands import hand_value, is_blackjack
from blackjack.phases import Phase
from blackjack.profiles import BOXES
from blackjack.round.common import Out, settled
from blackjack.round.deal import entitle_cut
from blackjack.round.sidebets import report_jackpot
from blackjack.round.tournament import hand_opened, hand_over
from blackjack.settlement import HAND_KINDS, ROUND_END, SETTLE, Outcome, hand_outcome, settle_insurance
from blackjack.state import DEALER, Box, TableState
from blackjack.wager_kinds import FREE_KINDS, WagerKind
from games.players import is_floor
from games.wagers import WagerRefunded, WagerVoided


def dealer_step(s: TableState, out: Out) -> bool:
    """One step of the dealer's turn; False once the round is over."""
    p = s.profile
    if s.hole_hidden:
        s.hole_hidden = False
        out.append(E.HoleCardShown(card=s.dealer[1]))
    live_hand = False
    live_other = False  # an open wager on a hand that is not a blackjack
    insured = False
    for box in s.boxes:
        for w in box.wagers:
            if not w.settled:
                if w.kind == WagerKind.INSURANCE:
                    insured = True
                elif w.kind in HAND_KINDS:
                    live_hand = True
                    if not box.hands[w.hand].blackjack:
                        live_other = True
                elif w.kind in ROUND_END:
                    live_hand = live_other = True
    dealer = s.dealer
    if not live_hand and not insured:
        # Every box is decided and no insurance stands: the dealer draws nothing.
        finish_round(s, out, drew=False)
        return False
    if len(dealer) == 1:
        s.deal_queue.append(DEALER)
        return True
    if not s.insurance_done:
        s.insurance_done = True
        dbj = is_blackjack(dealer)
        for box in reversed(s.boxes):
            for w in box.wagers:
                if w.kind == WagerKind.INSURANCE and not w.settled:
                    settled(out, w, settle_insurance(w, dbj))
    if len(dealer) == 2 and is_blackjack(dealer):
        finish_round(s, out, drew=True)
        return False
    if live_other:
        total, soft = hand_value(dealer)
        if total < 17 or (total == 17 and soft and p.dealer_hits_soft_17):
            s.deal_queue.append(DEALER)
            return True
    finish_round(s, out, drew=True)
    return False


def settle_hand(s: TableState, out: Out, box: Box, hi: int, total: int, bj: bool, dtotal: int, dbj: bool) -> None:
    p = s.profile
    outcome = hand_outcome(total, bj, dtotal, dbj)
    if p.free_bet and dtotal == 22 and outcome == Outcome.WIN:
        outcome = Outcome.PUSH  # Free Bet: a dealer 22 pushes every hand but a blackjack
    # Payout order inside a box: the outermost (last placed) pile first.
    for w in reversed(box.wagers):
        if w.hand == hi and not w.settled and w.kind in HAND_KINDS:
            settled(out, w, SETTLE[w.kind](w, outcome, dbj, p))


def finish_round(s: TableState, out: Out, drew: bool) -> None:
    dealer = s.dealer
    dtotal, _ = hand_value(dealer)
    dbj = is_blackjack(dealer)
    out.append(E.DealerDone(total=dtotal, blackjack=dbj, bust=dtotal > 21, drew=drew))
    # The house pays from its right: the reverse of the dealing order.
    for box in reversed(s.boxes):
        for hi in range(len(box.hands) - 1, -1, -1):
            h = box.hands[hi]
            total, _ = hand_value(h.cards)
            settle_hand(s, out, box, hi, total, h.blackjack, dtotal, dbj)
        for w in reversed(box.wagers):
            if not w.settled and w.kind in ROUND_END:
                settled(out, w, ROUND_END[w.kind](w, box, s))
    out.append(E.RoundSettled(round=s.round, last_of_shoe=s.last_round or s.reshuffle_after))
    end_round(s, out)


def end_round(s: TableState, out: Out) -> None:
    p = s.profile
    played = [b.number for b in s.boxes]
    holders = {b.number: b.holder for b in s.boxes}
    if p.button:
        occupied = set(played) | {i for i in range(1, BOXES + 1) if s.seats[i]}
        nxt = s.button % BOXES + 1
        for k in range(1, BOXES + 1):
            b = (s.button + k - 1) % BOXES + 1
            if b in occupied:
                nxt = b
                break
        s.button = nxt
        out.append(E.ButtonMoved(box=nxt))
    if s.jackpot_entered:
        report_jackpot(s, out, 0, [])  # voided before the deal: nothing for the pool
    paid: dict[str, int] = {}
    for w in [w for b in s.boxes for w in b.wagers]:
        if w.paid and is_floor(w.player):
            paid[w.player] = paid.get(w.player, 0) + w.paid
    s.last_paid = paid
    s.bets = []
    s.side_bets = []
    s.boxes = []
    s.dealer = []
    s.deal_queue = []
    s.offers = []
    s.behind = []
    s.behind_action = ""
    s.hole_hidden = False
    s.insurance_done = False
    s.turn_box = s.turn_hand = 0
    if s.exposed >= 0 and not s.live:
        s.pos += 1  # a misdrawn card nobody took was seen: it leaves the shoe
    s.exposed = -1
    s.round += 1
    s.seq = 0
    shoe_over = s.last_round or s.reshuffle_after
    if hand_over(s, out, shoe_over):
        return  # a tournament phase is over at this table: no next round
    if s.tournament_table:
        holders = {}  # the eliminated and the expelled have left: only the seated cut (Art. 4)
    if shoe_over:
        end_shoe(s, out, holders)
    else:
        open_round(s, out)


def end_shoe(s: TableState, out: Out, holders: dict[int, str] | None = None) -> None:
    if s.profile.button:
        # Titano Art. 4: the player at the button cuts (seated there, else the one who
        # held that box in the last round).
        held = dict(holders or {})
        held.update({n: pl for n, pl in enumerate(s.seats) if n and pl})
        entitle_cut(s, s.button, held)
    s.phase = Phase.SHUFFLE
    s.order = []
    s.pos = 0
    s.cut_index = -1
    out.append(E.ShoeEnded(cut_entitled=s.cut_entitled))


def open_round(s: TableState, out: Out) -> None:
    if s.next_limits:
        s.min_bet, s.max_bet = s.next_limits
        s.next_limits = []
    s.phase = Phase.BETTING
    hand_opened(s)
    out.append(E.RoundOpened(round=s.round, min_bet=s.min_bet, max_bet=s.max_bet, button=s.button))


def short_shoe(s: TableState, out: Out) -> None:
    """An RNG shoe ran out of cards mid-round."""
    if s.profile.void_round_on_short_shoe:
        out.append(E.ShoeRanShort(action="void"))
        # "Annullata" (Titano Art. 7): as if never dealt. Every stake comes back, those
        # already settled as lost (busts) included; a win already paid stands.
        void_boxes(s, out, list(s.boxes), "system", "the shoe ran short", refund=True)
        s.last_round = True
        end_round(s, out)
    else:
        out.append(E.ShoeRanShort(action="reshuffle"))
        s.last_round = True  # a full shuffle follows this round
        s.resume_phase = s.phase  # resumed once the discards are shuffled
        s.phase = Phase.RESHUFFLE


def void_boxes(s: TableState, out: Out, boxes: list[Box], by: str, reason: str, refund: bool = False) -> None:
    """Void every open wager of ``boxes``; with ``refund`` (the round is annulled) also
    give back what the bank kept of each wager already settled."""
    for box in boxes:
        for w in box.wagers:
            if not w.settled:
                w.settled = True
                amount = 0 if w.kind in FREE_KINDS else w.amount  # the house's chip held nothing
                out.append(WagerVoided(w.id, w.player, amount, reason))
            elif refund and w.kept > 0:
                out.append(WagerRefunded(w.id, w.player, w.kept, f"{reason}: the round is annulled"))
                w.kept = 0
        for h in box.hands:
            h.done = True
    whole = len(boxes) == len(s.boxes)
    out.append(E.RoundVoided(round=s.round, by=by, reason=reason, boxes=[] if whole else [b.number for b in boxes]))
