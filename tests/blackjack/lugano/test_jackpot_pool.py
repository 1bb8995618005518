"""The linked Blazing 7s jackpot: seeds, contributions, hits, shares, the reset, two
linked tables hitting at once, and the ledger transfers it maps to (the in-memory
reference ledger), where each jackpot account always holds its meter."""

import msgspec
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from blackjack.jackpot import Blazing7s, Hit, JackpotLevel, MetersChanged
from blackjack.jackpot_pool import (
    Enter,
    JackpotPaid,
    JackpotPool,
    JackpotSeeded,
    JackpotWon,
    Open,
    PoolState,
    Report,
)
from games.commands import Actor
from games.errors import GameError
from games.ledger import accounts
from games.ledger.memory import MemoryLedger
from server.money import jackpot_transfers as transfers

CFG = Blazing7s(jackpot="b7", minor=JackpotLevel(seed=500000, contribution=10),
                major=JackpotLevel(seed=10000000, contribution=20))
SERVER = Actor("system", "system")  # the server feeds the pool


class Books:
    """A pool and the ledger its events move money in."""

    def __init__(self, cfg=CFG, tables=("t1", "t2")):
        self.pool = JackpotPool(cfg)
        self.ledger = MemoryLedger()
        self.events: list = []
        for t in tables:
            self.ledger.open_account(accounts.bank(t, "CHF"))
        for lv in ("minor", "major"):
            self.ledger.open_account(accounts.jackpot(f"{cfg.jackpot}-{lv}", "CHF"))
        self.do(Open(table=tables[0]))

    def do(self, cmd):
        ev = self.pool.handle(cmd, SERVER)
        self.events += ev
        for m in transfers(ev, "CHF"):
            for acc in (m.debit, m.credit):
                if acc.startswith("wallet:") and acc not in self.ledger.accounts:
                    self.ledger.open_account(acc)
            self.ledger.apply([m])
        return ev

    def balance(self, level):
        return self.ledger.balance(accounts.jackpot(f"b7-{level}", "CHF")).posted

    def paid(self, player):
        return sum(e.amount for e in self.events if isinstance(e, JackpotPaid) and e.player == player)


def test_open_seeds_both_meters_from_a_bank():
    b = Books()
    assert b.pool.meters == (500000, 10000000)
    assert b.balance("minor") == 500000 and b.balance("major") == 10000000
    assert b.ledger.balance(accounts.bank("t1", "CHF")).posted == -10500000
    with pytest.raises(GameError) as exc:
        b.pool.handle(Open(table="t1"), SERVER)
    assert exc.value.code == "jackpot_open"


def test_each_stake_contributes_to_both_meters():
    b = Books()
    b.do(Enter(table="t1", round=1))
    ev = b.do(Report(table="t1", round=1, stakes=3))
    assert b.pool.meters == (500030, 10000060)
    assert ev[-1] == MetersChanged(jackpot="b7", minor=500030, major=10000060)
    assert b.ledger.balance(accounts.bank("t1", "CHF")).posted == -10500000 - 90


def test_a_hit_pays_the_whole_meter_rounded_up_and_resets_it():
    b = Books()
    b.do(Enter(table="t1", round=1))
    b.do(Report(table="t1", round=1, stakes=2, hits=[Hit("major", "ann", "w1", 1)]))
    # 10,000,040 after the contributions: paid as CHF 100,001, and back to the seed.
    assert b.paid("ann") == 10000100
    assert b.pool.meters == (500020, 10000000)
    assert b.balance("major") == 10000000 and b.balance("minor") == 500020
    won = [e for e in b.events if isinstance(e, JackpotWon)]
    assert won[0].amount == 10000040 and not won[0].reset_amount
    # The house funds the new seed plus the 60 that rounding up cost.
    assert [e.amount for e in b.events if isinstance(e, JackpotSeeded) and e.round == 1] == [10000060]


def test_winners_in_one_round_share_equally_rounded_up():
    cfg = msgspec.structs.replace(CFG, minor=JackpotLevel(seed=1000000, contribution=0),
                                  major=JackpotLevel(seed=10000000, contribution=0))
    b = Books(cfg)
    b.do(Enter(table="t1", round=1))
    hits = [Hit("minor", p, f"w{i}", i) for i, p in enumerate(("ann", "bob", "cy"), 1)]
    b.do(Report(table="t1", round=1, stakes=3, hits=hits))
    # CHF 10,000 / 3 = 3,333.33 -> CHF 3,334 each.
    assert [b.paid(p) for p in ("ann", "bob", "cy")] == [333400, 333400, 333400]
    assert b.pool.meters == (1000000, 10000000)


