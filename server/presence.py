"""Who follows a table from this process, and whose seat is due to be released.

A player counts as present while at least one of his sockets is subscribed here; when his
last one goes he is *gone since* that moment, and once he has been gone for the house's
time (``CASINO_SEAT_RELEASE_SECONDS``) the table frees his seat between rounds. A table
that has just started here has nobody connected: every seated player starts out gone
(after a restart or a failover too). The clock is the caller's (the event loop's time)."""

from __future__ import annotations

import asyncio
import collections
from collections.abc import Iterable


class Presence:
    def __init__(self) -> None:
        self.sockets: collections.Counter[str] = collections.Counter()
        self.gone_since: dict[str, float] = {}
        self._releasing: dict[str, asyncio.Future[object]] = {}  # a release queued, not yet answered

    def joined(self, player: str) -> None:
        self.sockets[player] += 1
        self.gone_since.pop(player, None)

    def left(self, player: str, now: float) -> bool:
        """One socket fewer; True when that was his last (he is gone from ``now``)."""
        if self.sockets[player] <= 0:
            return False
        self.sockets[player] -= 1
        if self.sockets[player]:
            return False
        del self.sockets[player]
        self.gone_since[player] = now
        return True

    def all_gone(self, players: Iterable[str], now: float) -> bool:
        """Everyone in ``players`` is gone from ``now``; True if there was anyone."""
        for player in players:
            self.gone_since[player] = now
        return bool(self.gone_since)

    def due(self, seated: set[str], gone_before: float) -> list[str]:
        """The seated players gone since before ``gone_before`` with no release already
        under way. Players no longer seated are forgotten (they left, or were released)."""
        out = []
        for player, since in list(self.gone_since.items()):
            if player not in seated:
                del self.gone_since[player]
            elif since <= gone_before and player not in self._releasing:
                out.append(player)
        return out

    def releasing(self, player: str, answered: asyncio.Future[object]) -> None:
        """A release for ``player`` is queued; none other until ``answered`` is done."""
        self._releasing[player] = answered
        answered.add_done_callback(lambda _: self._releasing.pop(player, None))
