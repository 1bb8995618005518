"""Every ledger operation and every refusal on a real PostgreSQL; a refusal writes nothing."""

from __future__ import annotations

import asyncpg
import pytest

from games.errors import GameError
from games.ledger import Hold, LedgerError, OpResult, Post, Transfer, Void, accounts

A, B = accounts.wallet("anna", "CHF"), accounts.wallet("bruno", "CHF")
BANK, CASH = accounts.bank("r1", "CHF"), accounts.cashier("CHF")


async def snapshot(pool) -> list:
    async with pool.acquire() as c:
        out = []
        for t in ("ledger_accounts", "ledger_transfers", "ledger_receipts", "ledger_credit_grants"):
            out.append([tuple(r) for r in await c.fetch(f"SELECT * FROM {t} ORDER BY 1")])
        return out


async def refused(ledger, code: str, coro) -> None:
    before = await snapshot(ledger.pool)
    with pytest.raises(GameError) as e:
        await coro
    assert e.value.code == code
    assert await snapshot(ledger.pool) == before


async def test_transfer_moves_chips(ledger, table):
    [r] = await ledger.apply([Transfer("t1", A, table, 2500, "bet", "s1")])
    assert r == OpResult("t1", "transfer", A, BANK, "CHF", 2500, "bet", "s1")
    assert (await ledger.balance(A)).posted == 7500
    assert (await ledger.balance(BANK)).posted == 2500
    assert (await ledger.balance(CASH)).posted == -20000
    assert await ledger.check() == []


async def test_hold_post_in_part_and_win(ledger, table):
    await ledger.apply([Hold("h1", A, BANK, 4000, "bet", "s1")])
    b = await ledger.balance(A)
    assert (b.posted, b.pending, b.available) == (10000, 4000, 6000)
    # partage: half back, half to the bank; then a win on another spot
    res = await ledger.apply([Post("p1", "h1", 2000, "partage"), Transfer("w1", BANK, A, 700, "win", "s1")])
    assert res[0] == OpResult("p1", "post", A, BANK, "CHF", 2000, "partage", "s1", "h1", 2000)
    b = await ledger.balance(A)
    assert (b.posted, b.pending, b.available) == (8700, 0, 8700)
    assert (await ledger.balance(BANK)).posted == 1300
    assert await ledger.check() == []


async def test_post_whole_hold_and_void(ledger, table):
    await ledger.apply([Hold("h1", A, BANK, 1000, "bet"), Hold("h2", A, BANK, 500, "bet")])
    [p, v] = await ledger.apply([Post("p1", "h1"), Void("v2", "h2", "push")])
    assert (p.amount, p.released, v.amount, v.released) == (1000, 0, 0, 500)
    assert (await ledger.balance(A)).available == 9000


async def test_hold_and_settle_in_one_batch(ledger, table):
    res = await ledger.apply([Hold("h1", A, BANK, 1000, "bet", "s1"), Post("p1", "h1", 400)])
    assert [r.op for r in res] == ["hold", "post"]
    assert (await ledger.balance(A)).posted == 9600


