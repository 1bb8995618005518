"""A blackjack table dealt from a rigged shoe, with helpers to read what happened.

Shared by tests/blackjack (and its lugano/ folder) and the server's role matrix.
Commands carry no actor: ``do``, ``refused`` and the engine's ``handle`` take it apart
(``by``: an ``Actor``, or a player's id for that player).
"""

from __future__ import annotations

import msgspec

from blackjack import commands as C
from blackjack.state import TableState
from blackjack.table import BlackjackTable
from games.errors import GameError
from games.shoe import rigged_shoe
from games.wagers import WagerPlaced, WagerSettled, WagerVoided
from helpers.actors import CROUPIER, actor
from helpers.refusals import assert_refused

__all__ = ["CROUPIER", "Harness", "actor", "decode_command", "decode_state", "encode_state", "stand_all"]


class Harness:
    """A table plus small helpers for reading what happened."""

    def __init__(self, profile, cards, min_bet=1000, max_bet=10000, live=False, cut_at=None, table_id="t"):
        self.profile = profile
        self.t = BlackjackTable(table_id, profile, min_bet=min_bet, max_bet=max_bet, live=live)
        self.events: list = []
        if live:
            self.do(C.Shuffle(), by=CROUPIER)
            self.do(C.Cut(at=profile.cut_margin), by=CROUPIER)
        else:
            order, at = rigged_shoe(profile, cards, cut_at)
            self.do(C.Shuffle(order=order), by=CROUPIER)
            self.do(C.Cut(at=at), by=CROUPIER)

    @property
    def s(self):
        return self.t.state

    def do(self, cmd, by):
        ev = self.t.handle(cmd, actor(by))
        self.events += ev
        return ev

    def bet(self, player, box, amount=1000):
        return self.do(C.PlaceBet(box=box, amount=amount), by=player)

    def close(self):
        return self.do(C.CloseBets(), by=CROUPIER)

    def act(self, player, cls, box, hand=0):
        return self.do(cls(box=box, hand=hand), by=player)

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

    def refused(self, cmd, code, by):
        """Assert ``cmd`` from ``by`` is refused with ``code`` and leaves the state byte-identical."""
        assert_refused(self.t, cmd, actor(by), code)


def stand_all(h: Harness) -> None:
    """Close any offers and stand every hand left, each by its holder, to the round's end."""
    while h.s.phase in ("play", "offers"):
        if h.s.phase == "offers":
            h.do(C.CloseOffers(), by=CROUPIER)
            continue
        b = h.s.boxes[h.s.turn_box]
        h.do(C.Stand(box=b.number, hand=h.s.turn_hand), by=b.holder)


# -- what the engine's users do with its values (tests only) ---------------------------------


def encode_state(state: TableState) -> bytes:
    return msgspec.msgpack.encode(state)


def decode_state(data: bytes) -> TableState:
    return msgspec.msgpack.decode(data, type=TableState)


_decoder = msgspec.json.Decoder(C.Command)


def decode_command(data: bytes | str) -> C.Command:
    """Parse a JSON command; a malformed one is a GameError(malformed_command)."""
    try:
        return _decoder.decode(data)
    except (msgspec.ValidationError, msgspec.DecodeError) as exc:
        raise GameError("malformed_command", f"That command could not be read: {exc}.") from None
