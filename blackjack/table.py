"""The blackjack table: the one place that owns the game's transitions.

``BlackjackTable.handle(command) -> events`` validates a command completely, then mutates
the state and runs every step that needs no one's decision (dealing from the shoe on RNG
tables, auto-standing, the dealer's play, settlement) until it waits for a command again.
On a live table the engine also waits for each card (``Card``) and checks it.

The class is split by concern: this module holds the round (seats, bets, the deal, the
offers, the decisions, the dealer, settlement, voids, limits) and the dispatch table
``_HANDLERS``; the shoe's commands live in ``table_shoe.py`` and Lugano's side bets in
``table_sidebets.py``, both mixed into ``BlackjackTable``.
"""

from __future__ import annotations

from typing import Any

import msgspec

from blackjack import commands as C
from blackjack import events as E
from blackjack import jackpot as J
from blackjack.cards import VALUE, hand_value, is_blackjack
from blackjack.profiles import BOXES, Profile, validate
from blackjack.settlement import (
    AFTER_DEAL,
    HAND_KINDS,
    PUSH,
    ROUND_END,
    SETTLE,
    WIN,
    hand_outcome,
    settle_bust,
    settle_even_money,
    settle_insurance,
)
from blackjack.state import (
    BEHIND,
    BOX,
    DOUBLE,
    FREE_DOUBLE,
    FREE_KINDS,
    FREE_SPLIT,
    INSURANCE,
    ROUND_PHASES,
    SPLIT,
    Bet,
    Box,
    Hand,
    TableState,
    Wager,
)
from blackjack.table_shoe import ShoeCommands
from blackjack.table_sidebets import SideBetCommands
from blackjack.view import table_view
from games.errors import GameError
from games.players import FLOOR_PREFIX, is_floor
from games.validation import ENTERED_MAX_FACTOR, MAX_AMOUNT, validated
from games.wagers import WagerPlaced, WagerRefunded, WagerSettled, WagerVoided

DEALER = -1
HOLE = -2
# The highest table maximum any profile may set: every amount a round derives from a
# stake (an entered pile of ENTERED_MAX_FACTOR maxima, doubles, splits, a 3:2 or 30:1 pay)
# then stays far inside int64, the ledger's bigint.
MAX_TABLE_BET = MAX_AMOUNT // 1000


def check_limits(p: Profile, min_bet: int, max_bet: int) -> None:
    if min_bet <= 0 or max_bet < min_bet:
        raise GameError("bad_limits", "The minimum must be positive and the maximum at least the minimum.")
    if max_bet > MAX_TABLE_BET:
        raise GameError("bad_limits", f"The maximum may not exceed {MAX_TABLE_BET} (minor units).")
    if p.max_to_min_ratio and max_bet > p.max_to_min_ratio * min_bet:
        raise GameError("bad_limits", f"The maximum may be at most {p.max_to_min_ratio} times the minimum.")
    if p.max_bet_cap and max_bet > p.max_bet_cap:
        raise GameError("bad_limits", f"The maximum may not exceed {p.max_bet_cap} (minor units).")