def test_two_linked_tables_hitting_at_once_the_first_started_wins():
    b = Books()
    b.do(Enter(table="t1", round=7))  # started first
    b.do(Enter(table="t2", round=3))
    # t2 reports first: it must wait, since t1 started before it and may hit too.
    assert b.do(Report(table="t2", round=3, stakes=1, hits=[Hit("major", "bob", "w2", 2)])) == []
    assert b.pool.view().waiting == 2
    b.do(Report(table="t1", round=7, stakes=1, hits=[Hit("major", "ann", "w1", 4)]))
    assert b.paid("ann") == 10000100  # the meter: seed + 2 x 20, rounded up to a franc
    assert b.paid("bob") == 10000000  # the reset amount
    won = [e for e in b.events if isinstance(e, JackpotWon)]
    assert [(e.table, e.reset_amount) for e in won] == [("t1", False), ("t2", True)]
    # The meter was reset once: the seed plus t2's contribution, which came after.
    assert b.pool.meters[1] == 10000020 == b.balance("major")
    assert b.pool.view().waiting == 0


def test_a_round_started_after_the_reset_wins_the_new_meter():
    b = Books()
    b.do(Enter(table="t1", round=1))
    b.do(Report(table="t1", round=1, stakes=1, hits=[Hit("minor", "ann", "w1", 1)]))
    b.do(Enter(table="t2", round=1))
    b.do(Report(table="t2", round=1, stakes=1, hits=[Hit("minor", "bob", "w2", 1)]))
    assert b.paid("ann") == 500100  # 500,010 rounded up
    assert b.paid("bob") == 500100  # 500,000 + 10: a full jackpot again, not the reset amount
    assert [e.reset_amount for e in b.events if isinstance(e, JackpotWon)] == [False, False]


def test_refused_pool_commands_change_nothing():
    b = Books()
    b.do(Enter(table="t1", round=1))
    before = msgspec.msgpack.encode(b.pool.state)
    for cmd, code in [
        (Enter(table="t1", round=1), "already_entered"),
        (Report(table="t1", round=2, stakes=1), "not_entered"),
        (Report(table="t1", round=1, stakes=1, hits=[Hit("mega", "a", "w", 1)]), "bad_report"),
        (Report(table="t1", round=1, stakes=0, hits=[Hit("minor", "a", "w", 1)]), "bad_report"),
    ]:
        with pytest.raises(GameError) as exc:
            b.pool.handle(cmd, SERVER)
        assert exc.value.code == code
        assert msgspec.msgpack.encode(b.pool.state) == before
    closed = JackpotPool(CFG)
    with pytest.raises(GameError) as exc:
        closed.handle(Enter(table="t1", round=1), SERVER)
    assert exc.value.code == "jackpot_closed"
    for who in (Actor("c1", "croupier"), Actor("p1")):  # only the server forwards its tables' rounds
        with pytest.raises(GameError) as exc:
            b.pool.handle(Enter(table="t1", round=9), who)
        assert exc.value.code == "forbidden"
        assert msgspec.msgpack.encode(b.pool.state) == before


def test_pool_state_round_trips():
    b = Books()
    b.do(Enter(table="t1", round=1))
    b.do(Enter(table="t2", round=1))
    b.do(Report(table="t2", round=1, stakes=2))
    data = msgspec.msgpack.encode(b.pool.state)
    again = JackpotPool.from_state(msgspec.msgpack.decode(data, type=PoolState))
    ev1 = b.pool.handle(Report(table="t1", round=1, stakes=1, hits=[Hit("major", "a", "w", 1)]), SERVER)
    ev2 = again.handle(Report(table="t1", round=1, stakes=1, hits=[Hit("major", "a", "w", 1)]), SERVER)
    assert ev1 == ev2 and b.pool.meters == again.meters


report = st.tuples(
    st.integers(0, 4),  # stakes
    st.lists(st.tuples(st.sampled_from(["minor", "major"]), st.sampled_from(["ann", "bob", "cy"])), max_size=3),
)


@settings(max_examples=40, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(["t1", "t2", "t3"]), report), min_size=1, max_size=8), st.randoms())
def test_money_is_conserved_and_each_jackpot_account_holds_its_meter(rounds, rnd):
    """Rounds of three linked tables enter in one order and report in another."""
    b = Books(tables=("t1", "t2", "t3"))
    entered = []
    for i, (table, (stakes, hits)) in enumerate(rounds):
        b.do(Enter(table=table, round=i))
        entered.append((table, i, stakes, hits))
    rnd.shuffle(entered)
    for table, i, stakes, hits in entered:
        hs = [Hit(lv, p, f"{table}-{i}-{k}", 1) for k, (lv, p) in enumerate(hits)]
        b.do(Report(table=table, round=i, stakes=max(stakes, len(hs)), hits=hs))
    assert b.pool.view().waiting == 0
    assert b.ledger.check() == []  # every currency sums to zero, nothing overdrawn
    assert (b.balance("minor"), b.balance("major")) == b.pool.meters
    for lv, cfg in (("minor", CFG.minor), ("major", CFG.major)):
        assert b.pool.meters[("minor", "major").index(lv)] >= cfg.seed
