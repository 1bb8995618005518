"""Wager events -> ledger operations: whose account each movement touches."""

from __future__ import annotations

from games.ledger.model import Hold, Post, Transfer, Void
from games.wagers import WagerPlaced, WagerRefunded, WagerSettled
from server.money import TableAccounts, ops_for


def test_a_floor_players_chips_are_the_tables_floor_account_never_a_wallet():
    ops = ops_for(TableAccounts("t1", "CHF"), [WagerPlaced("w1", "floor:blue", 1_000, "rouge"),
                                WagerSettled("w1", "floor:blue", 1_000, 1_000, 1_000, "win"),
                                WagerPlaced("w2", "floor:blue", 500, "noir"),
                                WagerSettled("w2", "floor:blue", 500, 0, 0, "lose")])
    assert ops == [
        Hold("t1/w1/hold", "floor:t1:CHF", "bank:t1:CHF", 1_000, "bet", ref="t1/w1"),
        Void("t1/w1/void", "t1/w1/hold", "returned"),
        Transfer("t1/w1/win", "bank:t1:CHF", "floor:t1:CHF", 1_000, "win", ref="t1/w1"),
        Hold("t1/w2/hold", "floor:t1:CHF", "bank:t1:CHF", 500, "bet", ref="t1/w2"),
        Post("t1/w2/post", "t1/w2/hold", 500, "lost"),
    ]
    assert ops_for(TableAccounts("t1", "CHF"), [WagerPlaced("w2", "ann", 500)])[0].debit == "wallet:ann:CHF"


def test_a_refund_gives_back_what_the_bank_kept_once():
    """Titano Art. 7: a bust of an annulled round comes back from the bank (its own id, so a
    replay after a crash pays nothing twice)."""
    [op] = ops_for(TableAccounts("t1", "EUR"), [WagerRefunded("w3", "ann", 2_000, "the shoe ran short")])
    assert op == Transfer("t1/w3/refund", "bank:t1:EUR", "wallet:ann:EUR", 2_000, "refund", ref="t1/w3")


def test_a_floor_players_jackpot_is_paid_to_the_tables_floor_account():
    """The linked pool pays its winner where his chips are: a floor player has no wallet."""
    from blackjack.jackpot_pool import JackpotPaid
    from server.money import jackpot_transfers as transfers

    paid = JackpotPaid(jackpot="b7", level="minor", table="t1", round=4, player="floor:blue", wager="w9",
                       amount=500_000)
    [op] = transfers([paid], "CHF")
    assert (op.debit, op.credit, op.amount) == ("jackpot:b7-minor:CHF", "floor:t1:CHF", 500_000)
