"""The ledger on PostgreSQL (asyncpg).

One ``apply`` is one transaction (or a savepoint inside the caller's) of about four round
trips, however many operations it carries: read the ids and holds it names, lock the
accounts it touches (``FOR UPDATE`` in id order, so two batches never deadlock), check
every operation against the locked balances with the rules in ``model``, then insert all
transfers and update all accounts in one statement. Concurrent batches on one wallet
queue on its row lock and each sees the balance the previous one left, so a wallet
never overdraws. Two batches racing on the same new id (or on settling the same hold)
meet a unique index; the loser is retried and then answers as a replay.
"""

from __future__ import annotations

import asyncio
import random
from contextlib import asynccontextmanager, nullcontext
from typing import AsyncIterator, Callable, Iterable

import asyncpg
import msgspec

from games.errors import GameError
from games.ledger import accounts
from games.ledger.model import (
    Account,
    Balance,
    CreditGrant,
    Hold,
    LedgerError,
    OpResult,
    Post,
    Problem,
    Receipt,
    StatementLine,
    Transfer,
    Void,
    account_info,
    check_funds,
    check_pair,
    replay,
    replay_grant,
    result_of,
    validate,
    validate_grant,
)
from games.money import CURRENCIES

MAX_ATTEMPTS = 12
# Round statuses that mean "over", for the fallback when no ledger_open_refs view exists.
CLOSED_ROUND_STATUSES = ("settled", "closed", "void", "voided", "cancelled", "finished", "done")

_TRANSFER_COLS = "id, op, debit, credit, currency, amount, hold, hold_amount, code, ref"

_WRITE = """
WITH ins AS (
    INSERT INTO ledger_transfers (id, op, debit, credit, currency, amount, hold, hold_amount, code, ref)
    SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::bigint[],
                         $7::text[], $8::bigint[], $9::text[], $10::text[])
    RETURNING 1
), upd AS (
    UPDATE ledger_accounts a
       SET debits_posted = a.debits_posted + d.dp, credits_posted = a.credits_posted + d.cp,
           debits_pending = a.debits_pending + d.dpe, credits_pending = a.credits_pending + d.cpe
      FROM unnest($11::text[], $12::bigint[], $13::bigint[], $14::bigint[], $15::bigint[])
           AS d(id, dp, cp, dpe, cpe)
     WHERE a.id = d.id
    RETURNING 1
)
SELECT (SELECT count(*) FROM ins), (SELECT count(*) FROM upd)
"""


class CheckReport(msgspec.Struct, frozen=True):
    problems: list[Problem]
    accounts: int
    transfers: int
    pending_holds: int
    rounds_checked: bool  # False when no source of open rounds was found


def _result(r: asyncpg.Record) -> OpResult:
    hold = r["hold"]
    return OpResult(
        r["id"], r["op"], r["debit"], r["credit"], r["currency"], r["amount"], r["code"], r["ref"],
        hold or "", (r["hold_amount"] - r["amount"]) if hold else 0,
    )


@asynccontextmanager
async def _using(pool: asyncpg.Pool, conn: asyncpg.Connection | None) -> AsyncIterator[asyncpg.Connection]:
    if conn is not None:
        yield conn
    else:
        async with pool.acquire() as c:
            yield c


def _snapshot(conn: asyncpg.Connection):
    """Several reads that must agree: one snapshot, or the caller's transaction."""
    if conn.is_in_transaction():
        return nullcontext()
    return conn.transaction(isolation="repeatable_read", readonly=True)