async def refusal_cases(ledger) -> list[tuple[list, str]]:
    """Each way an operation is refused, on the ``table`` fixture's accounts: (ops, code)."""
    eur = accounts.wallet("eve", "EUR")
    await ledger.open_account(eur)
    pts_pool, pts_anna = accounts.points_pool("cup"), accounts.points("cup", "anna")
    await ledger.open_account(pts_pool)
    await ledger.open_account(pts_anna, "PTS", "points")
    await ledger.open_account(accounts.points("cup", "bruno"))
    await ledger.apply([Transfer("g1", pts_pool, pts_anna, 200, "points_grant"),
                        Hold("h1", A, BANK, 1000, "bet", "s1"), Hold("h2", A, BANK, 1000, "bet", "s1"),
                        Void("v2", "h2", "push")])
    return [
        ([Transfer("x", A, BANK, 0, "bet")], "invalid_amount"),
        ([Hold("x", A, BANK, -1, "bet")], "invalid_amount"),
        ([Post("x", "h1", 0)], "invalid_amount"),
        ([Transfer("x", A, "wallet:ghost:CHF", 1, "bet")], "unknown_account"),
        ([Transfer("x", "bank:ghost:CHF", A, 1, "win")], "unknown_account"),
        ([Transfer("x", A, eur, 1, "bet")], "currency_mismatch"),
        ([Transfer("x", pts_anna, A, 1, "cash_out")], "points_not_transferable"),
        ([Transfer("x", pts_pool, A, 1, "win")], "points_not_transferable"),
        ([Transfer("x", pts_anna, accounts.points("cup", "bruno"), 1, "gift")], "points_not_transferable"),
        ([Hold("x", A, BANK, 9001, "bet")], "insufficient_funds"),
        ([Post("x", "nope")], "unknown_hold"),
        ([Void("x", "g1", "oops")], "unknown_hold"),
        ([Post("x", "h1", 1001)], "post_exceeds_hold"),
        ([Post("x", "h2")], "hold_not_pending"),
        ([Void("x", "h2", "again")], "hold_not_pending"),
        ([Post("p1", "h1"), Void("v1", "h1", "push")], "hold_not_pending"),
        ([Transfer("g1", pts_pool, pts_anna, 201, "points_grant")], "id_conflict"),
        ([Post("v2", "h2")], "id_conflict"),
        ([Transfer("x", A, A, 1, "bet")], "same_account"),
        ([Transfer("x\x00", A, BANK, 1, "bet")], "invalid_id"),
        ([Transfer("x", A, BANK, 1, "bet", "s\x00")], "invalid_ref"),
        ([Transfer("x", A, "bank:r1\x00:CHF", 1, "bet")], "unknown_account"),
        ([Void("x", "h1\x00", "push")], "unknown_hold"),
        ([Transfer("ok", A, BANK, 10, "bet"), Transfer("bad", B, BANK, 10001, "bet")], "insufficient_funds"),
        ([Post("ok", "h1"), Transfer("bad", A, eur, 1, "bet")], "currency_mismatch"),
    ]


async def test_every_refusal_writes_nothing(ledger, table):
    cases = await refusal_cases(ledger)
    for ops, code in cases:
        await refused(ledger, code, ledger.apply(ops))
    await refused(ledger, "invalid_account", ledger.open_account("purse:anna:CHF"))
    await refused(ledger, "currency_mismatch", ledger.open_account(A, "EUR"))
    await refused(ledger, "unknown_account", ledger.balance("wallet:ghost:CHF"))
    assert await ledger.check() == []


async def test_refusals_are_ledger_errors_with_details(ledger, table):
    with pytest.raises(LedgerError) as e:
        await ledger.apply([Hold("x", A, BANK, 10001, "bet")])
    assert e.value.details == {"op": "x", "account": A, "available": 10000, "amount": 10001}


async def test_same_id_again_is_the_original_result(ledger, table):
    ops = [Hold("h1", A, BANK, 1000, "bet", "s1"), Post("p1", "h1", 600), Transfer("w1", BANK, A, 100, "win")]
    first = await ledger.apply(ops)
    before = await snapshot(ledger.pool)
    assert await ledger.apply(ops) == first
    assert await ledger.apply([ops[1]]) == [first[1]]
    assert await ledger.apply([Post("p1", "h1", 600, "bet", "s1")]) == [first[1]]
    assert await snapshot(ledger.pool) == before
    await refused(ledger, "id_conflict", ledger.apply([Post("p1", "h1", 500)]))
    await refused(ledger, "id_conflict", ledger.apply([Transfer("w1", BANK, A, 101, "win")]))
    await refused(ledger, "id_conflict", ledger.apply([Hold("w1", BANK, A, 100, "win")]))
    # a replay inside a batch with new work: the new work is done once
    res = await ledger.apply([Transfer("w1", BANK, A, 100, "win"), Transfer("w2", BANK, A, 50, "win")])
    assert res[0] == first[2]
    assert (await ledger.balance(A)).posted == 10000 - 600 + 150


async def test_same_id_twice_in_one_batch(ledger, table):
    t = Transfer("t1", A, BANK, 100, "bet")
    assert len(await ledger.apply([t, t])) == 2
    assert (await ledger.balance(A)).posted == 9900
    await refused(ledger, "id_conflict", ledger.apply([Transfer("t2", A, BANK, 1, "bet"),
                                                       Transfer("t2", A, BANK, 2, "bet")]))


