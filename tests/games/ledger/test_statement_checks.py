"""The database's own second guard on transfer rows written around the code (ledger
migration 0006): the balance trigger proves, once per INSERT statement, what three
foreign keys proved row by row. Every refusal undoes the whole statement: no row, no
balance moved."""

from __future__ import annotations

import asyncio

import asyncpg
import pytest

from games.ledger import Hold, Post, accounts
from helpers.databases import rows_read, until_waiting

A, B = accounts.wallet("anna", "CHF"), accounts.wallet("bruno", "CHF")
BANK = accounts.bank("r1", "CHF")

_INSERT = ("INSERT INTO ledger_transfers (id, op, debit, credit, currency, amount, hold, hold_amount, code)"
           " VALUES ")


def rows(sql: str) -> str:
    return sql.format(a=A, b=B, bank=BANK)


async def state(c: asyncpg.Connection) -> tuple[list, list]:
    return ([tuple(r) for r in await c.fetch("SELECT * FROM ledger_accounts ORDER BY id")],
            [tuple(r) for r in await c.fetch("SELECT * FROM ledger_transfers ORDER BY seq")])


async def refused(c: asyncpg.Connection, sql: str, *, error: type[Exception], match: str) -> None:
    before = await state(c)
    with pytest.raises(error, match=match):
        await c.execute(rows(sql))
    assert await state(c) == before


@pytest.mark.parametrize(("row", "message"), [
    # an account that does not exist, as debit or as credit
    ("('x', 'transfer', 'wallet:nobody:CHF', '{bank}', 'CHF', 1, NULL, NULL, 'bet')",
     "ledger transfer x names account wallet:nobody:CHF in CHF: there is no such account"),
    ("('x', 'transfer', '{a}', 'bank:nowhere:CHF', 'CHF', 1, NULL, NULL, 'bet')",
     "ledger transfer x names account bank:nowhere:CHF in CHF: there is no such account"),
    # both accounts exist, but not in the row's currency
    ("('x', 'transfer', '{a}', '{bank}', 'EUR', 1, NULL, NULL, 'bet')",
     "ledger transfer x names account wallet:anna:CHF in EUR: there is no such account"),  # the debit first
])
async def test_a_row_naming_an_account_that_is_not_there_is_refused(pool, table, row, message):
    async with pool.acquire() as c:
        await refused(c, _INSERT + row, error=asyncpg.ForeignKeyViolationError, match=message)


async def test_the_first_bad_row_of_a_statement_is_named_and_none_is_written(pool, table):
    async with pool.acquire() as c:
        await refused(c, _INSERT + "('ok', 'transfer', '{a}', '{bank}', 'CHF', 100, NULL, NULL, 'bet'),"
                                   " ('bad1', 'transfer', '{a}', 'bank:r9:CHF', 'CHF', 100, NULL, NULL, 'bet'),"
                                   " ('bad2', 'transfer', 'wallet:zed:CHF', '{bank}', 'CHF', 100, NULL, NULL, 'bet')",
                      error=asyncpg.ForeignKeyViolationError,
                      match="^ledger transfer bad1 names account bank:r9:CHF in CHF")


@pytest.mark.parametrize(("row", "hold"), [
    ("('s', 'post', '{a}', '{bank}', 'CHF', 50, 'h1', 90, 'bet')", "h1"),  # another amount held
    ("('s', 'post', '{b}', '{bank}', 'CHF', 50, 'h1', 100, 'bet')", "h1"),  # another debit
    ("('s', 'void', '{a}', '{b}', 'CHF', 0, 'h1', 100, 'push')", "h1"),  # another credit
    ("('s', 'post', '{a}', '{bank}', 'CHF', 50, 't1', 100, 'bet')", "t1"),  # a transfer, not a hold
    ("('s', 'void', '{a}', '{bank}', 'CHF', 0, 'nothing', 100, 'push')", "nothing"),  # no such row
])
async def test_a_settlement_must_repeat_its_hold_exactly(ledger, pool, table, row, hold):
    await ledger.apply([Hold("h1", A, BANK, 100, "bet")])
    async with pool.acquire() as c:
        await c.execute(rows(_INSERT + "('t1', 'transfer', '{a}', '{bank}', 'CHF', 100, NULL, NULL, 'bet')"))
        await refused(c, _INSERT + row, error=asyncpg.ForeignKeyViolationError,
                      match=f"^ledger transfer s does not repeat hold {hold} ")


