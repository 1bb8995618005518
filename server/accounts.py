"""Accounts: who a user is, creating accounts (a player's with his wallet), a wallet's
balance and history, and the floor's first admin."""

from __future__ import annotations

import os
import secrets

import asyncpg

from games.errors import GameError
from games.ledger import Balance, StatementLine, accounts
from games.ledger.accounts import Kind
from games.ledger.store import Ledger
from games.money import currency as currency_of
from server import store
from server.auth import Principal
from server.policy import check_may_create
from server.responsible import check_not_excluded
from server.store import accounts as account_rows
from server.store import audit


async def find_user(pool: asyncpg.Pool, user_id: str) -> Principal:
    async with pool.acquire() as conn:
        who = await store.get_user(conn, user_id)
    if who is None:
        raise GameError("unknown_user", f"There is no user {user_id!r}.")
    return who


class AccountService:
    def __init__(self, pool: asyncpg.Pool, ledger: Ledger) -> None:
        self.pool = pool
        self.ledger = ledger

    async def user(self, user_id: str) -> Principal:
        return await find_user(self.pool, user_id)

    async def player(self, user_id: str) -> Principal:
        """A player's account: only players hold wallets (staff do not play, nor get credit)."""
        who = await self.user(user_id)
        if who.role != "player":
            raise GameError("not_a_player", f"{who.id} is a {who.role}: only players have a wallet.")
        return who

    async def authenticate(self, user: str, password: str, address: str) -> Principal:
        """A login from ``address``, throttled (``store.authenticate``)."""
        who = await store.authenticate(self.pool, user, password, address)
        # Only with the right password: an exclusion says nothing to a stranger.
        await check_not_excluded(self.pool, who.id)
        return who

    async def register(self, user: str, password: str, currency: str) -> Principal:
        """A player opens his own account."""
        currency_of(currency)
        new = await store.new_user(user, password)  # (hashed holding no connection)
        async with self.pool.acquire() as conn:
            async with conn.transaction():  # the user with the wallet, or neither (e.g. PTS: no wallet)
                # Unverified until the desk checks his age and identity (server.responsible).
                who = await store.create_user(conn, new, "player", currency, verified=False)
                await self._open_wallet(conn, who)
        return who

    async def create(self, by: Principal, user: str, password: str, role: str, currency: str) -> Principal:
        """An account of any role, created by staff."""
        check_may_create(by, role)
        currency_of(currency)
        new = await store.new_user(user, password)  # (hashed holding no connection)
        async with self.pool.acquire() as conn:
            async with conn.transaction():  # the user, his wallet and the audit record, or nothing
                who = await store.create_user(conn, new, role, currency)
                if who.role == "player":
                    await self._open_wallet(conn, who)
                await audit.record(conn, by, "account.create", who.id, {"role": who.role})
        return who

    async def _open_wallet(self, conn: asyncpg.Connection, who: Principal) -> None:
        await self.ledger.open_account(accounts.wallet(who.id, who.currency), who.currency, Kind.WALLET, conn=conn)

    async def all(self) -> list[Principal]:
        async with self.pool.acquire() as conn:
            return await store.list_users(conn)

    async def own_balance(self, who: Principal) -> Balance | None:
        """The caller's wallet balance; staff have none."""
        if who.role != "player":
            return None
        return await self.ledger.balance(accounts.wallet(who.id, who.currency))

    async def balance(self, user_id: str) -> Balance:
        who = await self.user(user_id)
        return await self.ledger.balance(accounts.wallet(who.id, who.currency))

    async def statement(self, user_id: str, limit: int) -> list[StatementLine]:
        who = await self.user(user_id)
        return await self.ledger.statement(accounts.wallet(who.id, who.currency), limit=limit)


async def ensure_admin(pool: asyncpg.Pool) -> None:
    """A fresh database gets one admin: password from CASINO_ADMIN_PASSWORD, else printed once."""
    async with pool.acquire() as conn:
        if await account_rows.has_admin(conn):
            return
        password = os.environ.get("CASINO_ADMIN_PASSWORD") or secrets.token_urlsafe(12)
        try:
            await store.create_user(conn, await store.new_user("admin", password), "admin")  # (at start: no tables yet)
        except GameError:
            return  # another process created it meanwhile
    if not os.environ.get("CASINO_ADMIN_PASSWORD"):
        print(f"casino: created the admin account: user 'admin', password {password!r}", flush=True)
