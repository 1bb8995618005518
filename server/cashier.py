"""The cashier and credit: chips bought and cashed out, credit lines granted (Art. 16).

Each moves money only together with its audit record, in one transaction. The id is the
idempotency key: a retry with the same id gets its receipt or grant again and writes nothing.
"""

from __future__ import annotations

import secrets
from typing import Literal

import asyncpg

from games.ledger import CreditGrant, Receipt, accounts
from games.ledger.accounts import Kind
from games.ledger.store import Ledger
from server.accounts import AccountService
from server.auth import Principal
from server.responsible import check_deposit
from server.store import accounts as account_rows
from server.store import audit


class Cashier:
    def __init__(self, pool: asyncpg.Pool, ledger: Ledger) -> None:
        self.pool = pool
        self.ledger = ledger
        self.accounts = AccountService(pool, ledger)

    async def deposit(self, by: Principal, user: str, amount: int, op_id: str = "", currency: str = "") -> Receipt:
        return await self._move(by, "deposit", user, amount, op_id, currency)

    async def cash_out(self, by: Principal, user: str, amount: int, op_id: str = "", currency: str = "") -> Receipt:
        return await self._move(by, "cash_out", user, amount, op_id, currency)

    async def _move(self, by: Principal, what: Literal["deposit", "cash_out"], user: str, amount: int,
                    op_id: str, currency: str) -> Receipt:
        who = await self.accounts.player(user)
        cur = currency or who.currency
        op_id = op_id or f"{what}-{secrets.token_hex(8)}"
        if what == "deposit":  # a wallet in another currency opens with its first chips
            await self.ledger.open_account(accounts.wallet(who.id, cur), cur, Kind.WALLET)
        move = self.ledger.deposit if what == "deposit" else self.ledger.cash_out
        async with self.pool.acquire() as conn:
            async with conn.transaction():  # the chips move only with their audit record
                first = await account_rows.first_receipt(conn, op_id)
                if first and what == "deposit":  # verified, not excluded, within his deposit limits
                    await check_deposit(conn, who.id, cur, amount)
                receipt = await move(who.id, cur, amount, op_id, conn=conn)
                if first:  # a replay gets its receipt again and writes nothing
                    await audit.record(conn, by, f"cashier.{what}", who.id,
                                       {"amount": amount, "currency": cur, "id": op_id})
        return receipt

    async def grant_credit(self, by: Principal, user: str, limit: int, op_id: str = "",
                           currency: str = "") -> CreditGrant:
        who = await self.accounts.player(user)
        cur = currency or who.currency
        op_id = op_id or f"credit-{secrets.token_hex(8)}"
        async with self.pool.acquire() as conn:
            async with conn.transaction():  # the credit line only with its audit record
                first = await account_rows.first_credit_grant(conn, op_id)
                grant = await self.ledger.grant_credit(accounts.wallet(who.id, cur), limit, by.id, op_id, conn=conn)
                if first:  # a replay gets its grant again and writes nothing
                    await audit.record(conn, by, "credit.grant", who.id,
                                       {"limit": limit, "currency": cur, "id": op_id})
        return grant
