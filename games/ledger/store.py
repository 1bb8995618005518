"""The ledger on PostgreSQL (asyncpg).

One ``apply`` is one statement, so one round trip, however many operations it carries:
``ledger_apply()`` (migration 0003) locks the accounts the batch touches (``FOR UPDATE``
in id order, so two batches never deadlock), then reads the ids and holds it names (after
the lock: whoever settled the same hold or used the same id on these accounts has
committed), checks every operation in order with the rules of ``model``, and inserts the
rows; a trigger moves the accounts' totals from the inserted rows, so the database's
non-negative CHECK guards every transfer. A refusal writes nothing and leaves the caller's
transaction usable. Two batches racing on one new id with different content meet the
unique index: the loser is rolled back inside the function and asked again (``retry``),
then answers ``id_conflict``.
"""

from __future__ import annotations

import asyncio
import functools
import json
import random
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable, Mapping
from contextlib import asynccontextmanager
from typing import Any, TypeVar

import asyncpg

from games.errors import GameError
from games.ledger import accounts
from games.ledger.check import CheckReport, OpenRefs, check_report, snapshot
from games.ledger.model import (
    Account,
    Balance,
    CreditGrant,
    Hold,
    LedgerError,
    Op,
    OpResult,
    Post,
    Problem,
    Receipt,
    StatementLine,
    Transfer,
    account_info,
    check_pair,
    hold_not_pending,
    id_conflict,
    insufficient_funds,
    post_exceeds_hold,
    replay_grant,
    unknown_account,
    unknown_hold,
    validate,
    validate_grant,
)
from games.money import CURRENCIES

MAX_ATTEMPTS = 12

_TRANSFER_COLS = "id, op, debit, credit, currency, amount, hold, hold_amount, code, ref"

_APPLY = "SELECT * FROM ledger_apply($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)"


_ApplyArgs = tuple[
    list[str], list[str], list[str | None], list[str | None], list[int | None], list[str], list[str],
    list[str | None], list[int | None], list[int | None], list[bool], list[str | None],
]


def _apply_args(ops: list[Op]) -> _ApplyArgs:
    """The arrays ``ledger_apply`` takes, with what follows from the batch alone: where an
    id or a hold repeats an earlier operation, and the pairing refusals the account ids
    already decide (same currency; points only between a player and their tournament)."""
    kind: list[str] = []
    ids: list[str] = []
    debit: list[str | None] = []
    credit: list[str | None] = []
    amount: list[int | None] = []
    code: list[str] = []
    ref: list[str] = []
    hold: list[str | None] = []
    dup: list[int | None] = []
    hold_idx: list[int | None] = []
    settled_before: list[bool] = []
    pair_err: list[str | None] = []
    first: dict[str, int] = {}
    settling: set[str] = set()
    for i, op in enumerate(ops, 1):
        ids.append(op.id)
        code.append(op.code)
        ref.append(op.ref)
        dup.append(first.get(op.id))
        if isinstance(op, (Transfer, Hold)):
            kind.append("transfer" if isinstance(op, Transfer) else "hold")
            debit.append(op.debit)
            credit.append(op.credit)
            amount.append(op.amount)
            hold.append(None)
            hold_idx.append(None)
            settled_before.append(False)
            pair_err.append(_pair_error(op))
        else:
            kind.append("post" if isinstance(op, Post) else "void")
            debit.append(None)
            credit.append(None)
            amount.append(op.amount if isinstance(op, Post) else None)
            hold.append(op.hold)
            hold_idx.append(first.get(op.hold))
            settled_before.append(op.hold in settling)
            settling.add(op.hold)
            pair_err.append(None)
        first.setdefault(op.id, i)
    return kind, ids, debit, credit, amount, code, ref, hold, dup, hold_idx, settled_before, pair_err


def _pair_error(op: Transfer | Hold) -> str | None:
    return _pair_code(op.debit, op.credit)


@functools.lru_cache(maxsize=8192)
def _pair_code(debit: str, credit: str) -> str | None:
    """Pure (an account's kind and currency are in its id), so cached: bets repeat pairs."""
    try:
        d, c = account_info(debit), account_info(credit)
    except GameError:
        return None  # a malformed id names no account: the database answers unknown_account
    try:
        check_pair("", d, c)
    except LedgerError as e:
        return e.code
    return None


# ``ledger_apply_or_raise`` (migration 0005): the batch inside a statement of the caller's own
# (a table's whole commit, ``server.store.state``), its refusal raised with this SQLSTATE.
REFUSED = "LR001"


