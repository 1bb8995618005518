"""The table's shoe commands: shuffling, the cut, ending the shoe, live cards, burned
and misdrawn cards. Part of ``BlackjackTable`` (a mixin): ``table.py`` dispatches every
command and runs the automatic steps, so there is still one owner of the transitions."""

from __future__ import annotations

from typing import Any

from blackjack import commands as C
from blackjack import events as E
from blackjack.cards import full_shoe
from blackjack.shoe import check_order, commitment, cut, cut_bounds, fresh_counts
from blackjack.state import BURN_PHASES, ROUND_PHASES, TableState
from games.errors import GameError
from games.players import is_floor


class ShoeCommands:
    state: TableState
    _ev: list[Any]

    def _shuffle(self, cmd: C.Shuffle) -> None:
        s = self.state
        self._staff(cmd)
        if s.phase not in ("shuffle", "reshuffle", "closed"):
            raise GameError("not_shuffle_time", "The shoe is shuffled only when it has ended or run short.")
        if s.live:
            if cmd.order:
                raise GameError("live_table", "A live table's shoe is shuffled by hand: send no order.")
            if s.phase == "reshuffle":
                raise GameError("live_table", "A live table voids or goes on by hand when the shoe runs short.")
            s.left = fresh_counts(s.profile)
            s.phase = "cut"
            self._ev.append(E.ShoeShuffled(cards=s.profile.cards, commitment=""))
            return
        if s.phase != "reshuffle":  # a new shoe (a closed table reopens with it)
            check_order(cmd.order, full_shoe(s.profile.decks))
            s.order = list(cmd.order)
            s.pos = 0
            s.cut_index = -1
            s.phase = "cut"
            self._ev.append(E.ShoeShuffled(cards=len(s.order), commitment=commitment(s.order, cmd.salt)))
            return
        # Mid-round: every card not on the table (discards and burned cards) is shuffled.
        on_table = self._cards_on_table()
        expected = full_shoe(s.profile.decks)
        for c in on_table:
            expected.remove(c)
        check_order(cmd.order, expected)
        s.order = list(cmd.order)
        s.pos = 0
        s.cut_index = -1
        s.phase = s.resume_phase
        s.resume_phase = ""
        self._ev.append(E.ShoeShuffled(cards=len(s.order), commitment=commitment(s.order, cmd.salt)))
        self._run()

    def _cut_for(self, cmd: Any) -> str:
        """Whose cut or pass ``cmd`` is: the entitled player's (his own command, his
        time-out, or the croupier's for a floor player at a live table)."""
        s = self.state
        entitled = s.cut_entitled
        if not entitled:
            raise GameError("not_entitled_to_cut", "Nobody is offered the cut: the house cuts.")
        if cmd.role == "player":
            if cmd.by != entitled:
                raise GameError("not_entitled_to_cut", f"The cut is offered to {entitled}.")
        elif cmd.role != "system" and not (s.live and is_floor(entitled)):
            raise GameError("not_entitled_to_cut", f"The cut is offered to {entitled}.")
        return entitled

    def _pass_cut(self, cmd: C.PassCut) -> None:
        """The entitled player declines the cut: to the next box holder on his left where
        the cut passes left (Campione Art. 30), else (and after the last) to the house."""
        s = self.state
        if s.phase != "cut":
            raise GameError("not_cut_time", "There is no shoe waiting to be cut.")
        player = self._cut_for(cmd)
        nxt = s.cut_chain[0] if s.cut_chain else ""
        s.cut_chain = s.cut_chain[1:]
        s.cut_entitled = nxt
        self._ev.append(E.CutPassed(player=player, to=nxt, by=cmd.by))

    def _cut(self, cmd: C.Cut) -> None:
        s = self.state
        p = s.profile
        if s.phase != "cut":
            raise GameError("not_cut_time", "There is no shoe waiting to be cut.")
        if cmd.role == "system" and cmd.at is not None:
            raise GameError("system_may_only_pass", "A time-out can only pass the cut.")
        player = ""  # the entitled player who cuts or passes; "" = the house cuts
        if s.cut_entitled:
            player = self._cut_for(cmd)
            if cmd.at is None and s.cut_chain:
                raise GameError(
                    "pass_cut_first",
                    f"Declined, the cut goes to {s.cut_chain[0]} first: send pass_cut.",
                )
        elif cmd.role == "player":
            raise GameError("not_entitled_to_cut", "The cut is offered to the management.")
        lo, hi = cut_bounds(p, p.cards)
        at = cmd.at if cmd.at is not None else cmd.random_at
        if at is None:
            raise GameError("cut_point_missing", "A passed cut needs the point drawn by the server.")
        if not lo <= at <= hi:
            raise GameError("cut_out_of_bounds", f"Cut between {lo} and {hi} cards.")
        if not s.live:
            s.order = cut(s.order, at)
            s.cut_index = len(s.order) - p.cut_card_from_end
            s.pos = p.burn_cards
        s.last_round = False
        s.reshuffle_after = False
        s.cut_entitled = ""
        s.cut_chain = []
        if player and cmd.at is None:
            # He passes and nobody is left to offer it to: the house cuts at the drawn point.
            self._ev.append(E.CutPassed(player=player, to="", by=cmd.by))
        self._ev.append(E.ShoeCut(by=cmd.by, at=at, chosen=cmd.at is not None))
        self._ev.append(E.CardsBurned(count=p.burn_cards))
        self._open_round()

    def _reshuffle(self, cmd: C.Reshuffle) -> None:
        s = self.state
        self._staff(cmd)
        if s.phase not in ROUND_PHASES and s.phase != "betting":
            raise GameError("no_shoe", "There is no shoe in play to end.")
        now = s.phase == "betting" and not s.bets
        self._ev.append(E.ReshuffleOrdered(by=cmd.by, after_round=not now))
        if now:
            self._end_shoe()
        else:
            s.reshuffle_after = True

    def _cut_card_out_cmd(self, cmd: C.CutCardOut) -> None:
        s = self.state
        self._staff(cmd)
        if not s.live:
            raise GameError("not_live", "On an RNG table the engine knows where the cut card is.")
        if s.phase not in ROUND_PHASES:
            raise GameError("no_round", "The cut card can only come out during a round.")
        if s.last_round:
            raise GameError("cut_card_already_out", "The cut card is already out.")
        self._cut_card_out()

    def _card(self, cmd: C.Card) -> None:
        s = self.state
        if not s.live:
            raise GameError("not_live", "Cards come from the shuffled shoe on an RNG table.")
        self._staff(cmd)
        if not s.need:
            raise GameError("no_card_expected", "No card is due now.")
        t = s.need[0]
        if t < 0:
            want_box, want_hand, who = 0, 0, "the dealer"
        else:
            box = s.boxes[t >> 3]
            want_box, want_hand, who = box.number, t & 7, f"box {box.number} hand {t & 7}"
        if cmd.box != want_box or (t >= 0 and cmd.hand != want_hand):
            raise GameError("wrong_recipient", f"The next card is for {who}.")
        self._check_live_card(cmd.card)
        if s.exposed >= 0:
            s.exposed = -1
        else:
            s.left[cmd.card] -= 1
        self._give(cmd.card)
        self._run()

    def _check_live_card(self, card: int) -> None:
        s = self.state
        if not 0 <= card < 52:
            raise GameError("not_a_card", f"{card} is not a card.")
        if s.exposed >= 0:
            if card != s.exposed:
                raise GameError("exposed_card_first", "The card lying face up must be given first.")
            return
        if s.left[card] <= 0:
            raise GameError("card_not_in_shoe", "That card is not left in the shoe.")

    def _burn(self, cmd: C.BurnCard) -> None:
        s = self.state
        self._staff(cmd)
        if s.profile.misdrawn_card == "offer":
            if s.phase != "play":
                raise GameError("burn_not_allowed_now", "Only a card turned during the players' drawing is burned.")
        elif s.phase not in BURN_PHASES:
            raise GameError("burn_not_allowed_now", "A card is burned only while a round is being played.")
        if s.live:
            if cmd.card is None:
                raise GameError("card_missing", "Say which card was burned.")
            self._check_live_card(cmd.card)
            card = cmd.card
            if s.exposed >= 0:
                s.exposed = -1
            else:
                s.left[card] -= 1
        else:
            if cmd.card is not None:
                raise GameError("not_live", "On an RNG table the next card of the shoe is burned.")
            if s.pos >= len(s.order):
                raise GameError("shoe_empty", "No card is left to burn.")
            card = self._draw()
        self._ev.append(E.CardBurned(by=cmd.by, card=card))

    def _expose(self, cmd: C.ExposeCard) -> None:
        s = self.state
        self._staff(cmd)
        if s.profile.misdrawn_card == "burn":
            raise GameError("misdrawn_card_burned", "At this house a card drawn by mistake is burned, not offered.")
        if s.phase not in ("play", "dealer"):
            raise GameError("expose_not_allowed_now", "A misdrawn card is handled during the drawing.")
        if s.exposed >= 0:
            raise GameError("card_already_exposed", "A card is already lying face up.")
        if s.live:
            if cmd.card is None:
                raise GameError("card_missing", "Say which card was drawn.")
            self._check_live_card(cmd.card)
            s.left[cmd.card] -= 1
            card = cmd.card
        else:
            if cmd.card is not None:
                raise GameError("not_live", "On an RNG table the next card of the shoe is the one drawn.")
            if s.pos >= len(s.order):
                raise GameError("shoe_empty", "No card is left.")
            if s.pos == s.cut_index:
                self._cut_card_out()
            card = s.order[s.pos]
        s.exposed = card
        self._ev.append(E.CardExposed(by=cmd.by, card=card))
