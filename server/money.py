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

Stacks (``games.wagers``: a tournament's points at a phase's start and end):

* StackIssued  -> from the house's side to the player
* StackReturned -> from the player back to the house's side

Tournaments (``blackjack.tournament.events``; ``tournament_ops``):

* EntryPaid -> the buy-in to the prize pool and the fee to the house's fees, from the
  player's wallet (he registered himself) or the cashier's desk (cash, a bank transfer)
* BuyInRefunded, FeeRefunded -> back to the player's wallet
* PrizePaid -> from the prize pool to the winner's wallet (Art. 26)

Op ids derive from the table and the wager id, so replaying a command after a crash can
never move money twice (the ledger answers a repeated id with the original result).

Whose chips (``TableAccounts``, chosen per table by ``accounts_for``): at a cash table an
online player's are his wallet's, a floor player's (``games.players``: a person at a live
felt with cash chips, entered by the croupier) the table's floor account's, and the house
is the table's bank; at a tournament table (currency PTS) a player's points are his
points account in that tournament and the house is the tournament's points pool. No staff
command can reach a wallet: the engines refuse staff entries for anyone but floor players.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from blackjack.jackpot_pool import JackpotContributed, JackpotPaid, JackpotSeeded
from blackjack.tournament import events as T
from games.errors import GameError
from games.ledger import accounts
from games.ledger.accounts import POINTS_CURRENCY, Kind
from games.ledger.model import MAX_REF, Hold, Op, Post, Transfer, Void
from games.wagers import (
    ChipsUnclaimed,
    StackIssued,
    StackReturned,
    WagerPlaced,
    WagerRefunded,
    WagerSettled,
    WagerVoided,
)

_WAGER_EVENTS = (WagerPlaced, WagerSettled, WagerVoided, WagerRefunded)


@dataclass(frozen=True)
class TableAccounts:
    """One table's accounts: whose chips a player's are, the house's side, the register of
    unclaimed chips, and what the table opens when it is created or started."""

    table: str
    currency: str
    tournament: str = ""  # a tournament table: its points accounts

    def of(self, player: str) -> str:
        if self.tournament:
            return accounts.points(self.tournament, player)
        return accounts.chips_of(player, self.table, self.currency)

    @property
    def house(self) -> str:
        return accounts.points_pool(self.tournament) if self.tournament else accounts.bank(self.table, self.currency)

    @property
    def unclaimed(self) -> str:
        if self.tournament:  # points are never left behind: a player's stack goes back at the phase's end
            raise GameError("points_not_transferable", "Tournament points have no unclaimed register.")
        return accounts.unclaimed(self.table, self.currency)

    def to_open(self) -> list[tuple[str, Kind]]:
        if self.tournament:
            return [(accounts.points_pool(self.tournament), Kind.POINTS_POOL)]
        return [(accounts.bank(self.table, self.currency), Kind.BANK),
                (accounts.unclaimed(self.table, self.currency), Kind.UNCLAIMED),
                (accounts.floor(self.table, self.currency), Kind.FLOOR)]

    def opened_by(self, events: Iterable[Any]) -> list[tuple[str, Kind]]:
        """The accounts a batch's events need that may not exist yet: a tournament player's
        points account opens with his first stack."""
        if not self.tournament:
            return []
        return [(self.of(ev.player), Kind.POINTS) for ev in events if isinstance(ev, StackIssued)]


def accounts_for(table_id: str, currency: str, settings: dict[str, Any]) -> TableAccounts:
    """The table's accounts: a tournament's points, or the cash of its currency. The one
    place that says a table plays in points exactly when it is a tournament's."""
    if "tournament" in settings and currency != POINTS_CURRENCY:
        raise GameError("invalid_settings", "A tournament's table plays in its points (PTS).")
    if currency == POINTS_CURRENCY:
        tournament = settings.get("tournament")
        if not isinstance(tournament, str) or not tournament:
            raise GameError("points_not_transferable", "Points (PTS) are not chips: only a tournament's own "
                                                       "tables play in them.")
        return TableAccounts(table_id, currency, tournament)
    return TableAccounts(table_id, currency)


def ops_for(table: TableAccounts, events: Iterable[Any]) -> list[Op]:
    table_id, bank, owner = table.table, table.house, table.of
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
                                owner(ev.player), table.unclaimed,
                                ev.amount, "unclaimed", ref=",".join(ev.wagers)[:MAX_REF]))
        elif isinstance(ev, StackIssued):
            out.append(Transfer(f"{table_id}/stack/{ev.key}/{ev.player}/issued", bank, owner(ev.player),
                                ev.amount, "stack_issued"))
        elif isinstance(ev, StackReturned) and ev.amount > 0:
            out.append(Transfer(f"{table_id}/stack/{ev.key}/{ev.player}/returned", owner(ev.player), bank,
                                ev.amount, "stack_returned"))
    return out


def tournament_ops(tournament: str, currency: str, events: Iterable[Any]) -> list[Op]:
    """The ledger transfers for a tournament coordinator's money events. Each player enters
    once, so ids by tournament, player and purpose never repeat (and a replay moves nothing twice)."""
    pool, fees = accounts.prize_pool(tournament, currency), accounts.fees(currency)

    def wallet(player: str) -> str:
        return accounts.wallet(player, currency)

    out: list[Op] = []
    for ev in events:
        if isinstance(ev, T.EntryPaid):
            payer = wallet(ev.player) if ev.source == "wallet" else accounts.cashier(currency)
            ref = f"{ev.source}:{ev.reference}"[:MAX_REF] if ev.reference else ev.source
            out.append(Transfer(f"{tournament}/entry/{ev.player}/buy-in", payer, pool, ev.buy_in,
                                "tournament_buy_in", ref=ref))
            out.append(Transfer(f"{tournament}/entry/{ev.player}/fee", payer, fees, ev.fee, "tournament_fee", ref=ref))
        elif isinstance(ev, T.BuyInRefunded):
            out.append(Transfer(f"{tournament}/refund/{ev.player}/buy-in", pool, wallet(ev.player), ev.amount,
                                "tournament_refund", ref=ev.reason[:MAX_REF]))
        elif isinstance(ev, T.FeeRefunded):
            out.append(Transfer(f"{tournament}/refund/{ev.player}/fee", fees, wallet(ev.player), ev.amount,
                                "tournament_refund"))
        elif isinstance(ev, T.PoolForfeited):
            out.append(Transfer(f"{tournament}/forfeited", pool, fees, ev.amount, "tournament_forfeit",
                                ref=ev.reason[:MAX_REF]))
        elif isinstance(ev, T.PrizePaid):
            out.append(Transfer(f"{tournament}/prize/{ev.place}", pool, wallet(ev.player), ev.amount,
                                "tournament_prize", ref=ev.player))
    return out


def tournament_wallets(currency: str, events: Iterable[Any]) -> list[tuple[str, Kind]]:
    """Wallets a tournament's events pay into (a player who paid at the desk may have none yet)."""
    paid = (T.BuyInRefunded, T.FeeRefunded, T.PrizePaid)
    return [(accounts.wallet(ev.player, currency), Kind.WALLET) for ev in events if isinstance(ev, paid)]


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
