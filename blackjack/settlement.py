"""Settlement: one function per wager kind, each turning a wager and what the round
decided into exactly one ``WagerSettled``. New kinds (side bets) add a function and an
entry in ``SETTLE``, ``AFTER_DEAL`` or ``ROUND_END``."""

from __future__ import annotations

from collections.abc import Callable
from enum import IntEnum

from blackjack import sidebets
from blackjack.profiles import Profile
from blackjack.state import Box, TableState, Wager
from blackjack.wager_kinds import FREE_KINDS, WagerKind
from games.wagers import WagerSettled


class Outcome(IntEnum):
    """How a hand ended against the dealer (ordered: a win or better pays)."""

    LOSE = 0
    PUSH = 1
    WIN = 2
    BLACKJACK = 3

    @property
    def reason(self) -> str:
        return self.name.lower()


def hand_outcome(total: int, blackjack: bool, dealer_total: int, dealer_bj: bool) -> Outcome:
    """``total`` > 21 is a bust; a blackjack only ties a dealer blackjack."""
    if total > 21:
        return Outcome.LOSE
    if dealer_bj:
        return Outcome.PUSH if blackjack else Outcome.LOSE
    if blackjack:
        return Outcome.BLACKJACK
    if dealer_total > 21 or total > dealer_total:
        return Outcome.WIN
    return Outcome.PUSH if total == dealer_total else Outcome.LOSE


def settle_stake(w: Wager, outcome: Outcome, dealer_bj: bool, p: Profile) -> WagerSettled:
    """A box holder's or a behind stake, or the stake of a split hand."""
    a = w.amount
    paid = a - w.excess  # an excess over the maximum is not paid, and returned on a loss
    if outcome == Outcome.LOSE:
        return WagerSettled(w.id, w.player, a, w.excess, 0, outcome.reason)
    if outcome == Outcome.PUSH:
        return WagerSettled(w.id, w.player, a, a, 0, outcome.reason)
    if outcome == Outcome.WIN:
        return WagerSettled(w.id, w.player, a, a, paid, outcome.reason)
    num, den = p.blackjack_pays
    # Odd minor units round down in the house's favour.
    return WagerSettled(w.id, w.player, a, a, paid * num // den, outcome.reason)


def settle_extra(w: Wager, outcome: Outcome, dealer_bj: bool, p: Profile) -> WagerSettled:
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


def settle_free(w: Wager, outcome: Outcome, dealer_bj: bool, p: Profile) -> WagerSettled:
    """The house's free chip (Free Bet): it wins like a real one (a split or doubled hand
    is never a blackjack) and the player never loses it, since nothing of theirs is on it."""
    what = "free double" if w.kind == WagerKind.FREE_DOUBLE else "free split"
    if outcome >= Outcome.WIN:
        return WagerSettled(w.id, w.player, 0, 0, w.amount, f"{what}: win")
    return WagerSettled(w.id, w.player, 0, 0, 0, f"{what}: {outcome.reason} (the house's chip)")


def settle_bust(w: Wager) -> WagerSettled:
    if w.kind in FREE_KINDS:
        return WagerSettled(w.id, w.player, 0, 0, 0, "bust (the house's chip)")
    # Titano Art. 9: an excess over the maximum was never in play: returned on a bust too.
    return WagerSettled(w.id, w.player, w.amount, w.excess, 0, "bust")


# Wagers riding on a hand, settled against the dealer: kind -> function.
SETTLE: dict[WagerKind, Callable[[Wager, Outcome, bool, Profile], WagerSettled]] = {
    WagerKind.BOX: settle_stake, WagerKind.BEHIND: settle_stake,
    WagerKind.SPLIT: settle_extra, WagerKind.DOUBLE: settle_extra,
    WagerKind.FREE_DOUBLE: settle_free, WagerKind.FREE_SPLIT: settle_free,
}
HAND_KINDS = frozenset(SETTLE)

# Bets that do not ride on a hand (Lugano's side bets), kind -> f(wager, box, state):
# AFTER_DEAL is called once the first two cards and the dealer's up card are out
# (Perfect Pairs, 21+3); ROUND_END once the dealer has finished (Push 22). A ROUND_END
# wager still open makes the dealer play out his hand even if every box is bust.
# Blazing 7s needs the whole table (envy bonuses) and the jackpot pool, so the round
# settles it itself (``round.sidebets.settle_blazing``).
SideSettle = Callable[[Wager, Box, TableState], WagerSettled]
AFTER_DEAL: dict[WagerKind, SideSettle] = {
    WagerKind.PERFECT_PAIRS: sidebets.settle_perfect_pairs,
    WagerKind.TWENTY_ONE_PLUS_THREE: sidebets.settle_twenty_one_plus_three,
}
ROUND_END: dict[WagerKind, SideSettle] = {WagerKind.PUSH_22: sidebets.settle_push_22}
