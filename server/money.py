"""Where the games' money meets the ledger: the one module that turns money events into
ledger operations (the engines never import the ledger).

Wagers (``games.wagers``, both games):

* WagerPlaced  -> a hold on the player's wallet for the table's bank
* WagerSettled -> post what the bank keeps (stake - returned), or void the hold when the
                  whole stake comes back; then transfer ``won`` from the bank
* WagerVoided  -> void the hold (the whole stake comes back)
* WagerRefunded -> transfer back from the bank what a settled wager had lost (its round
                  was annulled: Titano Art. 7)
* ChipsUnclaimed -> transfer the chips to the table's unclaimed register (Art. 19)

Jackpots (``blackjack.jackpot``, the Blazing 7s pool; ``jackpot_transfers``):

* JackpotContributed, JackpotSeeded -> bank(table) to jackpot(NAME-LEVEL)
* JackpotPaid -> jackpot(NAME-LEVEL) to the winner's chips
  (so each jackpot account's balance is always the pool's meter)

Op ids derive from the table and the wager id, so replaying a command after a crash can
never move money twice (the ledger answers a repeated id with the original result).

Whose chips: an online player's are his wallet's; a floor player's (``games.players``: a
person at a live felt with cash chips, entered by the croupier) are the table's floor
account's. No staff command can reach a wallet: the engines refuse staff entries for
anyone but floor players.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from blackjack.jackpot_pool import JackpotContributed, JackpotPaid, JackpotSeeded
from games.ledger import accounts
from games.ledger.model import MAX_REF, Hold, Op, Post, Transfer, Void
from games.wagers import ChipsUnclaimed, WagerPlaced, WagerRefunded, WagerSettled, WagerVoided

_WAGER_EVENTS = (WagerPlaced, WagerSettled, WagerVoided, WagerRefunded)


def ops_for(table_id: str, currency: str, events: Iterable[Any]) -> list[Op]:
    bank = accounts.bank(table_id, currency)

    def owner(player: str) -> str:
        return accounts.chips_of(player, table_id, currency)

    out: list[Op] = []
    for ev in events:
        # The hold's ref names the wager ("<table>/<wager>"): the ledger check matches pending
        # holds against the wagers the tables still have in play (open_refs). A post or void
        # takes the hold's ref.
        # Table and wager ids are bounded names, so the ref always fits MAX_REF.
        ref = f"{table_id}/{ev.wager}" if isinstance(ev, _WAGER_EVENTS) else ""
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
        elif isinstance(ev, ChipsUnclaimed):
            # Art. 19: chips left by an absent player go to the table's unclaimed register.
            # The ref lists the abandoned wagers as far as it holds them (the events keep all).
            out.append(Transfer(f"{table_id}/unclaimed/{ev.round}/{ev.player}/{ev.left}",
                                owner(ev.player), accounts.unclaimed(table_id, currency),
                                ev.amount, "unclaimed", ref=",".join(ev.wagers)[:MAX_REF]))
    return out


def open_refs(table_id: str, wagers: Iterable[str]) -> list[str]:
    """The refs of the holds a table may have pending: one per wager still in play."""
    return [f"{table_id}/{w}" for w in wagers]


def jackpot_transfers(events: Iterable[Any], currency: str) -> list[Transfer]:
    """The ledger transfers for a jackpot pool's events. Op ids derive from the pool, the
    round and the wager, so forwarding the same events twice moves nothing twice."""
    out = []
    for e in events:
        if isinstance(e, (JackpotContributed, JackpotSeeded)):
            kind = "contribution" if isinstance(e, JackpotContributed) else "seed"
            why = "" if isinstance(e, JackpotContributed) else f"/{e.why}"
            out.append(Transfer(f"{e.jackpot}/{e.level}/{kind}{why}/{e.table}/{e.round}",
                                accounts.bank(e.table, currency),
                                accounts.jackpot(f"{e.jackpot}-{e.level}", currency), e.amount,
                                f"jackpot_{kind}"))
        elif isinstance(e, JackpotPaid):
            out.append(Transfer(f"{e.jackpot}/{e.level}/paid/{e.table}/{e.wager}",
                                accounts.jackpot(f"{e.jackpot}-{e.level}", currency),
                                accounts.chips_of(e.player, e.table, currency), e.amount,
                                "jackpot_win", ref=e.wager))
    return out
