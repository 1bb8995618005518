"""The shoe's commands: shuffling, the cut, ending the shoe, live cards, burned and
misdrawn cards."""

from __future__ import annotations

from blackjack import commands as C
from blackjack import events as E
from blackjack.phases import Phase
from blackjack.round.common import Out, check
from blackjack.round.deal import cards_on_table, cut_card_out, draw, give
from blackjack.round.dealer import end_shoe, open_round
from blackjack.round.steps import run
from blackjack.round.tournament import in_play
from blackjack.state import TableState
from games.cards import full_shoe
from games.commands import Actor
from games.errors import GameError
from games.players import is_floor
from games.shoe import check_order, commitment, cut, cut_bounds, fresh_counts


def shuffle_refusal(s: TableState, order: list[int]) -> GameError | None:
    """Why a shuffle in ``order`` is refused before the order itself is checked, or None:
    a live table's shoe is shuffled by hand, and only a new one."""
    if s.live:
        if order:
            return GameError("live_table", "A live table's shoe is shuffled by hand: send no order.")
        if s.phase == Phase.RESHUFFLE:
            return GameError("live_table", "A live table voids or goes on by hand when the shoe runs short.")
    return None


def shuffle(s: TableState, cmd: C.Shuffle, actor: Actor, out: Out) -> None:
    check(shuffle_refusal(s, cmd.order))
    if s.live:
        s.left = fresh_counts(s.profile)
        s.phase = Phase.CUT
        out.append(E.ShoeShuffled(cards=s.profile.cards, commitment=""))
        return
    if s.phase != Phase.RESHUFFLE:  # a new shoe (a closed table reopens with it)
        check_order(cmd.order, full_shoe(s.profile.decks))
        s.order = list(cmd.order)
        s.pos = 0
        s.cut_index = -1
        s.phase = Phase.CUT
        out.append(E.ShoeShuffled(cards=len(s.order), commitment=commitment(s.order, cmd.salt)))
        return
    # Mid-round: every card not on the table (discards and burned cards) is shuffled.
    expected = full_shoe(s.profile.decks)
    for c in cards_on_table(s):
        expected.remove(c)
    check_order(cmd.order, expected)
    s.order = list(cmd.order)
    s.pos = 0
    s.cut_index = -1
    s.phase = Phase(s.resume_phase)
    s.resume_phase = ""
    out.append(E.ShoeShuffled(cards=len(s.order), commitment=commitment(s.order, cmd.salt)))
    run(s, out)


def entitled_refusal(s: TableState, actor: Actor) -> GameError | None:
    """Why ``actor`` may not cut or pass the cut as the entitled player, or None: it is
    his own command, his time-out, or the croupier's for a floor player at a live table."""
    entitled = s.cut_entitled
    if not entitled:
        return GameError("not_entitled_to_cut", "Nobody is offered the cut: the house cuts.")
    if actor.role == "player":
        if actor.id != entitled:
            return GameError("not_entitled_to_cut", f"The cut is offered to {entitled}.")
    elif actor.role != "system" and not (s.live and is_floor(entitled)):
        return GameError("not_entitled_to_cut", f"The cut is offered to {entitled}.")
    return None


def cut_refusal(s: TableState, actor: Actor, at: int | None) -> GameError | None:
    """Why ``actor`` may not cut at ``at`` (None: at the point the server drew), whatever
    its bounds, or None. The entitled player cuts or passes; with nobody entitled the
    house cuts; a time-out only passes, and so cuts only where nobody is left to pass to."""
    if actor.role == "system" and at is not None:
        return GameError("system_may_only_pass", "A time-out can only pass the cut.")
    if not s.cut_entitled:
        if actor.role == "player":
            return GameError("not_entitled_to_cut", "The cut is offered to the management.")
        return None
    error = entitled_refusal(s, actor)
    if error is None and at is None and s.cut_chain:
        return GameError("pass_cut_first", f"Declined, the cut goes to {s.cut_chain[0]} first: send pass_cut.")
    return error


def pass_cut(s: TableState, cmd: C.PassCut, actor: Actor, out: Out) -> None:
    """The entitled player declines the cut: to the next box holder on his left where the
    cut passes left (Campione Art. 30), else (and after the last) to the house."""
    check(entitled_refusal(s, actor))
    player = s.cut_entitled
    nxt = s.cut_chain[0] if s.cut_chain else ""
    s.cut_chain = s.cut_chain[1:]
    s.cut_entitled = nxt
    out.append(E.CutPassed(player=player, to=nxt, by=actor.id))


