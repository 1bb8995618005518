"""A blackjack table dealt from a rigged shoe, with helpers to read what happened.

Shared by tests/blackjack and tests/blackjack_lugano (on the path via pytest's ``pythonpath``).
"""

from __future__ import annotations

import msgspec
import pytest

from blackjack import commands as C
from blackjack.rig import rigged_shoe
from blackjack.table import BlackjackTable
from games.errors import GameError
from games.wagers import WagerPlaced, WagerSettled, WagerVoided

CROUPIER = dict(by="c1", role="croupier")


class Harness:
    """A table plus small helpers for reading what happened."""

    def __init__(self, profile, cards, min_bet=1000, max_bet=10000, live=False, cut_at=None, table_id="t"):
        self.profile = profile
        self.t = BlackjackTable(table_id, profile, min_bet=min_bet, max_bet=max_bet, live=live)
        self.events: list = []
        if live:
            self.do(C.Shuffle(**CROUPIER))
            self.do(C.Cut(**CROUPIER, at=profile.cut_margin))
        else:
            order, at = rigged_shoe(profile, cards, cut_at)
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

    def close(self):
        return self.do(C.CloseBets(**CROUPIER))

    def act(self, player, cls, box, hand=0):
        return self.do(cls(by=player, box=box, hand=hand))

    def settled(self) -> dict[str, WagerSettled]:
        return {e.wager: e for e in self.events if isinstance(e, WagerSettled)}

    def placed(self) -> dict[str, WagerPlaced]:
        return {e.wager: e for e in self.events if isinstance(e, WagerPlaced)}

    def voided(self) -> dict[str, WagerVoided]:
        return {e.wager: e for e in self.events if isinstance(e, WagerVoided)}

    def net(self, player) -> int:
        return sum(
            e.returned + e.won - e.stake for e in self.events if isinstance(e, WagerSettled) and e.player == player
        )

    def of(self, cls):
        return [e for e in self.events if isinstance(e, cls)]

    def snapshot(self) -> bytes:
        return msgspec.msgpack.encode(self.t.state)

    def refused(self, cmd, code):
        """Assert ``cmd`` is refused with ``code`` and leaves the state byte-identical."""
        before = self.snapshot()
        with pytest.raises(GameError) as exc:
            self.t.handle(cmd)
        assert exc.value.code == code, exc.value
        assert self.snapshot() == before


def stand_all(h: Harness) -> None:
    """Close any offers and stand every hand left, each by its holder, to the round's end."""
    while h.s.phase in ("play", "offers"):
        if h.s.phase == "offers":
            h.do(C.CloseOffers(**CROUPIER))
            continue
        b = h.s.boxes[h.s.turn_box]
        h.do(C.Stand(by=b.holder, box=b.number, hand=h.s.turn_hand))