async def test_ops_inside_the_callers_transaction(ledger, pool, table):
    async with pool.acquire() as c:
        async with c.transaction():
            await ledger.apply([Hold("h1", A, BANK, 100, "bet")], conn=c)
            with pytest.raises(LedgerError):  # refused inside: the caller's transaction survives
                await ledger.apply([Hold("h2", A, BANK, 10**6, "bet")], conn=c)
            await c.execute("SELECT 1")
        # the caller rolls back: the hold goes with it
        tr = c.transaction()
        await tr.start()
        await ledger.apply([Hold("h3", A, BANK, 100, "bet")], conn=c)
        assert (await ledger.balance(A, conn=c)).pending == 200
        assert [x.id for x in await ledger.statement(A, conn=c)][-2:] == ["h1", "h3"]
        assert await ledger.check(conn=c) == []
        await tr.rollback()
    assert (await ledger.balance(A)).pending == 100
    with pytest.raises(LedgerError) as e:
        await ledger.apply([Post("p3", "h3")])
    assert e.value.code == "unknown_hold"


async def test_deposit_and_cash_out_receipts(ledger):
    r = await ledger.deposit("carla", "EUR", 50000, "buy-1")
    assert (r.kind, r.account, r.currency, r.amount, r.balance_after) == (
        "deposit", "wallet:carla:EUR", "EUR", 50000, 50000)
    assert "500.00 EUR" in r.text()
    assert await ledger.deposit("carla", "EUR", 50000, "buy-1") == r
    await refused(ledger, "id_conflict", ledger.deposit("carla", "EUR", 40000, "buy-1"))
    out = await ledger.cash_out("carla", "EUR", 20000, "out-1")
    assert (out.kind, out.balance_after) == ("cash_out", 30000)
    assert await ledger.cash_out("carla", "EUR", 20000, "out-1") == out
    await refused(ledger, "insufficient_funds", ledger.cash_out("carla", "EUR", 30001, "out-2"))
    await refused(ledger, "points_not_transferable", ledger.deposit("carla", "PTS", 100, "buy-2"))
    await refused(ledger, "unknown_currency", ledger.deposit("carla", "USD", 100, "buy-2"))
    await refused(ledger, "invalid_amount", ledger.deposit("carla", "EUR", 0, "buy-2"))
    await refused(ledger, "unknown_account", ledger.cash_out("dora", "EUR", 1, "out-3"))
    assert (await ledger.balance(accounts.cashier("EUR"))).posted == -30000
    assert await ledger.check() == []


async def test_credit_line(ledger, table):
    await refused(ledger, "approval_required", ledger.grant_credit(A, 5000, "", "c1"))
    await refused(ledger, "credit_not_allowed", ledger.grant_credit(BANK, 5000, "rossi", "c1"))
    await refused(ledger, "unknown_account", ledger.grant_credit("wallet:ghost:CHF", 5000, "rossi", "c1"))
    await refused(ledger, "invalid_amount", ledger.grant_credit(A, -1, "rossi", "c1"))
    g = await ledger.grant_credit(A, 5000, "inspector-rossi", "c1")
    assert (g.account, g.limit, g.approved_by) == (A, 5000, "inspector-rossi")
    assert await ledger.grant_credit(A, 5000, "inspector-rossi", "c1") == g
    await refused(ledger, "id_conflict", ledger.grant_credit(A, 6000, "inspector-rossi", "c1"))
    b = await ledger.balance(A)
    assert (b.available, b.credit_limit) == (15000, 5000)
    await ledger.apply([Hold("h1", A, BANK, 15000, "bet")])
    await refused(ledger, "insufficient_funds", ledger.apply([Hold("h2", A, BANK, 1, "bet")]))
    await ledger.apply([Post("p1", "h1")])
    assert (await ledger.balance(A)).posted == -5000
    # credit chips are never cashed out; the line cannot shrink below what is used
    await refused(ledger, "insufficient_funds", ledger.cash_out("anna", "CHF", 1, "o1"))
    await refused(ledger, "credit_in_use", ledger.grant_credit(A, 4000, "inspector-rossi", "c2"))
    async with ledger.pool.acquire() as c:
        assert await c.fetchval("SELECT approved_by FROM ledger_credit_grants WHERE id = 'c1'") == "inspector-rossi"
    assert await ledger.check() == []


async def test_open_account_is_idempotent(ledger):
    a1 = await ledger.open_account(accounts.jackpot("blazing7", "CHF"), "CHF", "jackpot")
    assert await ledger.open_account(accounts.jackpot("blazing7", "CHF")) == a1
    assert (await ledger.balance(a1.id)).posted == 0


