"""Lugano tables dealt from rigged shoes, and a way to refuse a command and check that
nothing changed.

Dealing order with two boxes (no hole card): box 1, box 2, dealer, box 1, box 2, then
every card asked for, then the dealer's. Stakes are 1000 (CHF 10.00) unless said otherwise.
"""

from __future__ import annotations

import msgspec
import pytest

from blackjack import commands as C
from blackjack.profiles import builtin
from blackjack.rig import rigged_shoe
from blackjack.table import BlackjackTable
from games.errors import GameError
from games.wagers import WagerPlaced, WagerSettled, WagerVoided

CROUPIER = dict(by="c1", role="croupier")


def free_bet_profile():
    return msgspec.structs.replace(builtin("lugano"), name="lugano-free-bet", free_bet=True)


class Harness:
    def __init__(self, profile, cards, min_bet=1000, max_bet=10000, table_id="t", live=False):
        self.profile = profile
        self.t = BlackjackTable(table_id, profile, min_bet=min_bet, max_bet=max_bet, live=live)
        self.events: list = []
        if live:  # the cards are entered one by one (``Card``)
            self.do(C.Shuffle(**CROUPIER))
            self.do(C.Cut(**CROUPIER, at=profile.cut_margin))
            return
        order, at = rigged_shoe(profile, cards)
        self.do(C.Shuffle(**CROUPIER, order=order))
        self.do(C.Cut(**CROUPIER, at=at))

    @property
    def s(self):
        return self.t.state

    def do(self, cmd):
        ev = self.t.handle(cmd)
        self.events += ev
        return ev

    def bet(self, player, box, amount=1000):
        return self.do(C.PlaceBet(by=player, box=box, amount=amount))

    def side(self, player, box, bet, amount=500, **kw):
        return self.do(C.PlaceSideBet(by=player, box=box, bet=bet, amount=amount, **kw))

    def close(self):
        return self.do(C.CloseBets(**CROUPIER))

    def act(self, player, cls, box, hand=0):
        return self.do(cls(by=player, box=box, hand=hand))

    def settled(self) -> list[WagerSettled]:
        return [e for e in self.events if isinstance(e, WagerSettled)]

    def settled_kind(self, spot_word: str) -> list[WagerSettled]:
        """Settlements of the wagers whose placing spot mentions ``spot_word``."""
        ids = {e.wager for e in self.events if isinstance(e, WagerPlaced) and spot_word in e.spot}
        return [e for e in self.settled() if e.wager in ids]

    def voided(self) -> list[WagerVoided]:
        return [e for e in self.events if isinstance(e, WagerVoided)]

    def net(self, player) -> int:
        return sum(e.returned + e.won - e.stake for e in self.settled() if e.player == player)

    def of(self, cls):
        return [e for e in self.events if isinstance(e, cls)]

    def snapshot(self) -> bytes:
        return msgspec.msgpack.encode(self.t.state)

    def refused(self, cmd, code):
        before = self.snapshot()
        with pytest.raises(GameError) as exc:
            self.t.handle(cmd)
        assert exc.value.code == code, exc.value
        assert self.snapshot() == before  # nothing changed


@pytest.fixture
def table():
    def make(profile="lugano", cards="", **kw):
        p = builtin(profile) if isinstance(profile, str) else profile
        return Harness(p, cards, **kw)

    return make