async def test_a_hold_and_its_post_in_one_statement_move_the_balances_once(ledger, pool, table):
    """The statement's own rows are there when it is checked: a hold made and posted in one
    INSERT is a good pair, and the balances move by exactly what was posted."""
    async with pool.acquire() as c:
        await c.execute(rows(_INSERT + "('h', 'hold', '{a}', '{bank}', 'CHF', 300, NULL, NULL, 'bet'),"
                                       " ('p', 'post', '{a}', '{bank}', 'CHF', 200, 'h', 300, 'bet')"))
    a, bank = await ledger.balance(A), await ledger.balance(BANK)
    assert (a.posted, a.pending, bank.posted, bank.pending) == (9800, 0, 200, 0)
    assert await ledger.check() == []


@pytest.mark.parametrize("sql", [
    "DELETE FROM ledger_accounts WHERE id = 'wallet:anna:CHF'",
    "DELETE FROM ledger_accounts WHERE false",
    "UPDATE ledger_accounts SET id = 'wallet:anne:CHF' WHERE id = 'wallet:anna:CHF'",
    "UPDATE ledger_accounts SET currency = 'EUR' WHERE id = 'bank:r1:CHF'",
    "TRUNCATE ledger_accounts CASCADE",
])
async def test_an_account_is_never_deleted_nor_renamed(pool, table, sql):
    async with pool.acquire() as c:
        await refused(c, sql, error=asyncpg.RestrictViolationError,
                      match=r"^ledger_accounts: (DELETE|UPDATE|TRUNCATE) refused: an account is never deleted")


async def test_an_account_keeps_taking_balance_and_credit_changes(ledger, pool, table):
    """The kept-keys trigger looks only at id and currency: balances and credit lines still move."""
    async with pool.acquire() as c:
        await c.execute(rows("UPDATE ledger_accounts SET id = id, currency = currency WHERE id = '{a}'"))
    await ledger.grant_credit(A, 5000, "inspector", "g1")
    assert (await ledger.balance(A)).available == 15000


async def test_a_settlement_reads_its_own_hold_not_the_banks_history(ledger, pool, table):
    """The trigger's plans are made once per connection, on its first INSERT. Made while the
    table was all but empty, a hold check that could take the credit index would read every
    row the bank was ever credited with, at every settlement (the bench found it: 0.9 s to
    settle 500 bets). It looks the hold up by its id: a row or so read a settlement."""
    async with pool.acquire() as c:
        await ledger.apply([Hold("h0", A, BANK, 1, "bet")], conn=c)  # this connection's plans, made now
        await ledger.apply([Post("p0", "h0")], conn=c)
        await ledger.apply([Hold(f"h{i}", B, BANK, 1, "bet") for i in range(1, 2001)])
        await ledger.apply([Post(f"p{i}", f"h{i}") for i in range(1, 2001)])
        await ledger.apply([Hold("hx", A, BANK, 1, "bet")], conn=c)
        async with c.transaction():
            before = await rows_read(c, "ledger_transfers")
            await c.execute(rows(_INSERT + "('px', 'post', '{a}', '{bank}', 'CHF', 1, 'hx', 1, 'bet')"))
            assert await rows_read(c, "ledger_transfers") - before == 1  # the hold, by its id
    assert (await ledger.balance(BANK)).posted == 2002


async def test_the_same_account_in_two_currencies_is_one_pair_missing(pool, table):
    """The trigger counts (account, currency) pairs: a statement naming anna's wallet in CHF
    and in EUR moves one pair and misses the other."""
    async with pool.acquire() as c:
        await refused(c, _INSERT + "('y1', 'transfer', '{a}', '{bank}', 'CHF', 1, NULL, NULL, 'bet'),"
                                   " ('y2', 'transfer', '{a}', '{bank}', 'EUR', 1, NULL, NULL, 'bet')",
                      error=asyncpg.ForeignKeyViolationError,
                      match="^ledger transfer y2 names account wallet:anna:CHF in EUR: there is no such account$")


async def test_a_hold_and_a_post_that_does_not_repeat_it_in_one_statement_write_nothing(pool, table):
    async with pool.acquire() as c:
        await refused(c, _INSERT + "('h', 'hold', '{a}', '{bank}', 'CHF', 300, NULL, NULL, 'bet'),"
                                   " ('p', 'post', '{a}', '{bank}', 'CHF', 200, 'h', 200, 'bet')",
                      error=asyncpg.ForeignKeyViolationError, match="^ledger transfer p does not repeat hold h ")