async def test_statement_shows_history_with_running_balance(ledger, table):
    await ledger.apply([Hold("h1", A, BANK, 3000, "bet", "s1")])
    await ledger.apply([Post("p1", "h1", 1000), Transfer("w1", BANK, A, 500, "win", "s1")])
    lines = await ledger.statement(A)
    assert [(x.id, x.change, x.pending_change, x.balance, x.pending) for x in lines] == [
        ("dep-anna", 10000, 0, 10000, 0),
        ("h1", 0, 3000, 10000, 3000),
        ("p1", -1000, -3000, 9000, 0),
        ("w1", 500, 0, 9500, 0),
    ]
    assert lines[1].counterparty == BANK and lines[0].counterparty == CASH
    # paging back from the post
    page = await ledger.statement(A, limit=1, before=lines[2].seq)
    assert [(x.id, x.balance, x.pending) for x in page] == [("h1", 10000, 3000)]
    bank = await ledger.statement(BANK, limit=2)
    assert [(x.id, x.change, x.balance) for x in bank] == [("p1", 1000, 1000), ("w1", -500, 500)]


async def test_database_refuses_what_the_code_would(ledger, pool, table):
    """The constraints hold even if someone writes around the code."""
    async with pool.acquire() as c:
        with pytest.raises(asyncpg.CheckViolationError):
            await c.execute("UPDATE ledger_accounts SET debits_posted = 10001 WHERE id = $1", A)
        with pytest.raises(asyncpg.ForeignKeyViolationError):  # mixed currencies
            await c.execute("INSERT INTO ledger_accounts (id, currency, kind)"
                            " VALUES ('wallet:eve:EUR', 'EUR', 'wallet')")
            await c.execute("INSERT INTO ledger_transfers (id, op, debit, credit, currency, amount, code)"
                            " VALUES ('x', 'transfer', $1, 'wallet:eve:EUR', 'CHF', 1, 'bet')", A)
        await ledger.apply([Hold("h1", A, BANK, 100, "bet")])
        with pytest.raises(asyncpg.ForeignKeyViolationError):  # a post must repeat the hold exactly
            await c.execute("INSERT INTO ledger_transfers"
                            " (id, op, debit, credit, currency, amount, hold, hold_amount, code)"
                            " VALUES ('x', 'post', $1, $2, 'CHF', 90, 'h1', 90, 'bet')", A, BANK)
        with pytest.raises(asyncpg.CheckViolationError):  # post more than held
            await c.execute("INSERT INTO ledger_transfers"
                            " (id, op, debit, credit, currency, amount, hold, hold_amount, code)"
                            " VALUES ('x', 'post', $1, $2, 'CHF', 101, 'h1', 100, 'bet')", A, BANK)
        await ledger.apply([Void("v1", "h1", "push")])
        with pytest.raises(asyncpg.UniqueViolationError):  # settled twice
            await c.execute("INSERT INTO ledger_transfers"
                            " (id, op, debit, credit, currency, amount, hold, hold_amount, code)"
                            " VALUES ('x', 'void', $1, $2, 'CHF', 0, 'h1', 100, 'push')", A, BANK)
        with pytest.raises(asyncpg.RaiseError):  # never edited
            await c.execute("UPDATE ledger_transfers SET amount = 1 WHERE id = 'h1'")
        with pytest.raises(asyncpg.RaiseError):
            await c.execute("DELETE FROM ledger_transfers WHERE id = 'h1'")
        await c.execute("INSERT INTO ledger_accounts (id, currency, kind) VALUES ('points:cup:a', 'PTS', 'points'),"
                        " ('points:cup:b', 'PTS', 'points')")
        with pytest.raises(asyncpg.CheckViolationError):  # points between players
            await c.execute("INSERT INTO ledger_transfers (id, op, debit, credit, currency, amount, code)"
                            " VALUES ('x', 'transfer', 'points:cup:a', 'points:cup:b', 'PTS', 1, 'gift')")
        with pytest.raises(asyncpg.CheckViolationError):  # a points wallet in chips
            await c.execute("INSERT INTO ledger_accounts (id, currency, kind) VALUES ('points:cup:c', 'CHF', 'points')")
    assert await ledger.check() == []


