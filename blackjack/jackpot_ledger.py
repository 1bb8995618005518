"""The Blazing 7s pool's events as ledger transfers, for the server (the engine itself
never imports the ledger, whose package brings in the PostgreSQL driver).

* ``JackpotContributed``: ``bank(table)`` -> ``jackpot(NAME-LEVEL)``
* ``JackpotPaid``: ``jackpot(NAME-LEVEL)`` -> the player's chips (``accounts.chips_of``: his
  wallet, or a floor player's table floor account)
* ``JackpotSeeded``: ``bank(table)`` -> ``jackpot(NAME-LEVEL)`` (open, reset, reset amount)

So each jackpot account's balance is always the pool's meter.
"""

from __future__ import annotations

from typing import Any

from blackjack.jackpot import JackpotContributed, JackpotPaid, JackpotSeeded
from games.ledger import accounts
from games.ledger.model import Transfer


def transfers(events: list[Any], currency: str) -> list[Transfer]:
    """The ledger transfers for a pool's events. Op ids derive from the pool, the round
    and the wager, so forwarding the same events twice moves nothing twice."""
    out = []
    for e in events:
        if isinstance(e, (JackpotContributed, JackpotSeeded)):
            kind = "contribution" if isinstance(e, JackpotContributed) else "seed"
            why = "" if isinstance(e, JackpotContributed) else f"/{e.why}"
            jp = accounts.jackpot(f"{e.jackpot}-{e.level}", currency)
            out.append(Transfer(f"{e.jackpot}/{e.level}/{kind}{why}/{e.table}/{e.round}", accounts.bank(e.table, currency),
                            jp, e.amount, f"jackpot_{kind}"))
        elif isinstance(e, JackpotPaid):
            jp = accounts.jackpot(f"{e.jackpot}-{e.level}", currency)
            out.append(Transfer(f"{e.jackpot}/{e.level}/paid/{e.table}/{e.wager}", jp,
                                accounts.chips_of(e.player, e.table, currency),
                            e.amount, "jackpot_win", ref=e.wager))
    return out
