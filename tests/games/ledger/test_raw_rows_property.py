"""Random statements of raw transfer rows, written around the code, against a model of every
rule the database holds (the rows' CHECKs and keys, the balance trigger's checks of ledger
migration 0006, the accounts' CHECKs): each statement is accepted whole or refused whole,
as the model says, and the balances are the model's after every one. The second guard is
then exactly the rules, not merely close to them.

Each example works in its own namespace, so one database serves them all; the cashiers
are shared, so no row names them."""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field

import asyncpg
import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from games.ledger import accounts
from helpers.ledger_roles import ACCOUNTS

_counter = itertools.count()

# the cast of test_property, without the cashiers (shared) and the points (they need a
# tournament's pairing, not modelled here); an account's currency and whether it may go
# below zero follow from its id (games.ledger.accounts)
ROLES = {role: ACCOUNTS[role] for role in ("anna", "bruno", "eve", "bank", "bank_eur", "ghost")}
FUNDS = {"anna": 100_000, "bruno": 100_000, "eve": 100_000}
GOOD = [("anna", "bank"), ("bruno", "bank"), ("bank", "anna"), ("anna", "bruno"), ("eve", "bank_eur")]

# few, so ids clash now and then and settlements find their holds
ids = st.sampled_from([f"t{i}" for i in range(40)])
hold_ids = st.sampled_from([f"h{i}" for i in range(40)])
settle_ids = st.sampled_from([f"s{i}" for i in range(40)])


def mostly(good: st.SearchStrategy, odd: st.SearchStrategy) -> st.SearchStrategy:
    """``good`` nine times in ten, else ``odd``: most rows pass, and every rule still bites."""
    return st.sampled_from([True] * 9 + [False]).flatmap(lambda ok: good if ok else odd)


# Mostly what a good row would say, resolved against the rows before it (("pending", k): the
# k-th hold not yet settled; "its hold's": the accounts of the hold it names; "theirs": the
# accounts' currency; "its own": the named row's amount), sometimes anything.
named = mostly(st.integers(0, 39).map(lambda k: ("pending", k)), hold_ids | ids)  # what a settlement names
pairs = st.tuples(*[st.sampled_from(sorted(ROLES))] * 2)
good_pairs = mostly(st.sampled_from(GOOD), pairs)
settle_pairs = mostly(st.just("its hold's"), pairs)
currencies = mostly(st.just("theirs"), st.sampled_from(["CHF", "EUR"]))
odd_amounts = st.sampled_from([0, -5, 10**9])
amounts = mostly(st.integers(1, 3000), odd_amounts)
post_amounts = mostly(st.sampled_from(["its own", "its own", 1]) | st.integers(1, 50), odd_amounts)
void_amounts = mostly(st.just(0), st.integers(-5, 3000))
hold_amounts = mostly(st.just("its own"), st.sampled_from([None, 1, 10**9]))
moves = st.one_of(
    st.tuples(st.just("transfer"), ids, good_pairs, currencies, amounts, st.none(), st.none()),
    st.tuples(st.just("hold"), hold_ids, good_pairs, currencies, amounts, st.none(), st.none()),
    st.tuples(st.just("hold"), hold_ids, good_pairs, currencies, amounts, st.none(), st.none()),
)
settlements = st.one_of(
    st.tuples(st.just("post"), settle_ids, settle_pairs, currencies, post_amounts, named, hold_amounts),
    st.tuples(st.just("void"), settle_ids, settle_pairs, currencies, void_amounts, named, hold_amounts),
)
# the odd ones: a hold amount without a hold, a transfer or hold naming one
odd = st.tuples(st.sampled_from(["transfer", "hold"]), ids | hold_ids, pairs, currencies, amounts,
                st.none() | hold_ids, hold_amounts)
# Statements as a table writes them (its holds, later their settlement) and mixed ones.
statements = st.lists(st.one_of(
    st.lists(moves, min_size=1, max_size=4),
    st.lists(moves, min_size=1, max_size=4),
    st.lists(settlements, min_size=1, max_size=3),
    st.lists(moves | settlements | odd, min_size=1, max_size=4),
), min_size=1, max_size=12)


@dataclass
class Totals:
    currency: str
    may_go_negative: bool
    dp: int = 0  # debits posted, credits posted, debits pending, credits pending
    cp: int = 0
    dpe: int = 0
    cpe: int = 0

    @classmethod
    def of(cls, account: str, credits: int = 0) -> Totals:
        kind, currency = accounts.parse(account)
        return cls(currency, kind in accounts.MAY_GO_NEGATIVE, cp=credits)

    def fine(self) -> bool:
        """ledger_accounts' CHECKs (no credit lines here)."""
        return (min(self.dp, self.cp, self.dpe, self.cpe) >= 0
                and (self.may_go_negative or self.dp + self.dpe <= self.cp))


