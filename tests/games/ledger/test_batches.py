"""Batches checked in order: what an operation may do depends on those before it in the same
batch, and a refusal names the first operation refused, with its details. Each case runs on
the PostgreSQL store and on the reference (``MemoryLedger``): the same results, or the same
refusal with the same details, and nothing written."""

from __future__ import annotations

import pytest

from games.errors import GameError
from games.ledger import Hold, LedgerError, MemoryLedger, Post, Transfer, Void, accounts

A, B = accounts.wallet("anna", "CHF"), accounts.wallet("bruno", "CHF")
BANK, CASH = accounts.bank("r1", "CHF"), accounts.cashier("CHF")
EVE = accounts.wallet("eve", "EUR")
GHOST = accounts.wallet("ghost", "CHF")


@pytest.fixture
async def both(ledger, table):
    """The store (after ``table``: anna and bruno hold 10000 each) and a reference in the same state."""
    mem = MemoryLedger()
    for acc in (A, B, BANK, CASH, EVE):
        mem.open_account(acc)
    await ledger.open_account(EVE)
    mem.apply([Transfer("dep-anna", CASH, A, 10000, "deposit"), Transfer("dep-bruno", CASH, B, 10000, "deposit")])
    return ledger, mem


async def outcome(fn):
    try:
        return ("ok", await fn())
    except GameError as e:
        assert isinstance(e, LedgerError)
        return ("refused", e.code, e.details)


async def same(both, ops) -> tuple:
    ledger, mem = both

    async def on_mem():
        return mem.apply(ops)

    expected, got = await outcome(on_mem), await outcome(lambda: ledger.apply(ops))
    assert got == expected
    for acc in (A, B, BANK, EVE):
        assert await ledger.balance(acc) == mem.balance(acc)
    return got


async def test_a_win_earlier_in_the_batch_funds_a_later_hold(both):
    got = await same(both, [Transfer("w1", BANK, A, 5000, "win"), Hold("h1", A, BANK, 15000, "bet")])
    assert got[0] == "ok"
    # the other way round the hold comes first, when bruno has only 10000
    got = await same(both, [Hold("h2", B, BANK, 15000, "bet"), Transfer("w2", BANK, B, 5000, "win")])
    assert got == ("refused", "insufficient_funds", {"op": "h2", "account": B, "available": 10000, "amount": 15000})


async def test_funds_run_through_the_batch_in_order(both):
    ops = [Hold("h1", A, BANK, 6000, "bet"), Hold("h2", A, BANK, 3000, "bet"), Transfer("t1", A, B, 1000, "gift"),
           Hold("h3", A, BANK, 1, "bet")]
    assert await same(both, ops) == ("refused", "insufficient_funds",
                                     {"op": "h3", "account": A, "available": 0, "amount": 1})
    # a void released earlier in the batch frees its chips for a later hold; bruno's gift too
    await same(both, [Hold("h1", A, BANK, 6000, "bet")])
    got = await same(both, [Void("v1", "h1", "push"), Transfer("t2", B, A, 2000, "gift"),
                            Hold("h4", A, BANK, 12000, "bet"), Hold("h5", B, BANK, 8001, "bet")])
    assert got == ("refused", "insufficient_funds", {"op": "h5", "account": B, "available": 8000, "amount": 8001})
    got = await same(both, [Void("v1", "h1", "push"), Transfer("t2", B, A, 2000, "gift"),
                            Hold("h4", A, BANK, 12000, "bet"), Hold("h5", B, BANK, 8000, "bet")])
    assert got[0] == "ok"


async def test_a_hold_made_and_settled_in_one_batch(both):
    ops = [Hold("h1", A, BANK, 4000, "bet", "s1"), Post("p1", "h1", 1500), Hold("h2", B, BANK, 700, "bet", "s1"),
           Void("v2", "h2", "push"), Hold("h3", A, BANK, 8500, "bet", "s1"), Post("p3", "h3", code="lost")]
    ok, results = await same(both, ops)
    assert ok == "ok"
    assert [(r.op, r.amount, r.released, r.code, r.ref) for r in results] == [
        ("hold", 4000, 0, "bet", "s1"), ("post", 1500, 2500, "bet", "s1"), ("hold", 700, 0, "bet", "s1"),
        ("void", 0, 700, "push", "s1"), ("hold", 8500, 0, "bet", "s1"), ("post", 8500, 0, "lost", "s1")]
    # the whole batch again: the same results, nothing moves twice
    assert await same(both, ops) == ("ok", results)


