"""Random sequences of operations against the real ledger and the in-memory reference:
the same results, the same refusals, the same balances, and every currency sums to zero.

Each example works in its own namespace (account and op names carry the example's
number), so one database serves them all and the final check covers every example."""

from __future__ import annotations

import itertools

import msgspec
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from games.errors import GameError
from games.ledger import Hold, MemoryLedger, Post, Transfer, Void, accounts
from helpers.ledger_roles import ACCOUNTS

_counter = itertools.count()

names = st.sampled_from(sorted(ACCOUNTS))
GOOD_PAIRS = [("anna", "bank"), ("bruno", "bank"), ("bank", "anna"), ("eve", "bank_eur"), ("pts_anna", "pts_pool"),
              ("pts_pool", "pts_anna"), ("anna", "jackpot"), ("anna", "bruno")]
pairs = st.sampled_from(["good"] * 3 + ["any"]).flatmap(
    lambda k: st.sampled_from(GOOD_PAIRS) if k == "good" else st.tuples(names, names))
# mostly valid amounts, sometimes 0, negative or more than anyone has
amounts = st.sampled_from(["ok"] * 8 + ["bad"]).flatmap(
    lambda k: st.integers(1, 3000) if k == "ok" else st.sampled_from([0, -5, 10000]))
# small id pools, so ids are reused (replays, conflicts) and posts find their holds
transfer_ids = st.sampled_from([f"t{i}" for i in range(6)])
hold_ids = st.sampled_from([f"h{i}" for i in range(6)])
settle_ids = st.sampled_from([f"s{i}" for i in range(12)])
held = st.sampled_from(["hold"] * 8 + ["other"]).flatmap(
    lambda k: hold_ids if k == "hold" else st.sampled_from(["t0", "nowhere"]))
codes = st.sampled_from(["bet", "win", "push"])

op = st.one_of(
    st.tuples(st.just("transfer"), transfer_ids, pairs, amounts, codes),
    st.tuples(st.just("hold"), hold_ids, pairs, amounts, codes),
    st.tuples(st.just("hold"), hold_ids, pairs, amounts, codes),
    st.tuples(st.just("hold"), hold_ids, pairs, amounts, codes),
    st.tuples(st.just("post"), settle_ids, held, st.none() | st.integers(1, 1500) | st.just(0), codes),
    st.tuples(st.just("post"), settle_ids, held, st.none() | st.integers(1, 1500), codes),
    st.tuples(st.just("void"), settle_ids, held, codes),
)
step = st.one_of(
    st.lists(op, min_size=1, max_size=1).map(lambda ops: ("apply", ops)),
    st.lists(op, min_size=1, max_size=5).map(lambda ops: ("apply", ops)),
    st.tuples(st.just("credit"), st.sampled_from(["anna", "anna", "bank"]), st.sampled_from([0, 2000, 6000]),
              st.sampled_from(["c1", "c2", "c3"])),
)


def build(spec, ns: str):
    kind = spec[0]
    oid = f"{ns}{spec[1]}"
    if kind in ("transfer", "hold"):
        _, _, (d, c), amount, code = spec
        cls = Transfer if kind == "transfer" else Hold
        return cls(oid, ACCOUNTS[d](ns), ACCOUNTS[c](ns), amount, code, ref=f"{ns}round")
    if kind == "post":
        _, _, hold, amount, code = spec
        return Post(oid, f"{ns}{hold}", amount, code)
    _, _, hold, code = spec
    return Void(oid, f"{ns}{hold}", code)


async def run_both(mem_fn, db_coro):
    try:
        expected = ("ok", mem_fn())
    except GameError as e:
        expected = ("error", e.code)
    try:
        got = ("ok", await db_coro)
    except GameError as e:
        got = ("error", e.code)
    return expected, got


@pytest.mark.slow
@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(steps=st.lists(step, min_size=1, max_size=15))
async def test_real_ledger_agrees_with_the_reference(ledger, steps):
    ns = f"x{next(_counter)}"
    mem = MemoryLedger()
    opened = [ACCOUNTS[k](ns) for k in sorted(ACCOUNTS) if k != "ghost"]
    for acc in opened:
        mem.open_account(acc)
        await ledger.open_account(acc)
    funding = [Transfer(f"{ns}fund-{who}", accounts.cashier("CHF"), ACCOUNTS[who](ns), 5000, "deposit")
               for who in ("anna", "bruno")]
    funding.append(Transfer(f"{ns}fund-eve", accounts.cashier("EUR"), ACCOUNTS["eve"](ns), 5000, "deposit"))
    funding.append(Transfer(f"{ns}fund-pts", ACCOUNTS["pts_pool"](ns), ACCOUNTS["pts_anna"](ns), 200, "points_grant"))
    assert mem.apply(funding) == await ledger.apply(funding)

    for s in steps:
        if s[0] == "apply":
            ops = [build(spec, ns) for spec in s[1]]
            expected, got = await run_both(lambda ops=ops: mem.apply(ops), ledger.apply(ops))
        else:
            _, who, limit, gid = s
            acc, gid = ACCOUNTS[who](ns), f"{ns}{gid}"
            expected, got = await run_both(
                lambda acc=acc, limit=limit, gid=gid: mem.grant_credit(acc, limit, "inspector", gid),
                ledger.grant_credit(acc, limit, "inspector", gid))
            if expected[0] == got[0] == "ok":  # the store adds the time of the grant
                got = ("ok", msgspec.structs.replace(got[1], at=None))
        assert got == expected, s
        for acc in opened:
            if not acc.startswith("cashier:"):  # the cashiers are shared by every example
                assert await ledger.balance(acc) == mem.balance(acc), acc

    assert mem.check() == []
    assert await ledger.check() == []