def apply_args(ops: Iterable[Op]) -> tuple[list[Op], _ApplyArgs]:
    """The batch, each operation's form checked, and the twelve arrays that
    ``ledger_apply_or_raise`` takes, in order."""
    batch = list(ops)
    for op in batch:
        validate(op)
    return batch, _apply_args(batch)


def raised_refusal(ops: list[Op], exc: BaseException) -> LedgerError | None:
    """The LedgerError ``ledger_apply_or_raise`` raised for ``ops`` (the same one
    ``Ledger.apply`` gives), None when ``exc`` is something else."""
    if not isinstance(exc, asyncpg.PostgresError) or exc.sqlstate != REFUSED:
        return None
    row = json.loads(exc.detail or "{}")
    if row.get("err") == "ledger_busy":
        return _busy()
    return _refusal(ops, row)


def _busy() -> LedgerError:
    """A race lost MAX_ATTEMPTS times in a row (here or inside ``ledger_apply_or_raise``)."""
    return LedgerError("ledger_busy", "The ledger is busy; nothing was written. Try again.")


def _refusal(ops: list[Op], r: Mapping[str, Any]) -> LedgerError:
    op: Op = ops[r["idx"] - 1]
    code: str = r["err"]
    if code == "unknown_account":  # the missing account comes in the debit column
        return unknown_account(op.id, r["debit"])
    if code == "id_conflict":
        return id_conflict(op.id)
    if isinstance(op, (Transfer, Hold)):
        if code == "insufficient_funds":
            return insufficient_funds(op.id, op.debit, r["info"], op.amount)
        try:  # a pairing refusal: the model words it
            check_pair(op.id, account_info(op.debit), account_info(op.credit))
        except LedgerError as e:
            return e
    elif code == "unknown_hold":
        return unknown_hold(op.id, op.hold)
    elif code == "hold_not_pending":
        return hold_not_pending(op.id, op.hold)
    elif code == "post_exceeds_hold" and isinstance(op, Post) and op.amount is not None:
        return post_exceeds_hold(op.id, op.hold, op.amount, r["info"])
    raise AssertionError(f"ledger_apply answered {code!r} for {op!r}")


@asynccontextmanager
async def _using(pool: asyncpg.Pool, conn: asyncpg.Connection | None) -> AsyncIterator[asyncpg.Connection]:
    if conn is not None:
        yield conn
    else:
        async with pool.acquire() as c:
            yield c


_T = TypeVar("_T")


async def _retrying(conn: asyncpg.Connection, body: Callable[[asyncpg.Connection], Awaitable[_T]]) -> _T:
    """Run ``body(conn)`` in a transaction (a savepoint inside the caller's), again when it
    lost a race: a duplicate id or hold settlement, a deadlock, a serialization failure.
    Inside the caller's transaction a serialization failure is the caller's to retry."""
    outer = conn.is_in_transaction()
    for attempt in range(MAX_ATTEMPTS):
        try:
            async with conn.transaction():
                return await body(conn)
        except (asyncpg.UniqueViolationError, asyncpg.DeadlockDetectedError, asyncpg.SerializationError) as e:
            if attempt == MAX_ATTEMPTS - 1 or (outer and isinstance(e, asyncpg.SerializationError)):
                raise
            await asyncio.sleep(random.uniform(0, 0.002 * (attempt + 1)))
    raise AssertionError("unreachable")


