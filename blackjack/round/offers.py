"""Insurance and even money after the deal: each box's stakes are offered them (the dealer
shows an ace, or a ten where the house pays even money against it); the play begins once
every offer is answered, or the croupier or a time-out closes them."""

from __future__ import annotations

from blackjack import commands as C
from blackjack import events as E
from blackjack.phases import Phase
from blackjack.round.common import Out, box_numbered, check, owner, place, settled, stake_on
from blackjack.round.steps import even_money_refusal, insurance_refusal, run
from blackjack.round.tournament import points_refusal
from blackjack.settlement import settle_even_money
from blackjack.state import Box, Offer, TableState
from blackjack.wager_kinds import WagerKind
from games.commands import Actor
from games.errors import GameError


def _offer(s: TableState, cmd: C.Insure | C.EvenMoney | C.DeclineOffer, actor: Actor) -> tuple[Offer, Box]:
    """The offer ``cmd`` answers (whose it is, on which box) and the box."""
    box = box_numbered(s, cmd.box)
    return Offer(owner(s, cmd.player, actor), cmd.box), box


def insure(s: TableState, cmd: C.Insure, actor: Actor, out: Out) -> None:
    offer, box = _offer(s, cmd, actor)
    if any(w.kind == WagerKind.INSURANCE and w.player == offer.player for w in box.wagers):
        raise GameError("already_insured", "You have already insured this box.")
    if offer not in s.offers:
        raise GameError("no_offer", "You have no insurance offer on this box.")
    check(insurance_refusal(s, box))
    stake = stake_on(box, offer.player, 0)
    half = (stake.amount - stake.excess) // 2
    if not 0 < cmd.amount <= half:
        raise GameError("insurance_too_large", f"Insure at most {half} (half the bet).")
    check(points_refusal(s, offer.player, cmd.amount))
    place(s, out, box, offer.player, WagerKind.INSURANCE, cmd.amount, -1)
    answered(s, out, offer)


def even_money(s: TableState, cmd: C.EvenMoney, actor: Actor, out: Out) -> None:
    offer, box = _offer(s, cmd, actor)
    if offer not in s.offers:  # (refused as a box without a blackjack is)
        raise GameError("no_even_money", "Even money is offered only on a blackjack.")
    check(even_money_refusal(s, box))
    stake = stake_on(box, offer.player, 0)
    settled(out, stake, settle_even_money(stake))
    answered(s, out, offer)


def decline(s: TableState, cmd: C.DeclineOffer, actor: Actor, out: Out) -> None:
    if actor.role == "system":  # a time-out: every offer still open is declined
        s.offers = []
        answered(s, out, None)
        return
    offer, _box = _offer(s, cmd, actor)
    if offer not in s.offers:
        raise GameError("no_offer", "You have no open offer on this box.")
    answered(s, out, offer)


def close_offers(s: TableState, cmd: C.CloseOffers, actor: Actor, out: Out) -> None:
    s.offers = []
    answered(s, out, None)


def answered(s: TableState, out: Out, offer: Offer | None) -> None:
    """``offer`` is answered (None: all were); the play begins after the last."""
    if offer is not None:
        s.offers.remove(offer)
    if not s.offers:
        out.append(E.OffersClosed())
        s.phase = Phase.PLAY
        run(s, out)