@dataclass
class Model:
    """What the database holds after the accepted statements: rows by id, the settled holds,
    the accounts' totals."""
    accounts: dict[str, Totals]
    rows: dict[str, tuple] = field(default_factory=dict)
    settled: set[str] = field(default_factory=set)

    def accepts(self, new: list[tuple]) -> dict[str, Totals] | None:
        """The accounts' totals after ``new``, or None where one rule refuses the statement."""
        seen = dict(self.rows)
        for r in new:
            if r[0] in seen:
                return None  # the primary key
            seen[r[0]] = r
        settles = [r[6] for r in new if r[6] is not None]
        if len(set(settles)) < len(settles) or self.settled & set(settles):
            return None  # UNIQUE (hold): a hold is settled once
        totals = {a: Totals(**vars(t)) for a, t in self.accounts.items()}
        for _, op, debit, credit, cur, amount, hold, hold_amount in new:
            if not row_fine(op, debit, credit, amount, hold, hold_amount):
                return None
            if hold is not None:  # a post or void repeats its hold, wherever in the statement
                h = seen.get(hold)
                if h is None or (h[1], h[5], h[2], h[3]) != ("hold", hold_amount, debit, credit):
                    return None
            for account in (debit, credit):
                if account not in totals or totals[account].currency != cur:
                    return None
            moved = amount if op in ("transfer", "post") else 0
            pending = {"hold": amount, "transfer": 0}.get(op, -(hold_amount or 0))
            totals[debit].dp += moved
            totals[debit].dpe += pending
            totals[credit].cp += moved
            totals[credit].cpe += pending
        return totals if all(t.fine() for t in totals.values()) else None

    def take(self, new: list[tuple], totals: dict[str, Totals]) -> None:
        self.rows.update((r[0], r) for r in new)
        self.settled.update(r[6] for r in new if r[6] is not None)
        self.accounts = totals


def row_fine(op: str, debit: str, credit: str, amount: int, hold: str | None, hold_amount: int | None) -> bool:
    """ledger_transfers' own CHECKs (0001, 0006). A CHECK passes on NULL, as SQL's does."""
    settles = op in ("post", "void")
    if debit == credit or settles != (hold is not None and hold_amount is not None):
        return False
    if hold is not None and not settles:  # 0006: only a settlement names a hold
        return False
    if op == "post":
        return amount > 0 and (hold_amount is None or amount <= hold_amount)
    return amount == 0 if op == "void" else amount > 0


def rows_of(spec: list[tuple], ns: str, model: Model) -> list[tuple]:
    """(id, op, debit, credit, currency, amount, hold, hold amount) in the namespace, the
    placeholders resolved against the model's rows and the statement's own before it."""
    out: list[tuple] = []
    for op, rid, pair, cur, amount, hold, hold_amount in spec:
        if isinstance(hold, tuple):  # ("pending", k)
            rows = [*model.rows.values(), *out]
            pending = sorted(r[0] for r in rows if r[1] == "hold" and r[0] not in model.settled)
            hold = pending[hold[1] % len(pending)].removeprefix(ns) if pending else "h0"
        held = f"{ns}{hold}" if hold is not None else None
        named = (model.rows.get(held) or next((r for r in out if r[0] == held), None)) if held else None
        if pair == "its hold's":
            debit, credit = (named[2], named[3]) if named else (ROLES["anna"](ns), ROLES["bank"](ns))
        else:
            debit, credit = ROLES[pair[0]](ns), ROLES[pair[1]](ns)
        if cur == "theirs":
            cur = accounts.parse(debit)[1]
        if hold_amount == "its own":
            hold_amount = named[5] if named else 7
        if amount == "its own":
            amount = hold_amount if isinstance(hold_amount, int) else 7
        out.append((f"{ns}{rid}", op, debit, credit, cur, amount, held, hold_amount))
    return out


_INSERT = ("INSERT INTO ledger_transfers (id, op, debit, credit, currency, amount, hold, hold_amount, code)"
           " SELECT u.id, u.op, u.debit, u.credit, u.currency, u.amount, u.hold, u.hold_amount, 'raw'"
           " FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::bigint[], $7::text[],"
           " $8::bigint[]) AS u(id, op, debit, credit, currency, amount, hold, hold_amount)")


@pytest.mark.slow
@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(steps=statements)
async def test_raw_statements_are_accepted_exactly_when_every_rule_holds(ledger, pool, steps):
    ns = f"raw{next(_counter)}-"
    opened = {role: name(ns) for role, name in ROLES.items() if role != "ghost"}
    for account in opened.values():
        await ledger.open_account(account)
    for role, amount in FUNDS.items():
        await ledger.deposit(f"{ns}{role}", accounts.parse(opened[role])[1], amount, f"{ns}dep-{role}")
    model = Model({account: Totals.of(account, FUNDS.get(role, 0)) for role, account in opened.items()})

    async with pool.acquire() as c:
        for spec in steps:
            new = rows_of(spec, ns, model)
            expected = model.accepts(new)
            try:
                await c.execute(_INSERT, *map(list, zip(*new, strict=True)))
                accepted = True
                event("accepted: a statement with a settlement" if any(r[6] for r in new) else "accepted")
            except asyncpg.IntegrityConstraintViolationError as e:  # keys, CHECKs, the trigger's refusals
                accepted = False
                event(f"refused: {type(e).__name__}")
            assert accepted == (expected is not None), new
            if expected is not None:
                model.take(new, expected)
            got = {r["id"]: (r["debits_posted"], r["credits_posted"], r["debits_pending"], r["credits_pending"])
                   for r in await c.fetch("SELECT * FROM ledger_accounts WHERE id = ANY($1::text[])",
                                          list(model.accounts))}
            assert got == {a: (t.dp, t.cp, t.dpe, t.cpe) for a, t in model.accounts.items()}
    assert await ledger.check() == []
