"""Wager events -> ledger operations: the one place where a game's money meets the ledger.

* WagerPlaced  -> a hold on the player's wallet for the table's bank
* WagerSettled -> post what the bank keeps (stake - returned), or void the hold when the
                  whole stake comes back; then transfer ``won`` from the bank
* WagerVoided  -> void the hold (the whole stake comes back)
* WagerRefunded -> transfer back from the bank what a settled wager had lost (its round
                  was annulled: Titano Art. 7)

Op ids derive from the table and the wager id, so replaying a command after a crash can
never move money twice (the ledger answers a repeated id with the original result).

Whose chips: an online player's are his wallet's; a floor player's (``games.players``: a
person at a live felt with cash chips, entered by the croupier) are the table's floor
account's. No staff command can reach a wallet: the engines refuse staff entries for
anyone but floor players.
"""

from __future__ import annotations

from typing import Any, Iterable

from games.ledger import accounts
from games.ledger.model import Hold, Post, Transfer, Void
from games.wagers import WagerPlaced, WagerRefunded, WagerSettled, WagerVoided


def ops_for(table_id: str, currency: str, events: Iterable[Any]) -> list[Any]:
    bank = accounts.bank(table_id, currency)

    def owner(player: str) -> str:
        return accounts.chips_of(player, table_id, currency)

    out: list[Any] = []
    for ev in events:
        # The hold's ref names the wager ("<table>/<wager>"): the ledger check matches pending
        # holds against the wagers the tables still have in play (open_refs). A post or void
        # takes the hold's ref.
        ref = f"{table_id}/{ev.wager}"[:200] if isinstance(ev, (WagerPlaced, WagerSettled, WagerVoided, WagerRefunded)) else ""
        if isinstance(ev, WagerPlaced):
            if ev.amount > 0:  # 0: the house's free chip (Free Bet), nothing of the player's is held
                out.append(Hold(f"{table_id}/{ev.wager}/hold", owner(ev.player), bank,
                                ev.amount, "bet", ref=ref))
        elif isinstance(ev, WagerSettled):
            hold = f"{table_id}/{ev.wager}/hold"
            kept = ev.stake - ev.returned
            if ev.stake == 0:
                pass  # a free chip: only its win moves
            elif kept > 0:
                out.append(Post(f"{table_id}/{ev.wager}/post", hold, kept, "lost"))
            else:
                out.append(Void(f"{table_id}/{ev.wager}/void", hold, "returned"))
            if ev.won > 0:
                out.append(Transfer(f"{table_id}/{ev.wager}/win", bank, owner(ev.player),
                                    ev.won, "win", ref=ref))
        elif isinstance(ev, WagerVoided):
            if ev.amount > 0:
                out.append(Void(f"{table_id}/{ev.wager}/void", f"{table_id}/{ev.wager}/hold", "voided"))
        elif isinstance(ev, WagerRefunded):
            if ev.amount > 0:
                out.append(Transfer(f"{table_id}/{ev.wager}/refund", bank, owner(ev.player), ev.amount,
                                    "refund", ref=ref))
        elif getattr(ev, "player", None) and type(ev).__name__ == "UnclaimedRecorded":
            # Art. 19: chips left by an absent player go to the table's unclaimed register.
            out.append(Transfer(f"{table_id}/unclaimed/{ev.spin}/{ev.player}/{ev.kind}",
                                owner(ev.player), accounts.unclaimed(table_id, currency),
                                ev.amount, "unclaimed", ref=",".join(ev.wagers)[:200]))
    return out


def open_refs(table_id: str, wagers: Iterable[str]) -> list[str]:
    """The refs of the holds a table may have pending: one per wager still in play."""
    return [f"{table_id}/{w}"[:200] for w in wagers]


def players_of(events: Iterable[Any]) -> set[str]:
    return {ev.player for ev in events if isinstance(ev, WagerPlaced)}