async def test_settling_a_hold_of_the_same_batch_follows_every_rule(both):
    assert await same(both, [Hold("h1", A, BANK, 400, "bet"), Post("p1", "h1", 401)]) == (
        "refused", "post_exceeds_hold", {"op": "p1", "hold": "h1"})
    assert await same(both, [Hold("h1", A, BANK, 400, "bet"), Post("p1", "h1"), Void("v1", "h1", "push")]) == (
        "refused", "hold_not_pending", {"op": "v1", "hold": "h1"})
    assert await same(both, [Transfer("t1", A, BANK, 400, "bet"), Post("p1", "t1")]) == (
        "refused", "unknown_hold", {"op": "p1", "hold": "t1"})
    assert await same(both, [Post("p1", "h1"), Hold("h1", A, BANK, 400, "bet")]) == (  # settled before it exists
        "refused", "unknown_hold", {"op": "p1", "hold": "h1"})


async def test_an_id_repeated_in_the_batch(both):
    post = Post("p1", "h1", 300)
    got = await same(both, [Hold("h1", A, BANK, 400, "bet"), post, post])
    assert got[0] == "ok" and got[1][1] == got[1][2]
    assert (await both[0].balance(A)).posted == 9700
    for other in (Post("p2", "h2", 301), Post("p2", "h2", 300, "won"), Post("p2", "h2", 300, ref="x"),
                  Void("p2", "h2", "push"), Post("p2", "h3", 300)):
        got = await same(both, [Hold("h2", A, BANK, 400, "bet"), Hold("h3", A, BANK, 400, "bet"),
                                Post("p2", "h2", 300), other])
        assert got == ("refused", "id_conflict", {"op": "p2"}), other
    # a post that leaves its code and ref empty repeats one that spelt out the hold's
    got = await same(both, [Hold("h4", A, BANK, 400, "bet", "s9"), Post("p4", "h4", None, "bet", "s9"),
                            Post("p4", "h4")])
    assert got[0] == "ok"


async def test_the_first_refused_operation_is_named(both):
    await same(both, [Hold("h1", A, BANK, 100, "bet"), Void("v1", "h1", "push")])
    cases = [
        ([Transfer("ok", A, BANK, 10, "bet"), Hold("a", A, BANK, 99999, "bet"), Post("b", "nowhere")],
         ("insufficient_funds", {"op": "a", "account": A, "available": 9990, "amount": 99999})),
        ([Transfer("ok", A, BANK, 10, "bet"), Post("b", "nowhere"), Hold("a", A, BANK, 99999, "bet")],
         ("unknown_hold", {"op": "b", "hold": "nowhere"})),
        ([Hold("a", A, BANK, 99999, "bet"), Transfer("c", A, GHOST, 1, "bet")],
         ("insufficient_funds", {"op": "a", "account": A, "available": 10000, "amount": 99999})),
        ([Transfer("c", A, GHOST, 1, "bet"), Hold("a", A, BANK, 99999, "bet")],
         ("unknown_account", {"op": "c", "account": GHOST})),
        ([Transfer("c", GHOST, A, 1, "bet")], ("unknown_account", {"op": "c", "account": GHOST})),
        # on one operation: the account first, then the currencies, then the funds
        ([Hold("d", A, EVE, 99999, "bet")], ("currency_mismatch", {"op": "d", "debit": A, "credit": EVE})),
        ([Post("e", "h1"), Transfer("h1", A, BANK, 1, "bet")], ("hold_not_pending", {"op": "e", "hold": "h1"})),
        ([Transfer("f", A, BANK, 1, "bet"), Transfer("v1", A, BANK, 1, "bet")], ("id_conflict", {"op": "v1"})),
    ]
    for ops, (code, details) in cases:
        assert await same(both, ops) == ("refused", code, details), ops
