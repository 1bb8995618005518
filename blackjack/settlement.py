"""Settlement: one function per wager kind, each turning a wager and what the round
decided into exactly one ``WagerSettled``. New kinds (side bets) add a function and an
entry in ``SETTLE``."""

from __future__ import annotations

from blackjack import sidebets
from blackjack.profiles import Profile
from blackjack.state import BEHIND, BOX, DOUBLE, FREE_DOUBLE, FREE_KINDS, FREE_SPLIT, SPLIT, Wager
from games.wagers import WagerSettled

# How a hand ended against the dealer.
LOSE, PUSH, WIN, BLACKJACK = 0, 1, 2, 3


def hand_outcome(total: int, blackjack: bool, dealer_total: int, dealer_bj: bool) -> int:
    """``total`` > 21 is a bust; a blackjack only ties a dealer blackjack."""
    if total > 21:
        return LOSE
    if dealer_bj:
        return PUSH if blackjack else LOSE
    if blackjack:
        return BLACKJACK
    if dealer_total > 21 or total > dealer_total:
        return WIN
    return PUSH if total == dealer_total else LOSE


_REASON = ("lose", "push", "win", "blackjack")


def settle_stake(w: Wager, outcome: int, dealer_bj: bool, p: Profile) -> WagerSettled:
    """A box holder's or a behind stake, or the stake of a split hand."""
    a = w.amount
    paid = a - w.excess  # an excess over the maximum is not paid, and returned on a loss
    if outcome == LOSE:
        return WagerSettled(w.id, w.player, a, w.excess, 0, _REASON[outcome])
    if outcome == PUSH:
        return WagerSettled(w.id, w.player, a, a, 0, _REASON[outcome])
    if outcome == WIN:
        return WagerSettled(w.id, w.player, a, a, paid, _REASON[outcome])
    num, den = p.blackjack_pays
    # Odd minor units round down in the house's favour.
    return WagerSettled(w.id, w.player, a, a, paid * num // den, _REASON[outcome])


def settle_extra(w: Wager, outcome: int, dealer_bj: bool, p: Profile) -> WagerSettled:
    """A double or the second stake of a split: like a stake, except that under
    "original bets only" a dealer blackjack hands it back."""
    if dealer_bj and p.dealer_blackjack_takes == "original":
        return WagerSettled(w.id, w.player, w.amount, w.amount, 0, "returned")
    return settle_stake(w, outcome, dealer_bj, p)


def settle_insurance(w: Wager, dealer_bj: bool) -> WagerSettled:
    """Insurance pays 2:1 on a dealer blackjack and is lost otherwise."""
    if dealer_bj:
        return WagerSettled(w.id, w.player, w.amount, w.amount, 2 * w.amount, "insurance wins")
    return WagerSettled(w.id, w.player, w.amount, 0, 0, "insurance loses")


def settle_even_money(w: Wager) -> WagerSettled:
    return WagerSettled(w.id, w.player, w.amount, w.amount, w.amount - w.excess, "even money")


def settle_free(w: Wager, outcome: int, dealer_bj: bool, p: Profile) -> WagerSettled:
    """The house's free chip (Free Bet): it wins like a real one (a split or doubled hand
    is never a blackjack) and the player never loses it, since nothing of theirs is on it."""
    what = "free double" if w.kind == FREE_DOUBLE else "free split"
    if outcome >= WIN:
        return WagerSettled(w.id, w.player, 0, 0, w.amount, f"{what}: win")
    return WagerSettled(w.id, w.player, 0, 0, 0, f"{what}: {_REASON[outcome]} (the house's chip)")


def settle_bust(w: Wager) -> WagerSettled:
    if w.kind in FREE_KINDS:
        return WagerSettled(w.id, w.player, 0, 0, 0, "bust (the house's chip)")
    # Titano Art. 9: an excess over the maximum was never in play: returned on a bust too.
    return WagerSettled(w.id, w.player, w.amount, w.excess, 0, "bust")


# Wagers riding on a hand, settled against the dealer: kind -> function.
SETTLE = {
    BOX: settle_stake, BEHIND: settle_stake, SPLIT: settle_extra, DOUBLE: settle_extra,
    FREE_DOUBLE: settle_free, FREE_SPLIT: settle_free,
}
HAND_KINDS = frozenset(SETTLE)

# Extension points for bets that do not ride on a hand (Lugano's side bets, issue 4).
# Each maps a wager kind to ``f(wager, box, state) -> WagerSettled``:
# AFTER_DEAL is called once the first two cards and the dealer's up card are out
# (Perfect Pairs, 21+3); ROUND_END once the dealer has finished (Push 22). A ROUND_END
# wager still open makes the dealer play out his hand even if every box is bust.
# Blazing 7s needs the whole table (envy bonuses) and the jackpot pool, so the table
# settles it itself (``BlackjackTable._settle_blazing``).
AFTER_DEAL: dict = {
    sidebets.PERFECT_PAIRS: sidebets.settle_perfect_pairs,
    sidebets.TWENTY_ONE_PLUS_THREE: sidebets.settle_twenty_one_plus_three,
}
ROUND_END: dict = {sidebets.PUSH_22: sidebets.settle_push_22}