class BlackjackTable(ShoeCommands, SideBetCommands):
    def __init__(
        self, table_id: str, profile: Profile, *, min_bet: int, max_bet: int, live: bool = False
    ) -> None:
        validate(profile)
        check_limits(profile, min_bet, max_bet)
        self.state = TableState(
            table_id=table_id,
            profile=profile,
            live=live,
            min_bet=min_bet,
            max_bet=max_bet,
            button=BOXES if profile.button else 0,
        )
        self._ev: list[Any] = []

    @classmethod
    def from_state(cls, state: TableState) -> BlackjackTable:
        t = cls.__new__(cls)
        t.state = state
        t._ev = []
        return t

    def view(self, viewer: str | None) -> Any:
        return table_view(self.state, viewer)

    def handle(self, cmd: Any) -> list[Any]:
        h = _HANDLERS.get(type(cmd))
        if h is None:
            raise GameError("malformed_command", "That is not a blackjack command.")
        cmd = validated(cmd)  # the struct's bounds, for commands built in Python too
        if cmd.role == "player" and cmd.by.startswith(FLOOR_PREFIX):
            raise GameError(
                "floor_id_reserved",
                "floor: ids name the croupier's floor players; no one sends commands as one.",
            )
        self._ev = ev = []
        h(self, cmd)
        self._ev = []
        return ev

    # -- helpers ------------------------------------------------------------------------

    def _staff(self, cmd: Any) -> None:
        if cmd.role not in C.STAFF:
            raise GameError("staff_only", "Only the croupier, the chef or the director may do that.")

    def _owner(self, cmd: Any) -> str:
        """Whose chips or decision ``cmd`` moves. A player acts only for himself; staff
        only for a floor player they name, and only on a live table (no staff command can
        reach an online player's wallet)."""
        if cmd.role == "player":
            if cmd.player not in ("", cmd.by):
                raise GameError("players_only", "A player acts only for himself.")
            return cmd.by
        if cmd.role in C.STAFF and self.state.live and cmd.player:
            if not is_floor(cmd.player):
                raise GameError(
                    "floor_only",
                    f"Staff act only for floor players (floor:<label>); {cmd.player} acts for himself.",
                )
            return cmd.player
        raise GameError(
            "players_only",
            "Only a player acts for his own chips; staff act for a floor player, named, on a live table.",
        )

    def _settled(self, w: Wager, ev: WagerSettled) -> None:
        """Record one settlement: the wager is closed and what the bank kept is noted."""
        w.settled = True
        w.kept = ev.stake - ev.returned
        self._ev.append(ev)

    def _box_index(self, number: int) -> int:
        for i, b in enumerate(self.state.boxes):
            if b.number == number:
                return i
        raise GameError("no_such_box", f"Box {number} is not in play this round.")

    def _new_id(self) -> str:
        s = self.state
        s.seq += 1
        return f"{s.table_id}:r{s.round}:{s.seq}"

    def _bet_id(self) -> str:
        """A new id for a bet placed while betting is open (unique across rounds)."""
        s = self.state
        s.wager_serial += 1
        return f"{s.table_id}:r{s.round}:bet{s.wager_serial}"

    def _place(self, box: Box, player: str, kind: str, amount: int, hand: int) -> Wager:
        w = Wager(self._new_id(), player, kind, amount, hand)
        box.wagers.append(w)
        self._ev.append(WagerPlaced(w.id, player, amount, f"box {box.number} {kind}"))
        return w

    def _place_free(self, box: Box, player: str, kind: str, amount: int, hand: int) -> None:
        """The house's free chip (Free Bet): worth ``amount``, none of it the player's."""
        w = Wager(self._new_id(), player, kind, amount, hand)
        box.wagers.append(w)
        what = "free double" if kind == FREE_DOUBLE else "free split"
        self._ev.append(WagerPlaced(w.id, player, 0, f"box {box.number} {what} (the house's chip of {amount})"))

    def _stake_on(self, box: Box, player: str, hand: int) -> Wager | None:
        """The player's own stake (not a double) riding on ``hand``; on a free split hand,
        the house's chip that stands for it."""
        for w in box.wagers:
            if w.player == player and w.hand == hand and w.kind in (BOX, BEHIND, SPLIT, FREE_SPLIT):
                return w
        return None

    def _decision(self, cmd: Any) -> tuple[Box, Hand]:
        """Checks common to hit/stand/double/split: the phase, the turn, the owner."""
        s = self.state
        if s.phase != "play" or s.need or s.behind:
            raise GameError("not_decision_time", "No decision is being asked for now.")
        bi = self._box_index(cmd.box)
        box = s.boxes[bi]
        if bi != s.turn_box or cmd.hand != s.turn_hand:
            raise GameError("not_your_turn", f"It is box {s.boxes[s.turn_box].number}'s turn, hand {s.turn_hand}.")
        if cmd.role == "player":
            if cmd.by != box.holder:
                raise GameError("not_your_box", f"Only box {box.number}'s holder decides for it.")
        elif cmd.role == "system":
            if not isinstance(cmd, C.Stand):
                raise GameError("system_may_only_stand", "A time-out can only stand.")
        elif not s.live:
            raise GameError("not_for_staff", "Staff enter decisions only on live tables.")
        elif not is_floor(box.holder):
            raise GameError("floor_only", f"Box {box.number}'s holder {box.holder} decides for himself.")
        return box, box.hands[cmd.hand]

    # -- the shoe -----------------------------------------------------------------------

    def _draw(self) -> int:
        """Next card from an RNG shoe, or -1 if none is left."""
        s = self.state
        if s.pos >= len(s.order):
            return -1
        if s.pos == s.cut_index:
            self._cut_card_out()
        c = s.order[s.pos]
        s.pos += 1
        s.exposed = -1
        return c

    def _cut_card_out(self) -> None:
        s = self.state
        s.cut_index = -1
        if s.last_round:
            return
        s.last_round = True
        # Campione Art. 30: the cut goes to whoever "received" the cut card: the box the
        # next card was for; the dealer passes it to the player on the left.
        if not s.profile.button and s.boxes:
            if s.need and s.need[0] >= 0:
                first = s.boxes[s.need[0] >> 3].number
            else:
                first = min(b.number for b in s.boxes)
            self._entitle_cut(first, {b.number: b.holder for b in s.boxes})
        self._ev.append(E.CutCardOut(round=s.round))

    def _entitle_cut(self, first: int, holders: dict[int, str]) -> None:
        """Offer the next cut to the holder of box ``first``; where the cut passes left
        (Campione Art. 30), line up the other box holders from his left, wrapping round:
        facing the dealer, the left is the next higher box number."""
        s = self.state
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

    def _give(self, card: int) -> None:
        s = self.state
        t = s.need.pop(0)
        if t < 0:
            s.dealer.append(card)
            if t == HOLE:
                s.hole_hidden = True
                self._ev.append(E.HoleCardDealt())
            else:
                self._ev.append(E.CardDealt(box=0, hand=0, card=card))
            return
        bi, hi = t >> 3, t & 7
        box = s.boxes[bi]
        hand = box.hands[hi]
        hand.cards.append(card)
        self._ev.append(E.CardDealt(box=box.number, hand=hi, card=card))
        if s.phase == "play":
            self._after_card(box, hand, hi)

    def _after_card(self, box: Box, hand: Hand, hi: int) -> None:
        p = self.state.profile
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
                    self._settled(w, settle_bust(w))
        elif hand.doubled or (total == 21 and not (hand.tens_ace and len(cards) == 2)):
            hand.done = True
        elif len(cards) > 2:
            hand.tens_ace = False
        if hand.done:
            self._ev.append(E.HandDone(box=box.number, hand=hi, total=total, bust=total > 21))

    # -- the automatic steps ------------------------------------------------------------

    def _run(self) -> None:
        s = self.state
        live = s.live
        while True:
            if s.need:
                if live:
                    return
                card = self._draw()
                if card < 0:
                    self._short_shoe()
                    return
                self._give(card)
                continue
            ph = s.phase
            if ph == "dealing":
                if not self._after_deal():
                    return
            elif ph == "play":
                if s.behind or not self._advance():
                    return
            elif ph == "dealer":
                if not self._dealer_step():
                    return
            else:
                return

    def _after_deal(self) -> bool:
        s = self.state
        p = s.profile
        up = VALUE[s.dealer[0]]
        for box in s.boxes:
            h = box.hands[0]
            if is_blackjack(h.cards):
                h.blackjack = h.done = True
        if AFTER_DEAL:
            for box in reversed(s.boxes):
                for w in box.wagers:
                    if not w.settled and w.kind in AFTER_DEAL:
                        self._settled(w, AFTER_DEAL[w.kind](w, box, s))
        if s.jackpot_entered:
            self._settle_blazing()
        if up != 1 and up != 10:
            # The dealer cannot tie: blackjacks are paid at once.
            for box in reversed(s.boxes):
                if box.hands[0].blackjack:
                    self._settle_hand(box, 0, 21, True, 0, False)
        offers: list[str] = []
        em_boxes: list[int] = []
        em = up in p.even_money_against
        for box in s.boxes:
            bj = box.hands[0].blackjack
            if bj and em:
                em_boxes.append(box.number)
            for w in box.wagers:
                if w.settled or w.kind not in (BOX, BEHIND):
                    continue  # a box voided during the deal (Art. 19) gets no offer
                if (bj and em) or (up == 1 and (not bj or p.blackjack_insurable)):
                    offers.append(f"{w.player}@{box.number}")
        s.phase = "play"
        if offers:
            s.phase = "offers"
            s.offers = offers
            self._ev.append(E.OffersOpened(insurance=up == 1, even_money=em_boxes, waiting=list(offers)))
            return False
        return True

    def _advance(self) -> bool:
        """Move the turn to the next hand awaiting a decision (dealing a split hand its
        second card first); after the last one, the dealer's turn."""
        s = self.state
        boxes = s.boxes
        while s.turn_box < len(boxes):
            box = boxes[s.turn_box]
            while s.turn_hand < len(box.hands):
                h = box.hands[s.turn_hand]
                if not h.done:
                    if len(h.cards) == 1:
                        s.need.append(s.turn_box * 8 + s.turn_hand)
                        return True
                    self._ev.append(E.Turn(box=box.number, hand=s.turn_hand, player=box.holder))
                    return False
                s.turn_hand += 1
            s.turn_box += 1
            s.turn_hand = 0
        s.phase = "dealer"
        return True

    def _dealer_step(self) -> bool:
        s = self.state
        p = s.profile
        if s.hole_hidden:
            s.hole_hidden = False
            self._ev.append(E.HoleCardShown(card=s.dealer[1]))
        live_hand = False
        live_other = False  # an open wager on a hand that is not a blackjack
        insured = False
        for box in s.boxes:
            for w in box.wagers:
                if not w.settled:
                    if w.kind == INSURANCE:
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
            self._finish_round(drew=False)
            return False
        if len(dealer) == 1:
            s.need.append(DEALER)
            return True
        if not s.insurance_done:
            s.insurance_done = True
            dbj = is_blackjack(dealer)
            for box in reversed(s.boxes):
                for w in box.wagers:
                    if w.kind == INSURANCE and not w.settled:
                        self._settled(w, settle_insurance(w, dbj))
        if len(dealer) == 2 and is_blackjack(dealer):
            self._finish_round(drew=True)
            return False
        if live_other:
            total, soft = hand_value(dealer)
            if total < 17 or (total == 17 and soft and p.dealer_hits_soft_17):
                s.need.append(DEALER)
                return True
        self._finish_round(drew=True)
        return False

    def _settle_hand(self, box: Box, hi: int, total: int, bj: bool, dtotal: int, dbj: bool) -> None:
        p = self.state.profile
        outcome = hand_outcome(total, bj, dtotal, dbj)
        if p.free_bet and dtotal == 22 and outcome == WIN:
            outcome = PUSH  # Free Bet: a dealer 22 pushes every hand but a blackjack
        # Payout order inside a box: the outermost (last placed) pile first.
        for w in reversed(box.wagers):
            if w.hand == hi and not w.settled and w.kind in HAND_KINDS:
                self._settled(w, SETTLE[w.kind](w, outcome, dbj, p))

    def _finish_round(self, drew: bool) -> None:
        s = self.state
        dealer = s.dealer
        dtotal, _ = hand_value(dealer)
        dbj = is_blackjack(dealer)
        self._ev.append(E.DealerDone(total=dtotal, blackjack=dbj, bust=dtotal > 21, drew=drew))
        # The house pays from its right: the reverse of the dealing order.
        for box in reversed(s.boxes):
            for hi in range(len(box.hands) - 1, -1, -1):
                h = box.hands[hi]
                total, _ = hand_value(h.cards)
                self._settle_hand(box, hi, total, h.blackjack, dtotal, dbj)
            for w in reversed(box.wagers):
                if not w.settled and w.kind in ROUND_END:
                    self._settled(w, ROUND_END[w.kind](w, box, s))
        self._ev.append(E.RoundSettled(round=s.round, last_of_shoe=s.last_round or s.reshuffle_after))
        self._end_round()

    def _end_round(self) -> None:
        s = self.state
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
            self._ev.append(E.ButtonMoved(box=nxt))
        if s.jackpot_entered:
            self._report_jackpot(0, [])  # voided before the deal: nothing for the pool
        s.bets = []
        s.side_bets = []
        s.boxes = []
        s.dealer = []
        s.need = []
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
        if s.last_round or s.reshuffle_after:
            self._end_shoe(holders)
        else:
            self._open_round()

    def _end_shoe(self, holders: dict[int, str] | None = None) -> None:
        s = self.state
        if s.profile.button:
            # Titano Art. 4: the player at the button cuts (seated there, else the one who
            # held that box in the last round).
            held = dict(holders or {})
            held.update({n: pl for n, pl in enumerate(s.seats) if n and pl})
            self._entitle_cut(s.button, held)
        s.phase = "shuffle"
        s.order = []
        s.pos = 0
        s.cut_index = -1
        self._ev.append(E.ShoeEnded(cut_entitled=s.cut_entitled))

    def _open_round(self) -> None:
        s = self.state
        if s.next_limits:
            s.min_bet, s.max_bet = s.next_limits
            s.next_limits = []
        s.phase = "betting"
        self._ev.append(E.RoundOpened(round=s.round, min_bet=s.min_bet, max_bet=s.max_bet, button=s.button))

    def _short_shoe(self) -> None:
        s = self.state
        if s.profile.void_round_on_short_shoe:
            self._ev.append(E.ShoeRanShort(action="void"))
            # "Annullata": as if never dealt. Every stake comes back, those already settled
            # as lost (busts) included; a win already paid stands.
            self._void_boxes(list(s.boxes), "system", "the shoe ran short", refund=True)
            s.last_round = True
            self._end_round()
        else:
            self._ev.append(E.ShoeRanShort(action="reshuffle"))
            s.last_round = True  # a full shuffle follows this round
            s.resume_phase = s.phase  # resumed once the discards are shuffled
            s.phase = "reshuffle"

    def _void_boxes(self, boxes: list[Box], by: str, reason: str, refund: bool = False) -> None:
        """Void every open wager of ``boxes``; with ``refund`` (the round is annulled) also
        give back what the bank kept of each wager already settled."""
        s = self.state
        for box in boxes:
            for w in box.wagers:
                if not w.settled:
                    w.settled = True
                    amount = 0 if w.kind in FREE_KINDS else w.amount  # the house's chip held nothing
                    self._ev.append(WagerVoided(w.id, w.player, amount, reason))
                elif refund and w.kept > 0:
                    self._ev.append(WagerRefunded(w.id, w.player, w.kept, f"{reason}: the round is annulled"))
                    w.kept = 0
            for h in box.hands:
                h.done = True
        whole = len(boxes) == len(s.boxes)
        self._ev.append(
            E.RoundVoided(round=s.round, by=by, reason=reason, boxes=[] if whole else [b.number for b in boxes])
        )

    def _cards_on_table(self) -> list[int]:
        s = self.state
        out = list(s.dealer)
        for b in s.boxes:
            for h in b.hands:
                out += h.cards
        return out

    # -- command handlers ---------------------------------------------------------------

    def _sit(self, cmd: C.Sit) -> None:
        s = self.state
        if cmd.role != "player":
            raise GameError("players_only", "Only a player takes a seat.")
        if s.phase == "closed":
            raise GameError("table_closed", "The table is closed.")
        if not 1 <= cmd.box <= BOXES:
            raise GameError("no_such_box", f"Boxes are numbered 1 to {BOXES}.")
        if s.seats[cmd.box]:
            raise GameError("seat_taken", f"Box {cmd.box} is taken.")
        if cmd.by in s.seats:
            raise GameError("already_seated", "You already have a seat.")
        if any(b.box == cmd.box and b.player != cmd.by for b in s.bets):
            # Sitting now would take the box from under the bets already on it.
            raise GameError("box_in_play", f"Others have bet on box {cmd.box} this round: sit after the round.")
        s.seats[cmd.box] = cmd.by
        self._ev.append(E.SeatTaken(player=cmd.by, box=cmd.box))

    def _leave(self, cmd: C.Leave) -> None:
        s = self.state
        if cmd.role != "player":
            raise GameError("players_only", "A player leaves his own seat; staff use release_seat.")
        if cmd.by not in s.seats:
            raise GameError("not_seated", "You have no seat.")
        b = s.seats.index(cmd.by)
        s.seats[b] = ""
        self._ev.append(E.SeatLeft(player=cmd.by, box=b))

    def _release_seat(self, cmd: C.ReleaseSeat) -> None:
        """Free a seat between rounds (a disconnected player, after the house's time-out);
        while betting is open the player's bets and side bets go back to him."""
        s = self.state
        if cmd.role not in C.STAFF and cmd.role != "system":
            raise GameError("staff_only", "Only the staff or the server release a seat.")
        if s.phase in ROUND_PHASES:
            raise GameError("round_in_play", "A seat is released between rounds only.")
        player = s.seats[cmd.box]
        if not player:
            raise GameError("seat_empty", f"Nobody sits at box {cmd.box}.")
        self._return_bets(lambda b: b.player == player, "seat released")
        s.seats[cmd.box] = ""
        self._ev.append(E.SeatReleased(player=player, box=cmd.box, reason=cmd.reason))

    def _return_bets(self, which: Any, reason: str) -> None:
        """Return the open bets and side bets ``which`` accepts (each has a box and a player)."""
        s = self.state
        for b in [b for b in s.bets if which(b)]:
            s.bets.remove(b)
            self._ev.append(WagerVoided(b.wager, b.player, b.amount, reason))
        for sb in [x for x in s.side_bets if which(x)]:
            s.side_bets.remove(sb)
            self._ev.append(WagerVoided(sb.wager, sb.player, sb.amount, reason))

    def _close_table(self, cmd: C.CloseTable) -> None:
        """Close the table between rounds: the director, or a chef with the director's
        recorded authorisation (Campione Art. 15: the Direzione Giochi's power)."""
        s = self.state
        if cmd.role == "chef":
            if not cmd.authorised_by:
                raise GameError("missing_authorisation", "A chef closes a table only with the director's authorisation.")
        elif cmd.role == "player":
            raise GameError("staff_only", "Only the director closes a table.")
        elif cmd.role != "director":
            raise GameError("not_allowed", "Only the director, or a chef he authorised, closes a table.")
        if s.phase == "closed":
            raise GameError("table_closed", "The table is already closed.")
        if s.phase in ROUND_PHASES:
            raise GameError("round_in_play", "A table is closed between rounds only.")
        self._return_bets(lambda b: True, "table closed")
        for n, pl in enumerate(s.seats):
            if pl:
                s.seats[n] = ""
                self._ev.append(E.SeatReleased(player=pl, box=n, reason="table closed"))
        s.phase = "closed"
        s.order = []
        s.pos = 0
        s.cut_index = -1
        s.left = []
        s.last_round = False
        s.reshuffle_after = False
        s.cut_entitled = ""  # the house cuts the shoe that reopens the table
        s.cut_chain = []
        self._ev.append(E.TableClosed(reason=cmd.reason, by=cmd.by, authorised_by=cmd.authorised_by))

    def _place_bet(self, cmd: C.PlaceBet) -> None:
        s = self.state
        p = s.profile
        if s.phase != "betting":
            raise GameError("betting_closed", "Bets are closed.")
        entered = cmd.role in C.STAFF  # chips already on a live felt, entered by the croupier
        if entered and not cmd.player:
            raise GameError("players_only", "Staff enter a player's chips only on a live table, naming the player.")
        owner = self._owner(cmd)
        if cmd.amount < s.min_bet:
            raise GameError("below_minimum", f"The minimum bet is {s.min_bet}.")
        if entered and cmd.amount > ENTERED_MAX_FACTOR * s.max_bet:
            raise GameError(
                "above_entry_limit",
                f"A pile over {ENTERED_MAX_FACTOR} times the maximum ({ENTERED_MAX_FACTOR * s.max_bet}) is a mistake.",
            )
        on_box = [b for b in s.bets if b.box == cmd.box]
        if any(b.player == owner for b in on_box):
            raise GameError("already_bet", f"{owner} already has a bet on box {cmd.box}.")
        if len(on_box) >= 1 + p.places_behind:
            raise GameError("box_full", f"Box {cmd.box} has no free place.")
        seated = s.seats[cmd.box]
        if seated and owner != seated:
            # The seated player's place is his (Campione cap. 1, Art. 16; Lugano "Il
            # gioco"; Titano Art. 1, 13): others may only bet behind him.
            behind = sum(1 for b in on_box if b.player != seated)
            if behind >= p.places_behind:
                raise GameError("box_reserved", f"Box {cmd.box} is {seated}'s: only places behind are open to others.")
        if p.max_applies_to == "box_with_behind":
            room = max(s.max_bet - sum(b.amount - b.excess for b in on_box), 0)
        else:
            room = s.max_bet
        excess = max(cmd.amount - room, 0)
        if excess and not entered:
            raise GameError("above_maximum", f"Box {cmd.box} takes at most {room}.")
        if p.crowded_at:
            players = {b.player for b in s.bets} | {owner}
            if len(players) >= p.crowded_at and any(b.player == owner for b in s.bets):
                raise GameError("one_box_each", "The table is crowded: one box each.")
        wid = self._bet_id()
        s.bets.append(Bet(cmd.box, owner, cmd.amount, wid, excess))
        self._ev.append(WagerPlaced(wid, owner, cmd.amount, f"box {cmd.box}"))

    def _withdraw_bet(self, cmd: C.WithdrawBet) -> None:
        s = self.state
        if s.phase != "betting":
            raise GameError("betting_closed", "Bets are closed.")
        owner = self._owner(cmd)
        for i, b in enumerate(s.bets):
            if b.box == cmd.box and b.player == owner:
                del s.bets[i]
                self._ev.append(WagerVoided(b.wager, b.player, b.amount, "withdrawn"))
                # Side bets stand only beside a bet: they go back with it.
                for sb in [x for x in s.side_bets if x.box == cmd.box and x.player == owner]:
                    s.side_bets.remove(sb)
                    self._ev.append(WagerVoided(sb.wager, sb.player, sb.amount, "withdrawn with the bet"))
                return
        raise GameError("no_bet", f"You have no bet on box {cmd.box}.")

    def _close_bets(self, cmd: C.CloseBets) -> None:
        s = self.state
        p = s.profile
        self._staff(cmd)
        if s.phase != "betting":
            raise GameError("betting_closed", "Bets are not open.")
        if not s.bets:
            raise GameError("no_bets", "Nobody has bet.")
        by_box: dict[int, list[Bet]] = {}
        for b in s.bets:
            by_box.setdefault(b.box, []).append(b)
        # A seated player's box is played only if he bets on it: bets behind a box whose
        # holder sat out go back ("the box was not played").
        unplayed = {n for n, bets in by_box.items() if self._holder_bet(n, bets) is None}
        for n in unplayed:
            del by_box[n]
        players = {b.player for bets in by_box.values() for b in bets}
        if by_box and len(players) == 1 and len(by_box) < p.lone_player_min_boxes:
            raise GameError(
                "lone_player_min_boxes",
                f"A player alone at the table plays at least {p.lone_player_min_boxes} boxes.",
            )
        if p.crowded_at and len(players) >= p.crowded_at:
            counts: dict[str, int] = {}
            for bets in by_box.values():
                for b in bets:
                    counts[b.player] = counts.get(b.player, 0) + 1
            if any(n > 1 for n in counts.values()):
                raise GameError("one_box_each", "The table is crowded: one box each.")

        if unplayed:
            self._return_bets(lambda b: b.box in unplayed, "the box was not played")
            if not by_box:
                return  # nothing left to deal: betting stays open
        if p.button:
            numbers = sorted(by_box, key=lambda n: (n - s.button - 1) % BOXES)
        else:
            numbers = sorted(by_box)
        boxes: list[Box] = []
        for n in numbers:
            bets = by_box[n]
            holder_bet = self._holder_bet(n, bets)
            assert holder_bet is not None
            wagers = [Wager(holder_bet.wager, holder_bet.player, BOX, holder_bet.amount, 0, excess=holder_bet.excess)]
            wagers += [
                Wager(b.wager, b.player, BEHIND, b.amount, 0, excess=b.excess) for b in bets if b is not holder_bet
            ]
            boxes.append(Box(n, holder_bet.player, wagers, [Hand([])]))
        s.boxes = boxes
        s.bets = []
        self._side_bets_to_boxes()
        k = len(boxes)
        s.need = [i * 8 for i in range(k)] + [DEALER] + [i * 8 for i in range(k)]
        if p.hole_card:
            s.need.append(HOLE)
        s.dealer = []
        s.phase = "dealing"
        self._ev.append(E.BetsClosed(round=s.round, by=cmd.by, order=numbers, holders=[b.holder for b in boxes]))
        if s.jackpot_entered:
            self._ev.append(J.JackpotRoundStarted(jackpot=p.blazing_7s.jackpot, table=s.table_id, round=s.round))
        self._run()

    def _holder_bet(self, n: int, bets: list[Bet]) -> Bet | None:
        """Whose bet holds box ``n``: the seated player's (None if he has not bet: the box
        is his, so it is not played), else (a free box) the highest bet in play (an entered
        pile's excess over the maximum is not in play, so it takes no box from anyone); a tie
        goes to the player seated nearest the shoe."""
        s = self.state
        seated = s.seats[n]
        if seated:
            return next((b for b in bets if b.player == seated), None)

        def seat_of(player: str) -> int:
            return s.seats.index(player) if player in s.seats else 99

        return min(bets, key=lambda b: (-(b.amount - b.excess), seat_of(b.player), bets.index(b)))

    def _set_limits(self, cmd: C.SetLimits) -> None:
        s = self.state
        self._staff(cmd)
        # Titano Art. 9: limits are the Direzione's (the chef at his table too); not a croupier's.
        if cmd.role == "croupier":
            raise GameError("not_allowed", "Only the chef de table or the director change the limits.")
        check_limits(s.profile, cmd.min_bet, cmd.max_bet)
        s.next_limits = [cmd.min_bet, cmd.max_bet]
        nxt = s.round + 1 if s.phase in ROUND_PHASES or s.phase == "betting" else s.round
        self._ev.append(E.LimitsChanged(by=cmd.by, min_bet=cmd.min_bet, max_bet=cmd.max_bet, from_round=nxt))

    def _offer_key(self, cmd: Any) -> tuple[str, str, Box]:
        """The offer ``cmd`` answers ("player@box"), whose it is, and the box."""
        s = self.state
        if s.phase != "offers":
            raise GameError("no_offer", "Insurance and even money are not on offer now.")
        box = s.boxes[self._box_index(cmd.box)]
        owner = self._owner(cmd)
        return f"{owner}@{cmd.box}", owner, box

    def _insure(self, cmd: C.Insure) -> None:
        s = self.state
        key, owner, box = self._offer_key(cmd)
        if any(w.kind == INSURANCE and w.player == owner for w in box.wagers):
            raise GameError("already_insured", "You have already insured this box.")
        if key not in s.offers:
            raise GameError("no_offer", "You have no insurance offer on this box.")
        if VALUE[s.dealer[0]] != 1:
            raise GameError("no_insurance", "Insurance is offered only against an ace.")
        if box.hands[0].blackjack and not s.profile.blackjack_insurable:
            raise GameError("blackjack_not_insurable", "At this house a blackjack takes even money, not insurance.")
        stake = self._stake_on(box, owner, 0)
        assert stake is not None
        half = (stake.amount - stake.excess) // 2
        if not 0 < cmd.amount <= half:
            raise GameError("insurance_too_large", f"Insure at most {half} (half the bet).")
        self._place(box, owner, INSURANCE, cmd.amount, -1)
        self._answered(key)

    def _even_money(self, cmd: C.EvenMoney) -> None:
        s = self.state
        key, owner, box = self._offer_key(cmd)
        if key not in s.offers or not box.hands[0].blackjack:
            raise GameError("no_even_money", "Even money is offered only on a blackjack.")
        if VALUE[s.dealer[0]] not in s.profile.even_money_against:
            raise GameError("no_even_money", "This house offers no even money against that card.")
        stake = self._stake_on(box, owner, 0)
        assert stake is not None
        self._settled(stake, settle_even_money(stake))
        self._answered(key)

    def _decline(self, cmd: C.DeclineOffer) -> None:
        s = self.state
        if cmd.role == "system":
            if s.phase != "offers":
                raise GameError("no_offer", "Nothing is on offer now.")
            s.offers = []
            self._answered("")
            return
        key, _owner, _box = self._offer_key(cmd)
        if key not in s.offers:
            raise GameError("no_offer", "You have no open offer on this box.")
        self._answered(key)

    def _close_offers(self, cmd: C.CloseOffers) -> None:
        s = self.state
        self._staff(cmd)
        if s.phase != "offers":
            raise GameError("no_offer", "Nothing is on offer now.")
        s.offers = []
        self._answered("")

    def _answered(self, key: str) -> None:
        s = self.state
        if key:
            s.offers.remove(key)
        if not s.offers:
            self._ev.append(E.OffersClosed())
            s.phase = "play"
            self._run()

    def _hit(self, cmd: C.Hit) -> None:
        box, hand = self._decision(cmd)
        if hand.split_aces:
            raise GameError("split_aces_one_card", "Split aces take one card each.")
        s = self.state
        self._ev.append(E.Acted(box=box.number, hand=cmd.hand, action="hit", by=cmd.by))
        s.need.append(s.turn_box * 8 + cmd.hand)
        self._run()

    def _stand(self, cmd: C.Stand) -> None:
        box, hand = self._decision(cmd)
        hand.done = True
        self._ev.append(E.Acted(box=box.number, hand=cmd.hand, action="stand", by=cmd.by))
        self._ev.append(E.HandDone(box=box.number, hand=cmd.hand, total=hand_value(hand.cards)[0], bust=False))
        self._run()

    def free_double(self, hand: Hand) -> bool:
        """Free Bet: a two-card hard 9, 10 or 11 doubles on the house's chip (split hands too)."""
        p = self.state.profile
        if not p.free_bet or len(hand.cards) != 2 or hand.doubled or hand.split_aces:
            return False
        return p.free_double(*hand_value(hand.cards))

    def free_split(self, box: Box, hand: Hand) -> bool:
        """Free Bet: any pair but 4s and tens splits on the house's chip."""
        return self.can_split(box, hand) and self.state.profile.free_split(VALUE[hand.cards[0]])

    def can_double(self, box: Box, hand: Hand) -> bool:
        p = self.state.profile
        cards = hand.cards
        if len(cards) != 2 or hand.doubled or hand.split_aces or hand.blackjack:
            return False
        if self.free_double(hand):
            return True
        if hand.tens_ace:
            return p.allows_double(11, False, True)  # Campione Art. 11: the ace counts as 1
        total, soft = hand_value(cards)
        return p.allows_double(total - 10 if soft else total, soft, hand.split)

    def can_split(self, box: Box, hand: Hand) -> bool:
        p = self.state.profile
        cards = hand.cards
        if len(cards) != 2 or hand.doubled or VALUE[cards[0]] != VALUE[cards[1]]:
            return False
        if len(box.hands) >= p.max_split_hands:
            return False
        if hand.split_aces and not p.resplit_aces:
            return False
        return True

    def _double(self, cmd: C.Double) -> None:
        box, hand = self._decision(cmd)
        if not self.can_double(box, hand):
            raise GameError("double_not_allowed", "This house does not allow doubling on this hand.")
        stake = self._stake_on(box, box.holder, cmd.hand)
        assert stake is not None
        free = self.free_double(hand)
        hand.doubled = True
        action = "free double" if free else "double"
        self._ev.append(E.Acted(box=box.number, hand=cmd.hand, action=action, by=cmd.by))
        if free:
            self._place_free(box, box.holder, FREE_DOUBLE, stake.amount - stake.excess, cmd.hand)
        else:
            self._place(box, box.holder, DOUBLE, stake.amount - stake.excess, cmd.hand)
        self._ask_behind(box, cmd.hand, "double")

    def _split(self, cmd: C.Split) -> None:
        box, hand = self._decision(cmd)
        if not self.can_split(box, hand):
            raise GameError("split_not_allowed", "This house does not allow splitting this hand.")
        stake = self._stake_on(box, box.holder, cmd.hand)
        assert stake is not None
        free = self.free_split(box, hand)
        aces = VALUE[hand.cards[0]] == 1
        new = Hand([hand.cards.pop()], split=True, split_aces=aces)
        hand.split = True
        hand.split_aces = aces
        hand.tens_ace = False
        box.hands.append(new)
        self._ev.append(E.Acted(box=box.number, hand=cmd.hand, action="free split" if free else "split", by=cmd.by))
        if free:
            self._place_free(box, box.holder, FREE_SPLIT, stake.amount - stake.excess, len(box.hands) - 1)
        else:
            self._place(box, box.holder, SPLIT, stake.amount - stake.excess, len(box.hands) - 1)
        self._ask_behind(box, cmd.hand, "split")

    def _ask_behind(self, box: Box, hi: int, action: str) -> None:
        s = self.state
        players = []
        for w in box.wagers:
            if w.hand == hi and w.player != box.holder and w.kind in (BEHIND, SPLIT) and not w.settled:
                if w.player not in players:
                    players.append(w.player)
        if players:
            s.behind = players
            s.behind_action = action
            self._ev.append(E.BehindAsked(box=box.number, hand=hi, action=action, players=list(players)))
            return
        self._behind_done(action)

    def _behind_done(self, action: str) -> None:
        s = self.state
        s.behind = []
        s.behind_action = ""
        if action == "double":
            s.need.append(s.turn_box * 8 + s.turn_hand)
        self._run()

    def _behind_check(self, cmd: Any, action: str) -> tuple[Box, str]:
        """The box a double or split waits on, and who answers ("" = a time-out for all)."""
        s = self.state
        if s.phase != "play" or s.behind_action != action or not s.behind:
            raise GameError("no_behind_choice", f"No {action} is waiting for the players behind.")
        box = s.boxes[s.turn_box]
        if cmd.box != box.number:
            raise GameError("not_your_turn", f"The choice is about box {box.number}.")
        if cmd.role == "system":
            return box, ""
        owner = self._owner(cmd)
        if owner not in s.behind:
            raise GameError("not_behind", "You have no bet behind waiting for this choice.")
        return box, owner

    def _behind_double(self, cmd: C.BehindDouble) -> None:
        s = self.state
        box, owner = self._behind_check(cmd, "double")
        if not owner:
            if cmd.accept:
                raise GameError("system_may_only_decline", "A time-out declines the double.")
            for pl in s.behind:
                self._ev.append(E.BehindChose(box=box.number, player=pl, choice="no double"))
            s.behind = []
        else:
            if cmd.accept:
                stake = self._stake_on(box, owner, s.turn_hand)
                assert stake is not None
                self._place(box, owner, DOUBLE, stake.amount - stake.excess, s.turn_hand)
            self._ev.append(E.BehindChose(box=box.number, player=owner, choice="double" if cmd.accept else "no double"))
            s.behind.remove(owner)
        if not s.behind:
            self._behind_done("double")

    def _behind_split(self, cmd: C.BehindSplit) -> None:
        s = self.state
        box, owner = self._behind_check(cmd, "split")
        hi, new = s.turn_hand, len(box.hands) - 1
        if not owner:
            if cmd.choice != "first":
                raise GameError("system_may_only_follow_first", "A time-out follows the first hand.")
            for pl in s.behind:
                self._ev.append(E.BehindChose(box=box.number, player=pl, choice="first"))
            s.behind = []
        else:
            stake = self._stake_on(box, owner, hi)
            assert stake is not None
            if cmd.choice == "second":
                for w in box.wagers:
                    if w.player == owner and w.hand == hi and not w.settled:
                        w.hand = new
            elif cmd.choice == "both":
                self._place(box, owner, SPLIT, stake.amount - stake.excess, new)
            self._ev.append(E.BehindChose(box=box.number, player=owner, choice=cmd.choice))
            s.behind.remove(owner)
        if not s.behind:
            self._behind_done("split")

    def _void_round(self, cmd: C.VoidRound) -> None:
        s = self.state
        self._staff(cmd)
        if s.phase not in ROUND_PHASES:
            raise GameError("no_round", "No round is being dealt.")
        if cmd.boxes:
            boxes = [s.boxes[self._box_index(n)] for n in cmd.boxes]
            if len(set(cmd.boxes)) != len(cmd.boxes):
                raise GameError("no_such_box", "A box is listed twice.")
        else:
            boxes = list(s.boxes)
        if len(boxes) == len(s.boxes):
            self._void_boxes(boxes, cmd.by, cmd.reason)
            self._end_round()
            return
        # Art. 19: only the listed boxes are void; their cards leave the round.
        self._void_boxes(boxes, cmd.by, cmd.reason)
        voided = {id(b) for b in boxes}
        tb = s.boxes[s.turn_box] if s.turn_box < len(s.boxes) else None
        s.need = [t for t in s.need if t < 0 or id(s.boxes[t >> 3]) not in voided]
        if tb is not None and id(tb) in voided:
            s.behind = []
            s.behind_action = ""
        if s.phase == "offers":
            # A void box's stakes are returned: its insurance / even money offers lapse.
            gone = {f"@{b.number}" for b in boxes}
            s.offers = [k for k in s.offers if k[k.rindex("@"):] not in gone]
            if not s.offers:
                self._answered("")
                return
        self._run()


