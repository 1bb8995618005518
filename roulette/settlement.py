"""Settlement of one spin: a pure function the engine and the odds report both use.

Per bet: a winner gets its stake back plus stake x pays; a loser loses it. Zero
(Art. 3): combinations containing 0 win as usual, every other multiple loses, and a
simple chance goes en prison or, for an owner who chose partage, returns half at once.
An imprisoned bet is freed unpaid when the next decisive spin wins it and lost when it
loses; on a second zero it is lost (``prison_on_zero="lose"``) or stays (``"stay"``).
On the last spin before the table closes ("la dernière", ``last=True``) no later spin
can decide a prisoner, so the zero splits what would go or stay en prison (partage):
handing it back whole would make that spin's simple chances a bet without house edge.
Partage of an odd stake hands the player the larger half: Art. 3 lets the bank take
half of the bet, never more.
The Art. 8 excess of a croupier-entered bet is never in play and is always returned.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable

from .layout import PAYS_BY_NAME, SIMPLE_NAMES, WINNERS
from .state import Bet

WON = "won"
LOST = "lost"
PARTAGE = "partage"
PRISON = "prison"  # goes en prison now: no money moves yet
FREED = "freed"  # prisoner freed: whole stake back, unpaid
PRISON_LOST = "prison_lost"
PRISON_STAYS = "prison_stays"  # second zero under prison_on_zero="stay"

FINAL = frozenset({WON, LOST, PARTAGE, FREED, PRISON_LOST})


# (bet, result, returned: of the stake back to the owner, won: paid by the bank on top);
# plain tuples because a spin may hold tens of thousands of bets.
Outcome = tuple[Bet, str, int, int]


def partage_return(bet: Bet) -> int:
    return bet.excess + (bet.amount - bet.excess + 1) // 2


def settle(
    bets: Iterable[Bet],
    number: int,
    prison_on_zero: str = "lose",
    partage_players: Collection[str] = (),
    last: bool = False,
) -> list[Outcome]:
    wins = WINNERS[number]
    zero = number == 0
    stay = prison_on_zero == "stay"
    pays = PAYS_BY_NAME
    out: list[Outcome] = []
    append = out.append
    for b in bets:
        spot = b.spot
        if b.prison:
            if zero and not stay:
                append((b, PRISON_LOST, b.excess, 0))
            elif zero:
                append((b, PARTAGE, partage_return(b), 0) if last else (b, PRISON_STAYS, 0, 0))
            elif spot in wins:
                append((b, FREED, b.amount, 0))
            else:
                append((b, PRISON_LOST, b.excess, 0))
        elif spot in wins:
            append((b, WON, b.amount, (b.amount - b.excess) * pays[spot]))
        elif zero and spot in SIMPLE_NAMES:
            if last or b.player in partage_players:
                append((b, PARTAGE, partage_return(b), 0))
            else:
                append((b, PRISON, 0, 0))
        else:
            append((b, LOST, b.excess, 0))
    return out
