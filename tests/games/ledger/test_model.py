"""The pure model: account ids, validation, rules, and the in-memory reference ledger."""

from __future__ import annotations

import msgspec
import pytest
from hypothesis import given
from hypothesis import strategies as st

from games.errors import GameError
from games.ledger import accounts
from games.ledger.accounts import Kind
from games.ledger.memory import MemoryLedger
from games.ledger.model import (
    Hold,
    OpResult,
    Post,
    Transfer,
    Void,
    account_info,
    validate,
)

A, B = accounts.wallet("anna", "CHF"), accounts.wallet("bruno", "CHF")
BANK, CASH = accounts.bank("r1", "CHF"), accounts.cashier("CHF")


def code_of(fn, *args) -> str:
    with pytest.raises(GameError) as e:
        fn(*args)
    return e.value.code


def test_account_ids_say_what_they_are():
    assert A == "wallet:anna:CHF"
    assert accounts.bank("bj-2", "EUR") == "bank:bj-2:EUR"
    assert accounts.cashier("EUR") == "cashier:EUR"
    assert accounts.unclaimed("r1", "CHF") == "unclaimed:r1:CHF"
    assert accounts.jackpot("blazing7", "CHF") == "jackpot:blazing7:CHF"
    assert accounts.prize_pool("cup", "EUR") == "prize_pool:cup:EUR"
    assert accounts.fees("EUR") == "fees:EUR"
    assert accounts.points("cup", "anna") == "points:cup:anna"
    assert accounts.points_pool("cup") == "points_pool:cup"
    assert accounts.parse("points:cup:anna") == (Kind.POINTS, "PTS")
    assert accounts.parse("jackpot:blazing7:CHF") == (Kind.JACKPOT, "CHF")


def test_bad_account_names_are_refused():
    assert code_of(accounts.wallet, "an:na", "CHF") == "invalid_account"
    assert code_of(accounts.wallet, "", "CHF") == "invalid_account"
    assert code_of(accounts.wallet, "anna", "USD") == "unknown_currency"
    assert code_of(accounts.wallet, "anna", "PTS") == "points_not_transferable"
    assert code_of(accounts.parse, "purse:anna:CHF") == "invalid_account"
    assert code_of(accounts.parse, "wallet:anna") == "invalid_account"
    assert code_of(account_info, A, "EUR") == "currency_mismatch"
    assert code_of(account_info, A, None, "bank") == "invalid_account"


@pytest.mark.parametrize(
    "op, code",
    [
        (Transfer("t", A, BANK, 0, "bet"), "invalid_amount"),
        (Transfer("t", A, BANK, -5, "bet"), "invalid_amount"),
        (Hold("t", A, BANK, 1.5, "bet"), "invalid_amount"),
        (Hold("t", A, BANK, True, "bet"), "invalid_amount"),
        (Post("t", "h", 0), "invalid_amount"),
        (Transfer("", A, BANK, 5, "bet"), "invalid_id"),
        (Transfer("t", A, BANK, 5, "Bet!"), "invalid_code"),
        (Void("t", "h", ""), "invalid_code"),
        (Transfer("t", A, A, 5, "bet"), "same_account"),
        ("transfer 5", "invalid_op"),
    ],
)
def test_validation_without_the_ledger(op, code):
    assert code_of(validate, op) == code


def test_ops_round_trip_as_a_tagged_union():
    ops = [Transfer("t", A, BANK, 5, "bet"), Hold("h", A, BANK, 5, "bet", "s1"), Post("p", "h"), Void("v", "h", "push")]
    raw = msgspec.json.encode(ops)
    assert msgspec.json.decode(raw, type=list[Transfer | Hold | Post | Void]) == ops


@pytest.fixture
def mem() -> MemoryLedger:
    m = MemoryLedger()
    for acc in (A, B, BANK, CASH, accounts.wallet("eve", "EUR"), accounts.points("cup", "anna"),
                accounts.points("cup", "bruno"), accounts.points_pool("cup"), accounts.points_pool("other")):
        m.open_account(acc)
    m.apply([Transfer("d1", CASH, A, 10000, "deposit"), Transfer("d2", CASH, B, 5000, "deposit")])
    return m


def test_hold_counts_at_once_and_post_releases_the_rest(mem):
    mem.apply([Hold("h1", A, BANK, 3000, "bet", "s1")])
    b = mem.balance(A)
    assert (b.posted, b.pending, b.available) == (10000, 3000, 7000)
    [r] = mem.apply([Post("p1", "h1", 1000)])
    assert r == OpResult("p1", "post", A, BANK, "CHF", 1000, "bet", "s1", "h1", 2000)
    b = mem.balance(A)
    assert (b.posted, b.pending, b.available) == (9000, 0, 9000)
    assert mem.balance(BANK).posted == 1000
    assert mem.balance(CASH).posted == -15000
    assert mem.check() == []