async def _retrying(conn: asyncpg.Connection, body: Callable):
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

    async def apply(self, ops: Iterable, conn: asyncpg.Connection | None = None) -> list[OpResult]:
        """Apply ``ops`` together, in order, or none of them (the first refusal is raised)."""
        ops = list(ops)
        for op in ops:
            validate(op)
        if not ops:
            return []
        async with _using(self.pool, conn) as c:
            return await _retrying(c, lambda c: self._apply_once(c, ops))

    async def _apply_once(self, conn: asyncpg.Connection, ops: list) -> list[OpResult]:
        ids = {op.id for op in ops}
        holds = {op.hold for op in ops if isinstance(op, (Post, Void))}
        known: dict[str, OpResult] = {}
        settled: set[str] = set()
        for r in await conn.fetch(
            f"SELECT {_TRANSFER_COLS} FROM ledger_transfers WHERE id = ANY($1::text[]) OR hold = ANY($2::text[])",
            list(ids | holds), list(holds),
        ):
            known[r["id"]] = _result(r)
            if r["hold"]:
                settled.add(r["hold"])

        # Every account the batch may touch, locked in one fixed order.
        batch_holds = {op.id: op for op in ops if isinstance(op, Hold)}
        names: set[str] = set()
        for op in ops:
            if isinstance(op, (Transfer, Hold)):
                names.update((op.debit, op.credit))
            else:
                h = known.get(op.hold) or batch_holds.get(op.hold)
                if h is not None:
                    names.update((h.debit, h.credit))
        info: dict[str, Account] = {}
        state: dict[str, list[int]] = {}  # id -> [debits_posted, credits_posted, debits_pending, credits_pending, limit]
        for r in await conn.fetch(
            "SELECT id, currency, kind, debits_posted, credits_posted, debits_pending, credits_pending, credit_limit"
            " FROM ledger_accounts WHERE id = ANY($1::text[]) ORDER BY id FOR UPDATE",
            sorted(names),
        ):
            info[r["id"]] = Account(r["id"], r["currency"], r["kind"])
            state[r["id"]] = [r["debits_posted"], r["credits_posted"], r["debits_pending"], r["credits_pending"],
                              r["credit_limit"]]

        def account(name: str, op_id: str) -> Account:
            a = info.get(name)
            if a is None:
                raise LedgerError("unknown_account", f"No account {name!r}.", op=op_id, account=name)
            return a

        delta: dict[str, list[int]] = {}

        def move(name: str, dp: int, cp: int, dpe: int, cpe: int) -> None:
            s, d = state[name], delta.setdefault(name, [0, 0, 0, 0])
            for i, v in enumerate((dp, cp, dpe, cpe)):
                s[i] += v
                d[i] += v

        results: list[OpResult] = []
        new: list[OpResult] = []
        for op in ops:
            stored = known.get(op.id)
            if stored is not None:
                results.append(replay(op, stored, known.get(stored.hold) if stored.hold else None))
                continue
            if isinstance(op, (Transfer, Hold)):
                d, c = account(op.debit, op.id), account(op.credit, op.id)
                check_pair(op.id, d, c)
                s = state[d.id]
                check_funds(op.id, d, s[0] + s[2], s[1], s[4], op.amount)
                res = result_of(op, d.currency)
                if isinstance(op, Transfer):
                    move(d.id, res.amount, 0, 0, 0)
                    move(c.id, 0, res.amount, 0, 0)
                else:
                    move(d.id, 0, 0, res.amount, 0)
                    move(c.id, 0, 0, 0, res.amount)
            else:
                h = known.get(op.hold)
                if h is None or h.op != "hold":
                    raise LedgerError("unknown_hold", f"Hold {op.hold!r} does not exist.", op=op.id, hold=op.hold)
                if h.id in settled:
                    raise LedgerError("hold_not_pending", f"Hold {h.id!r} was already settled.", op=op.id, hold=h.id)
                if isinstance(op, Post) and op.amount is not None and op.amount > h.amount:
                    raise LedgerError("post_exceeds_hold", f"Cannot post {op.amount} of a hold of {h.amount}.",
                                      op=op.id, hold=h.id)
                res = result_of(op, h.currency, h)
                settled.add(h.id)
                move(h.debit, res.amount, 0, -h.amount, 0)
                move(h.credit, 0, res.amount, 0, -h.amount)
            known[op.id] = res
            results.append(res)
            new.append(res)

        if new:
            touched = sorted(delta)
            await conn.fetchrow(
                _WRITE,
                [r.id for r in new], [r.op for r in new], [r.debit for r in new], [r.credit for r in new],
                [r.currency for r in new], [r.amount for r in new], [r.hold or None for r in new],
                [(r.amount + r.released) if r.hold else None for r in new], [r.code for r in new],
                [r.ref for r in new],
                touched, [delta[a][0] for a in touched], [delta[a][1] for a in touched],
                [delta[a][2] for a in touched], [delta[a][3] for a in touched],
            )
        return results

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
            async with _snapshot(c):
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

    async def check(self, open_refs: Callable[[], Iterable[str]] | Iterable[str] | None = None,
                    conn: asyncpg.Connection | None = None) -> list[Problem]:
        return (await self.check_report(open_refs, conn)).problems

    async def check_report(self, open_refs: Callable[[], Iterable[str]] | Iterable[str] | None = None,
                           conn: asyncpg.Connection | None = None) -> CheckReport:
        """Every currency sums to zero; every balance is the sum of its transfers; nothing
        is overdrawn; every pending hold's ``ref`` is an open round. Open rounds come from
        ``open_refs`` if given, else the view ``ledger_open_refs(ref)`` if the server
        created one, else table ``rounds`` (``id`` whose ``status`` is not one of
        ``CLOSED_ROUND_STATUSES``); with none of these the hold check is skipped."""
        problems: list[Problem] = []
        async with _using(self.pool, conn) as c:
            async with _snapshot(c):
                for r in await c.fetch(
                    "SELECT currency, sum(credits_posted - debits_posted) AS posted,"
                    " sum(credits_pending - debits_pending) AS pending FROM ledger_accounts"
                    " GROUP BY currency HAVING sum(credits_posted - debits_posted) <> 0"
                    " OR sum(credits_pending - debits_pending) <> 0 ORDER BY currency"
                ):
                    problems.append(Problem("currency_not_zero", r["currency"],
                                            f"posted sums to {r['posted']}, pending to {r['pending']}"))
                for r in await c.fetch(_RECOMPUTE):
                    problems.append(Problem(
                        "balance_mismatch", r["id"],
                        "stored debits/credits posted {}/{} pending {}/{}; transfers say {}/{} pending {}/{}".format(
                            *(r[k] for k in ("a_dp", "a_cp", "a_dpe", "a_cpe", "dp", "cp", "dpe", "cpe"))),
                    ))
                for r in await c.fetch(
                    "SELECT id FROM ledger_accounts WHERE kind NOT IN ('cashier', 'bank', 'jackpot', 'points_pool')"
                    " AND debits_posted + debits_pending > credits_posted + credit_limit ORDER BY id"
                ):
                    problems.append(Problem("overdrawn", r["id"], "debits exceed credits and credit line"))
                pending = await c.fetch(
                    "SELECT h.id, h.debit, h.ref FROM ledger_transfers h WHERE h.op = 'hold'"
                    " AND NOT EXISTS (SELECT 1 FROM ledger_transfers s WHERE s.hold = h.id) ORDER BY h.seq"
                )
                refs = await _open_refs(c, open_refs)
                if refs is not None:
                    for r in pending:
                        if r["ref"] not in refs:
                            problems.append(Problem("hold_round_closed", r["id"],
                                                    f"pending on {r['debit']}, round {r['ref']!r} is not open"))
                n_accounts = await c.fetchval("SELECT count(*) FROM ledger_accounts")
                n_transfers = await c.fetchval("SELECT count(*) FROM ledger_transfers")
        return CheckReport(problems, n_accounts, n_transfers, len(pending), refs is not None)