def cut_shoe(s: TableState, cmd: C.Cut, actor: Actor, out: Out) -> None:
    p = s.profile
    check(cut_refusal(s, actor, cmd.at))
    player = s.cut_entitled  # the entitled player who cuts or passes; "" = the house cuts
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
        out.append(E.CutPassed(player=player, to="", by=actor.id))
    out.append(E.ShoeCut(by=actor.id, at=at, chosen=cmd.at is not None))
    out.append(E.CardsBurned(count=p.burn_cards))
    open_round(s, out)


def reshuffle(s: TableState, cmd: C.Reshuffle, actor: Actor, out: Out) -> None:
    """End the shoe now if no bet is down yet, else after this round. At a tournament
    table the hand already opened is played first (Art. 27: every hand is played, and
    counted), so the shoe always ends with a hand."""
    now = s.phase == Phase.BETTING and not s.bets and in_play(s) is None
    out.append(E.ReshuffleOrdered(by=actor.id, after_round=not now))
    if now:
        end_shoe(s, out)
    else:
        s.reshuffle_after = True


def cut_card_refusal(s: TableState) -> GameError | None:
    return GameError("cut_card_already_out", "The cut card is already out.") if s.last_round else None


def report_cut_card(s: TableState, cmd: C.CutCardOut, actor: Actor, out: Out) -> None:
    check(cut_card_refusal(s))
    cut_card_out(s, out)


def card_refusal(s: TableState) -> GameError | None:
    return None if s.deal_queue else GameError("no_card_expected", "No card is due now.")


def card(s: TableState, cmd: C.Card, actor: Actor, out: Out) -> None:
    """A live table's card, seen going to where the next card is due."""
    check(card_refusal(s))
    target = s.deal_queue[0]
    if not target.box:
        who = "the dealer"
    else:
        who = f"box {target.box} hand {target.hand}"
    if cmd.box != target.box or (target.box and cmd.hand != target.hand):
        raise GameError("wrong_recipient", f"The next card is for {who}.")
    _check_live_card(s, cmd.card)
    if s.exposed >= 0:
        s.exposed = -1
    else:
        s.left[cmd.card] -= 1
    give(s, out, cmd.card)
    run(s, out)


def _check_live_card(s: TableState, card: int) -> None:
    if not 0 <= card < 52:
        raise GameError("not_a_card", f"{card} is not a card.")
    if s.exposed >= 0:
        if card != s.exposed:
            raise GameError("exposed_card_first", "The card lying face up must be given first.")
        return
    if s.left[card] <= 0:
        raise GameError("card_not_in_shoe", "That card is not left in the shoe.")


def card_left(s: TableState) -> bool:
    """Is a card left to burn or to turn? (A live shoe's: the croupier says which.)"""
    return s.live or s.pos < len(s.order)


def burn_refusal(s: TableState) -> GameError | None:
    if s.profile.misdrawn_card == "offer" and s.phase != Phase.PLAY:
        # Campione Art. 17: during the deal and the dealer's play a turned card stays valid.
        return GameError("burn_not_allowed_now", "Only a card turned during the players' drawing is burned.")
    return None


def burn(s: TableState, cmd: C.BurnCard, actor: Actor, out: Out) -> None:
    """A card turned in the shoe during the drawing is eliminated (Campione Art. 17,
    Titano Art. 17)."""
    check(burn_refusal(s))
    if s.live:
        if cmd.card is None:
            raise GameError("card_missing", "Say which card was burned.")
        _check_live_card(s, cmd.card)
        card = cmd.card
        if s.exposed >= 0:
            s.exposed = -1
        else:
            s.left[card] -= 1
    else:
        if cmd.card is not None:
            raise GameError("not_live", "On an RNG table the next card of the shoe is burned.")
        if not card_left(s):
            raise GameError("shoe_empty", "No card is left to burn.")
        card = draw(s, out)
    out.append(E.CardBurned(by=actor.id, card=card))


def expose_refusal(s: TableState) -> GameError | None:
    return GameError("card_already_exposed", "A card is already lying face up.") if s.exposed >= 0 else None


def expose(s: TableState, cmd: C.ExposeCard, actor: Actor, out: Out) -> None:
    """A card drawn by mistake (Campione Art. 24) lies face up for the next who asks."""
    check(expose_refusal(s))
    if s.live:
        if cmd.card is None:
            raise GameError("card_missing", "Say which card was drawn.")
        _check_live_card(s, cmd.card)
        s.left[cmd.card] -= 1
        card = cmd.card
    else:
        if cmd.card is not None:
            raise GameError("not_live", "On an RNG table the next card of the shoe is the one drawn.")
        if not card_left(s):
            raise GameError("shoe_empty", "No card is left.")
        if s.pos == s.cut_index:
            cut_card_out(s, out)
        card = s.order[s.pos]
    s.exposed = card
    out.append(E.CardExposed(by=actor.id, card=card))