async def test_check_names_what_is_off(ledger, pool, table):
    await ledger.apply([Hold("h1", A, BANK, 100, "bet", "s1"), Hold("h2", B, BANK, 100, "bet", "s2")])
    assert [p.subject for p in await ledger.check(open_refs={"s2"})] == ["h1"]
    assert [p.subject for p in await ledger.check(open_refs=lambda: ["s1"])] == ["h2"]
    # The ledger alone knows no rounds: the hold check is skipped, and the report says so.
    report = await ledger.check_report()
    assert (report.problems, report.pending_holds, report.rounds_checked) == ([], 2, False)
    async with pool.acquire() as c:
        # The seam for whoever runs rounds: a view ledger_open_refs(ref) of the open ones
        # (the server's migrations make one of the wagers its tables still hold in play).
        await c.execute("CREATE TABLE open_wagers (ref text)")
        await c.execute("INSERT INTO open_wagers VALUES ('s2')")
        await c.execute("CREATE VIEW ledger_open_refs AS SELECT ref FROM open_wagers")
        report = await ledger.check_report()
        assert ([p.subject for p in report.problems], report.rounds_checked) == (["h1"], True)
        assert [p.subject for p in await ledger.check(open_refs=["s1"])] == ["h2"]  # given wins
        await c.execute("INSERT INTO open_wagers VALUES ('s1')")
        assert await ledger.check() == []
        # tamper with a balance behind the ledger's back
        await c.execute("UPDATE ledger_accounts SET credits_posted = credits_posted + 1 WHERE id = $1", B)
    problems = await ledger.check()
    assert [(p.code, p.subject) for p in problems] == [("currency_not_zero", "CHF"), ("balance_mismatch", B)]


async def test_transfer_rows_move_balances_in_the_database(ledger, pool, table):
    """A row written around the code still moves the balances, so the database's own
    non-negative check refuses an overdraft; an account's currency is the one its id names."""
    async with pool.acquire() as c:
        await c.execute("INSERT INTO ledger_transfers (id, op, debit, credit, currency, amount, code)"
                        " VALUES ('x1', 'hold', $1, $2, 'CHF', 4000, 'bet')", A, BANK)
        b = await ledger.balance(A)
        assert (b.posted, b.pending, b.available) == (10000, 4000, 6000)
        await c.execute("INSERT INTO ledger_transfers"
                        " (id, op, debit, credit, currency, amount, hold, hold_amount, code)"
                        " VALUES ('x2', 'post', $1, $2, 'CHF', 1500, 'x1', 4000, 'bet')", A, BANK)
        assert (await ledger.balance(A)).posted == 8500 and (await ledger.balance(BANK)).posted == 1500
        with pytest.raises(asyncpg.CheckViolationError):  # 8501 > 8500: the database says no
            await c.execute("INSERT INTO ledger_transfers (id, op, debit, credit, currency, amount, code)"
                            " VALUES ('x3', 'transfer', $1, $2, 'CHF', 8501, 'bet')", A, BANK)
        with pytest.raises(asyncpg.CheckViolationError):
            await c.execute("INSERT INTO ledger_accounts (id, currency, kind)"
                            " VALUES ('wallet:eve:CHF', 'EUR', 'wallet')")
    assert await ledger.check() == []


async def test_the_database_and_the_model_agree_on_who_may_go_below_zero(pool):
    """One rule, said twice (Python model and SQL checks): they must say the same for every kind."""
    for kind in accounts.Kind:
        assert await pool.fetchval("SELECT ledger_may_go_negative($1)", kind.value) == (
            kind in accounts.MAY_GO_NEGATIVE), kind


async def test_a_floor_account_carries_its_players_net_result_below_zero(ledger, table):
    """A live table's floor players (cash chips, no wallet) lose and win against the bank
    through the table's floor account, which may go below zero like the cashier."""
    floor = accounts.floor("r1", "CHF")
    await ledger.open_account(floor)
    await ledger.apply([Hold("fh1", floor, BANK, 3000, "bet", "r1/w1"), Hold("fh2", floor, BANK, 1000, "bet", "r1/w2")])
    await ledger.apply([Post("fp1", "fh1"), Void("fv2", "fh2", "returned")])
    assert (await ledger.balance(floor)).posted == -3000
    await ledger.apply([Transfer("fw", BANK, floor, 7000, "win", "r1/w3")])
    assert (await ledger.balance(floor)).posted == 4000
    assert await ledger.check() == []


async def test_a_receipt_can_never_take_a_tables_operation_id(ledger, table):
    """The tables' and jackpots' operation ids hold '/' (``<table>/<wager>/hold``): a receipt
    id may not, or a cashier could take an id a table needs and freeze its bets."""
    await refused(ledger, "invalid_id", ledger.deposit("anna", "CHF", 100, "r1/s2-w7/void"))
    await refused(ledger, "invalid_id", ledger.cash_out("anna", "CHF", 100, "r1/s2-w8/hold"))