def test_void_gives_everything_back(mem):
    mem.apply([Hold("h1", A, BANK, 3000, "bet")])
    [r] = mem.apply([Void("v1", "h1", "push")])
    assert (r.amount, r.released) == (0, 3000)
    assert mem.balance(A).available == 10000


def test_errors_leave_the_reference_unchanged(mem):
    before = list(mem.log)
    cases = [
        ([Hold("h1", A, BANK, 10001, "bet")], "insufficient_funds"),
        ([Transfer("x", A, "wallet:nobody:CHF", 1, "bet")], "unknown_account"),
        ([Transfer("x", A, accounts.wallet("eve", "EUR"), 1, "bet")], "currency_mismatch"),
        ([Transfer("x", accounts.points_pool("cup"), A, 1, "bet")], "points_not_transferable"),
        ([Transfer("x", accounts.points("cup", "anna"), accounts.points("cup", "bruno"), 1, "bet")],
         "points_not_transferable"),
        ([Transfer("x", accounts.points_pool("other"), accounts.points("cup", "anna"), 1, "grant")],
         "points_not_transferable"),
        ([Post("x", "nope")], "unknown_hold"),
        ([Post("x", "d1")], "unknown_hold"),
        ([Hold("h1", A, BANK, 100, "bet"), Post("p1", "h1", 101)], "post_exceeds_hold"),
        ([Hold("h1", A, BANK, 100, "bet"), Void("v1", "h1", "push"), Post("p1", "h1")], "hold_not_pending"),
        ([Transfer("d1", CASH, A, 1, "deposit")], "id_conflict"),
        # a whole batch fails with its last op
        ([Transfer("ok", A, BANK, 100, "bet"), Transfer("bad", B, BANK, 5001, "bet")], "insufficient_funds"),
    ]
    for ops, code in cases:
        assert code_of(mem.apply, ops) == code, ops
        assert mem.log == before


def test_same_id_same_content_is_the_original_result(mem):
    first = mem.apply([Hold("h1", A, BANK, 100, "bet", "s1"), Post("p1", "h1")])
    assert mem.apply([Hold("h1", A, BANK, 100, "bet", "s1"), Post("p1", "h1", 100)]) == first
    assert len(mem.log) == 4
    assert code_of(mem.apply, [Post("p1", "h1", 99)]) == "id_conflict"
    assert code_of(mem.apply, [Void("p1", "h1", "bet")]) == "id_conflict"


def test_points_move_between_player_and_own_pool(mem):
    pool, anna = accounts.points_pool("cup"), accounts.points("cup", "anna")
    mem.apply([Transfer("g1", pool, anna, 200, "points_grant"), Hold("b1", anna, pool, 20, "bet")])
    mem.apply([Post("b1p", "b1"), Transfer("b1w", pool, anna, 20, "win")])
    assert mem.balance(anna).posted == 200
    assert mem.balance(pool).posted == -200
    assert mem.check() == []


def test_credit_line_lets_a_wallet_go_below_zero(mem):
    assert code_of(mem.grant_credit, A, 5000, "", "c1") == "approval_required"
    assert code_of(mem.grant_credit, BANK, 5000, "insp", "c1") == "credit_not_allowed"
    mem.grant_credit(A, 5000, "inspector-rossi", "c1")
    mem.apply([Transfer("t1", A, BANK, 15000, "bet")])
    assert mem.balance(A) .posted == -5000
    assert code_of(mem.apply, [Transfer("t2", A, BANK, 1, "bet")]) == "insufficient_funds"
    assert code_of(mem.grant_credit, A, 4999, "inspector-rossi", "c2") == "credit_in_use"
    assert mem.check() == []


def test_check_flags_holds_of_closed_rounds(mem):
    mem.apply([Hold("h1", A, BANK, 100, "bet", "s1"), Hold("h2", B, BANK, 100, "bet", "s2")])
    assert mem.check(open_refs={"s1", "s2"}) == []
    [p] = mem.check(open_refs=lambda: {"s2"})
    assert (p.code, p.subject) == ("hold_round_closed", "h1")


@given(name=st.from_regex(r"[A-Za-z0-9_.@#/+-]{1,64}", fullmatch=True), cur=st.sampled_from(["CHF", "EUR"]))
def test_every_helper_id_parses_back_to_its_kind(name, cur):
    for build, kind in ((accounts.wallet, Kind.WALLET), (accounts.bank, Kind.BANK), (accounts.jackpot, Kind.JACKPOT),
                        (accounts.unclaimed, Kind.UNCLAIMED), (accounts.prize_pool, Kind.PRIZE_POOL)):
        assert accounts.parse(build(name, cur)) == (kind, cur)
    assert accounts.parse(accounts.points(name, name)) == (Kind.POINTS, "PTS")
    assert accounts.tournament_of(accounts.points(name, "x")) == name
    assert accounts.tournament_of(accounts.points_pool(name)) == name