_HANDLERS = {
    C.Shuffle: BlackjackTable._shuffle,
    C.Cut: BlackjackTable._cut,
    C.PassCut: BlackjackTable._pass_cut,
    C.Reshuffle: BlackjackTable._reshuffle,
    C.CutCardOut: BlackjackTable._cut_card_out_cmd,
    C.Sit: BlackjackTable._sit,
    C.Leave: BlackjackTable._leave,
    C.ReleaseSeat: BlackjackTable._release_seat,
    C.CloseTable: BlackjackTable._close_table,
    C.PlaceBet: BlackjackTable._place_bet,
    C.WithdrawBet: BlackjackTable._withdraw_bet,
    C.CloseBets: BlackjackTable._close_bets,
    C.PlaceSideBet: BlackjackTable._place_side_bet,
    C.WithdrawSideBet: BlackjackTable._withdraw_side_bet,
    C.JackpotMeters: BlackjackTable._jackpot_meters,
    C.SetLimits: BlackjackTable._set_limits,
    C.Card: BlackjackTable._card,
    C.Insure: BlackjackTable._insure,
    C.EvenMoney: BlackjackTable._even_money,
    C.DeclineOffer: BlackjackTable._decline,
    C.CloseOffers: BlackjackTable._close_offers,
    C.Hit: BlackjackTable._hit,
    C.Stand: BlackjackTable._stand,
    C.Double: BlackjackTable._double,
    C.Split: BlackjackTable._split,
    C.BehindDouble: BlackjackTable._behind_double,
    C.BehindSplit: BlackjackTable._behind_split,
    C.VoidRound: BlackjackTable._void_round,
    C.BurnCard: BlackjackTable._burn,
    C.ExposeCard: BlackjackTable._expose,
}


def encode_state(state: TableState) -> bytes:
    return msgspec.msgpack.encode(state)


def decode_state(data: bytes) -> TableState:
    return msgspec.msgpack.decode(data, type=TableState)
