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
from games.wagers import WagerPlaced, WagerSettled, WagerVoided
from helpers.blackjack import Harness as BaseHarness


def free_bet_profile():
    return msgspec.structs.replace(builtin("lugano"), name="lugano-free-bet", free_bet=True)


class Harness(BaseHarness):
    """Lugano helpers: side bets, and settlements read as lists in dealing order."""

    def side(self, player, box, bet, amount=500, **kw):
        return self.do(C.PlaceSideBet(box=box, bet=bet, amount=amount, **kw), by=player)

    def settled(self) -> list[WagerSettled]:
        return [e for e in self.events if isinstance(e, WagerSettled)]

    def settled_kind(self, spot_word: str) -> list[WagerSettled]:
        """Settlements of the wagers whose placing spot mentions ``spot_word``."""
        ids = {e.wager for e in self.events if isinstance(e, WagerPlaced) and spot_word in e.spot}
        return [e for e in self.settled() if e.wager in ids]

    def voided(self) -> list[WagerVoided]:
        return [e for e in self.events if isinstance(e, WagerVoided)]


@pytest.fixture
def table():
    def make(profile="lugano", cards="", **kw):
        p = builtin(profile) if isinstance(profile, str) else profile
        return Harness(p, cards, **kw)

    return make