class Ledger:
    def __init__(self, pool: asyncpg.Pool) -> None:
        self.pool = pool

    # ------------------------------------------------------------ accounts

    async def open_account(self, account: str, currency: str | None = None, kind: str | None = None,
                           conn: asyncpg.Connection | None = None) -> Account:
        """Create the account if it does not exist (the id fixes its kind and currency)."""
        info = account_info(account, currency, kind)
        async with _using(self.pool, conn) as c:
            await c.execute(
                "INSERT INTO ledger_accounts (id, currency, kind) VALUES ($1, $2, $3) ON CONFLICT (id) DO NOTHING",
                info.id, info.currency, info.kind,
            )
        return info

    async def balance(self, account: str, conn: asyncpg.Connection | None = None) -> Balance:
        async with _using(self.pool, conn) as c:
            r = await c.fetchrow("SELECT * FROM ledger_accounts WHERE id = $1", account)
        if r is None:
            raise LedgerError("unknown_account", f"No account {account!r}.", account=account)
        posted = r["credits_posted"] - r["debits_posted"]
        pending = r["debits_pending"]
        return Balance(account, r["currency"], posted, pending, posted - pending + r["credit_limit"], r["credit_limit"])

    # ------------------------------------------------------------ operations

    async def apply(self, ops: Iterable[Op], conn: asyncpg.Connection | None = None) -> list[OpResult]:
        """Apply ``ops`` together, in order, or none of them (the first refusal is raised).

        One statement, so one round trip: ``ledger_apply()`` (migration 0003) locks the
        accounts, checks every operation and writes them. On its own it is a transaction;
        inside the caller's it leaves that transaction usable after a refusal."""
        batch, args = apply_args(ops)
        if not batch:
            return []
        async with _using(self.pool, conn) as c:
            for attempt in range(MAX_ATTEMPTS):
                try:
                    rows = await c.fetch(_APPLY, *args)
                except (asyncpg.DeadlockDetectedError, asyncpg.SerializationError):
                    # inside the caller's transaction these are the caller's to retry
                    if attempt == MAX_ATTEMPTS - 1 or c.is_in_transaction():
                        raise
                    rows = None
                if rows is not None and rows[0]["err"] != "retry":
                    if rows[0]["err"] is not None:
                        raise _refusal(batch, rows[0])
                    return [OpResult(r["id"], r["op"], r["debit"], r["credit"], r["currency"], r["amount"],
                                     r["code"], r["ref"], r["hold"] or "", r["released"]) for r in rows]
                await asyncio.sleep(random.uniform(0, 0.002 * (attempt + 1)))
        raise _busy()

    # ------------------------------------------------------------ cashier

    async def deposit(self, user: str, cur: str, amount: int, id: str,
                      conn: asyncpg.Connection | None = None) -> Receipt:
        """The player buys chips: the cashier (issuer) pays the wallet."""
        return await self._cashier("deposit", user, cur, amount, id, conn)

    async def cash_out(self, user: str, cur: str, amount: int, id: str,
                       conn: asyncpg.Connection | None = None) -> Receipt:
        """The player cashes chips: never chips on credit nor chips still on a table."""
        return await self._cashier("cash_out", user, cur, amount, id, conn)

    async def _cashier(self, kind: str, user: str, cur: str, amount: int, id: str,
                       conn: asyncpg.Connection | None) -> Receipt:
        if CURRENCIES.get(cur) is None:
            raise LedgerError("unknown_currency", f"Unknown currency {cur!r}.")
        try:
            wallet, till = accounts.wallet(user, cur), accounts.cashier(cur)
        except GameError as e:
            raise LedgerError(e.code, e.message) from None
        if "/" in id:  # such ids name the tables' and the jackpots' own operations
            raise LedgerError("invalid_id", f"A receipt id may not hold '/': {id!r}.", op=id)
        op = (Transfer(id, till, wallet, amount, "deposit") if kind == "deposit"
              else Transfer(id, wallet, till, amount, "cash_out"))
        validate(op)

        async def body(c: asyncpg.Connection) -> Receipt:
            r = await c.fetchrow("SELECT * FROM ledger_receipts WHERE id = $1", id)
            if r is not None:
                if (r["kind"], r["account"], r["amount"]) != (kind, wallet, amount):
                    raise LedgerError("id_conflict", f"Receipt id {id!r} was already used for something else.", op=id)
                return _receipt(r)
            await self.open_account(till, conn=c)
            if kind == "deposit":
                await self.open_account(wallet, conn=c)
            else:
                rows = await c.fetch(
                    "SELECT id, credits_posted - debits_posted - debits_pending AS free FROM ledger_accounts"
                    " WHERE id = ANY($1::text[]) ORDER BY id FOR UPDATE", sorted((till, wallet)),
                )
                free = next((x["free"] for x in rows if x["id"] == wallet), None)
                if free is None:
                    raise LedgerError("unknown_account", f"No account {wallet!r}.", account=wallet)
                if amount > free:
                    raise LedgerError("insufficient_funds", "Only chips fully owned can be cashed out.",
                                      account=wallet, available=max(free, 0), amount=amount)
            await self.apply([op], conn=c)
            bal = await self.balance(wallet, conn=c)
            r = await c.fetchrow(
                "INSERT INTO ledger_receipts (id, kind, account, currency, amount, balance_after)"
                " VALUES ($1, $2, $3, $4, $5, $6) RETURNING *", id, kind, wallet, cur, amount, bal.posted,
            )
            return _receipt(r)

        async with _using(self.pool, conn) as c:
            return await _retrying(c, body)

    # ------------------------------------------------------------ credit (Art. 16)

    async def grant_credit(self, account: str, limit: int, approved_by: str, id: str,
                           conn: asyncpg.Connection | None = None) -> CreditGrant:
        """Set a wallet's credit line to ``limit`` (0 withdraws it), approved by an inspector."""
        grant = validate_grant(account, limit, approved_by, id)

        async def body(c: asyncpg.Connection) -> CreditGrant:
            r = await c.fetchrow("SELECT * FROM ledger_credit_grants WHERE id = $1", id)
            if r is not None:
                return replay_grant(grant, _grant(r))
            a = await c.fetchrow(
                "SELECT kind, debits_posted + debits_pending AS used, credits_posted FROM ledger_accounts"
                " WHERE id = $1 FOR UPDATE", account,
            )
            if a is None:
                raise LedgerError("unknown_account", f"No account {account!r}.", account=account)
            if a["kind"] != "wallet":
                raise LedgerError("credit_not_allowed", "Only a player's wallet can be given credit.", account=account)
            if a["used"] > a["credits_posted"] + limit:
                raise LedgerError("credit_in_use", "More credit is in use than the new limit.", account=account)
            await c.execute("UPDATE ledger_accounts SET credit_limit = $2 WHERE id = $1", account, limit)
            r = await c.fetchrow(
                "INSERT INTO ledger_credit_grants (id, account, credit_limit, approved_by) VALUES ($1, $2, $3, $4)"
                " RETURNING *", id, account, limit, approved_by,
            )
            return _grant(r)

        async with _using(self.pool, conn) as c:
            return await _retrying(c, body)

    # ------------------------------------------------------------ reading

    async def statement(self, account: str, limit: int = 100, before: int | None = None,
                        conn: asyncpg.Connection | None = None) -> list[StatementLine]:
        """The account's last ``limit`` lines (with ``seq`` below ``before``), oldest first,
        each with the balance and the reserved amount after it."""
        async with _using(self.pool, conn) as c:
            async with snapshot(c):
                a = await c.fetchrow("SELECT * FROM ledger_accounts WHERE id = $1", account)
                if a is None:
                    raise LedgerError("unknown_account", f"No account {account!r}.", account=account)
                rows = await c.fetch(
                    f"SELECT seq, at, {_TRANSFER_COLS} FROM ledger_transfers WHERE (debit = $1 OR credit = $1)"
                    " AND seq < $2 ORDER BY seq DESC LIMIT $3", account, 2**62 if before is None else before, limit,
                )
                posted = a["credits_posted"] - a["debits_posted"]
                pending = a["debits_pending"]
                if before is not None:  # undo what came at or after ``before``
                    later = await c.fetchrow(
                        "SELECT coalesce(sum(CASE WHEN op IN ('transfer', 'post') THEN"
                        "   CASE WHEN credit = $1 THEN amount ELSE -amount END END), 0) AS posted,"
                        " coalesce(sum(CASE WHEN debit = $1 THEN CASE op WHEN 'hold' THEN amount"
                        "   WHEN 'transfer' THEN 0 ELSE -hold_amount END END), 0) AS pending"
                        " FROM ledger_transfers WHERE (debit = $1 OR credit = $1) AND seq >= $2", account, before,
                    )
                    posted -= later["posted"]
                    pending -= later["pending"]
        lines = []
        for r in rows:
            out = r["debit"] == account
            change = 0 if r["op"] in ("hold", "void") else (-r["amount"] if out else r["amount"])
            pend = 0
            if out:
                pend = r["amount"] if r["op"] == "hold" else (0 if r["op"] == "transfer" else -r["hold_amount"])
            lines.append(StatementLine(r["seq"], r["at"], r["id"], r["op"], r["code"], r["ref"],
                                       r["credit"] if out else r["debit"], change, pend, posted, pending))
            posted -= change
            pending -= pend
        lines.reverse()
        return lines

    async def check(self, open_refs: OpenRefs | None = None,
                    conn: asyncpg.Connection | None = None) -> list[Problem]:
        return (await self.check_report(open_refs, conn)).problems

    async def check_report(self, open_refs: OpenRefs | None = None,
                           conn: asyncpg.Connection | None = None) -> CheckReport:
        """The ledger check (``games.ledger.check``), on one snapshot."""
        async with _using(self.pool, conn) as c:
            return await check_report(c, open_refs)


def _receipt(r: asyncpg.Record) -> Receipt:
    return Receipt(r["id"], r["kind"], r["account"], r["currency"], r["amount"], r["balance_after"], r["at"])


def _grant(r: asyncpg.Record) -> CreditGrant:
    return CreditGrant(r["id"], r["account"], r["credit_limit"], r["approved_by"], r["at"])