@pytest.mark.parametrize("row", [
    "('x', 'transfer', '{a}', '{bank}', 'CHF', 100, 'h1', NULL, 'bet')",  # what the old key skipped
    "('x', 'hold', '{a}', '{bank}', 'CHF', 100, 'h1', NULL, 'bet')",
])
async def test_only_a_settlement_names_a_hold(ledger, pool, table, row):
    """A transfer or hold naming a hold would take its settled-once slot and leave its chips
    pending for good: refused, and the hold is then settled as usual."""
    await ledger.apply([Hold("h1", A, BANK, 100, "bet")])
    async with pool.acquire() as c:
        await refused(c, _INSERT + row, error=asyncpg.CheckViolationError,
                      match="ledger_transfers_only_settlements_name_a_hold")
    await ledger.apply([Post("p1", "h1")])
    assert (await ledger.balance(A)).posted == 9900 and (await ledger.balance(A)).pending == 0


_COLUMNS = ["id", "op", "debit", "credit", "currency", "amount", "hold", "hold_amount", "code"]


async def test_a_copy_is_checked_as_an_insert_is(ledger, pool, table):
    """However the rows come: COPY fires the same statement trigger."""
    await ledger.apply([Hold("h1", A, BANK, 100, "bet")])
    async with pool.acquire() as c:
        before = await state(c)
        with pytest.raises(asyncpg.ForeignKeyViolationError, match="^ledger transfer c2 does not repeat hold h1 "):
            await c.copy_records_to_table("ledger_transfers", columns=_COLUMNS, records=[
                ("c1", "transfer", A, BANK, "CHF", 100, None, None, "bet"),
                ("c2", "post", A, BANK, "CHF", 50, "h1", 90, "bet")])
        assert await state(c) == before
        await c.copy_records_to_table("ledger_transfers", columns=_COLUMNS, records=[
            ("c1", "transfer", A, BANK, "CHF", 100, None, None, "bet"),
            ("c2", "post", A, BANK, "CHF", 50, "h1", 100, "bet")])
    a, bank = await ledger.balance(A), await ledger.balance(BANK)
    assert (a.posted, a.pending, bank.posted) == (9850, 0, 150)
    assert await ledger.check() == []


async def test_an_account_opened_while_the_statement_waited_asks_for_a_retry(ledger, pool, table):
    """READ COMMITTED: a raw INSERT waits for the bank's lock; meanwhile another transaction
    opens the wallet it credits. The UPDATE's snapshot predates that wallet, so its balance
    would not move: the statement is refused as a serialization failure (try again), and
    the retry goes through. ledger_apply locks its accounts first and never meets this."""
    zz = accounts.wallet("zz", "CHF")
    win = rows(_INSERT + "('rz', 'transfer', '{bank}', 'wallet:zz:CHF', 'CHF', 5, NULL, NULL, 'win')")
    async with pool.acquire() as locker, pool.acquire() as opener, pool.acquire() as writer:
        async with locker.transaction():
            await locker.execute("SELECT 1 FROM ledger_accounts WHERE id = $1 FOR UPDATE", BANK)
            insert = asyncio.ensure_future(writer.execute(win))
            await until_waiting(opener, writer.get_server_pid())
            await ledger.open_account(zz, conn=opener)
        with pytest.raises(asyncpg.SerializationError,
                           match="^ledger_transfers: an account this statement names was opened while it waited"):
            await insert
        assert (await ledger.balance(zz)).posted == 0
        await writer.execute(win)
    assert (await ledger.balance(zz)).posted == 5
    assert await ledger.check() == []


async def test_the_balance_update_probes_its_accounts_however_many_there_are_since(ledger, pool, table):
    """The trigger's plans, made on a connection's first INSERT while there were four
    accounts, still probe the accounts a statement names once there are 2,000 (no ANALYZE
    between): one index entry per account moved."""
    async with pool.acquire() as c:
        await c.execute(rows(_INSERT + "('t0', 'transfer', '{a}', '{bank}', 'CHF', 1, NULL, NULL, 'bet')"))
        await c.execute("""INSERT INTO ledger_accounts (id, currency, kind)
                           SELECT 'wallet:w' || i || ':CHF', 'CHF', 'wallet' FROM generate_series(1, 2000) AS i""")
        async with c.transaction():
            before = await rows_read(c, "ledger_accounts")
            await c.execute(rows(_INSERT + "('t1', 'transfer', '{a}', '{bank}', 'CHF', 1, NULL, NULL, 'bet'),"
                                           " ('t2', 'transfer', '{b}', '{bank}', 'CHF', 1, NULL, NULL, 'bet')"))
            assert await rows_read(c, "ledger_accounts") - before == 3  # anna, bruno, the bank
    assert (await ledger.balance(BANK)).posted == 3
