"""The ledger's property tests' cast: each role's account, built in an example's namespace
(so one database serves every example). "ghost" is never opened; the cashiers are shared
by every example."""

from __future__ import annotations

from collections.abc import Callable

from games.ledger import accounts

ACCOUNTS: dict[str, Callable[[str], str]] = {
    "anna": lambda ns: accounts.wallet(f"{ns}anna", "CHF"),
    "bruno": lambda ns: accounts.wallet(f"{ns}bruno", "CHF"),
    "eve": lambda ns: accounts.wallet(f"{ns}eve", "EUR"),
    "bank": lambda ns: accounts.bank(f"{ns}r1", "CHF"),
    "bank_eur": lambda ns: accounts.bank(f"{ns}e1", "EUR"),
    "cashier": lambda ns: accounts.cashier("CHF"),
    "cashier_eur": lambda ns: accounts.cashier("EUR"),
    "jackpot": lambda ns: accounts.jackpot(f"{ns}b7", "CHF"),
    "pts_anna": lambda ns: accounts.points(f"{ns}cup", "anna"),
    "pts_bruno": lambda ns: accounts.points(f"{ns}cup", "bruno"),
    "pts_pool": lambda ns: accounts.points_pool(f"{ns}cup"),
    "pts_other": lambda ns: accounts.points_pool(f"{ns}other"),
    "ghost": lambda ns: accounts.wallet(f"{ns}ghost", "CHF"),
}
