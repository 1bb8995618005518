"""What a pile of chips on a box is (``Wager.kind``): one name per kind, each with its own
settle function (``settlement``). Strings on the wire and in saved states."""

from __future__ import annotations

from enum import StrEnum


class WagerKind(StrEnum):
    BOX = "box"  # the box holder's stake
    BEHIND = "behind"  # a stake behind someone else's box
    DOUBLE = "double"
    SPLIT = "split"
    INSURANCE = "insurance"
    # Free Bet (Lugano): the house's chip beside a free double or a free split. It is placed
    # and voided as 0 of the player's money and, settled, pays its win with a stake of 0.
    FREE_DOUBLE = "free_double"
    FREE_SPLIT = "free_split"
    # Lugano's side bets: they ride on no hand (``Wager.hand == -1``).
    PERFECT_PAIRS = "perfect_pairs"
    TWENTY_ONE_PLUS_THREE = "21+3"
    PUSH_22 = "push_22"
    BLAZING_7S = "blazing_7s"


FREE_KINDS = frozenset((WagerKind.FREE_DOUBLE, WagerKind.FREE_SPLIT))
# A person's own stake riding on a hand (on a free split hand, the house's chip stands for it).
STAKE_KINDS = frozenset((WagerKind.BOX, WagerKind.BEHIND, WagerKind.SPLIT, WagerKind.FREE_SPLIT))