async def _open_refs(c: asyncpg.Connection, given) -> set[str] | None:
    if given is not None:
        return set(given() if callable(given) else given)
    if await c.fetchval("SELECT to_regclass('ledger_open_refs') IS NOT NULL"):
        return {r[0] for r in await c.fetch("SELECT ref FROM ledger_open_refs")}
    has_rounds = await c.fetchval(
        "SELECT count(*) = 2 FROM information_schema.columns WHERE table_schema = current_schema()"
        " AND table_name = 'rounds' AND column_name IN ('id', 'status')"
    )
    if has_rounds:
        rows = await c.fetch("SELECT id::text FROM rounds WHERE status <> ALL($1::text[])",
                             list(CLOSED_ROUND_STATUSES))
        return {r[0] for r in rows}
    return None


_RECOMPUTE = """
WITH eff AS (
    SELECT debit AS account,
           CASE WHEN op IN ('transfer', 'post') THEN amount ELSE 0 END AS dp, 0::bigint AS cp,
           CASE op WHEN 'hold' THEN amount WHEN 'transfer' THEN 0 ELSE -hold_amount END AS dpe, 0::bigint AS cpe
      FROM ledger_transfers
    UNION ALL
    SELECT credit, 0, CASE WHEN op IN ('transfer', 'post') THEN amount ELSE 0 END,
           0, CASE op WHEN 'hold' THEN amount WHEN 'transfer' THEN 0 ELSE -hold_amount END
      FROM ledger_transfers
), sums AS (
    SELECT account, sum(dp) AS dp, sum(cp) AS cp, sum(dpe) AS dpe, sum(cpe) AS cpe FROM eff GROUP BY account
)
SELECT coalesce(a.id, s.account) AS id,
       a.debits_posted AS a_dp, a.credits_posted AS a_cp, a.debits_pending AS a_dpe, a.credits_pending AS a_cpe,
       coalesce(s.dp, 0) AS dp, coalesce(s.cp, 0) AS cp, coalesce(s.dpe, 0) AS dpe, coalesce(s.cpe, 0) AS cpe
  FROM ledger_accounts a FULL JOIN sums s ON s.account = a.id
 WHERE a.id IS NULL
    OR a.debits_posted <> coalesce(s.dp, 0) OR a.credits_posted <> coalesce(s.cp, 0)
    OR a.debits_pending <> coalesce(s.dpe, 0) OR a.credits_pending <> coalesce(s.cpe, 0)
 ORDER BY 1
"""


def _receipt(r: asyncpg.Record) -> Receipt:
    return Receipt(r["id"], r["kind"], r["account"], r["currency"], r["amount"], r["balance_after"], r["at"])


def _grant(r: asyncpg.Record) -> CreditGrant:
    return CreditGrant(r["id"], r["account"], r["credit_limit"], r["approved_by"], r["at"])

