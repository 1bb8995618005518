"""Game kinds: what the server needs to know about each engine, behind one interface.

Each kind registers itself in ``KINDS`` when its engine package imports; a game whose
engine is not part of the build is simply not offered.
"""

from __future__ import annotations

import importlib
import logging

from server.kinds.base import GameKind, TableInfo, Timer

KINDS: dict[str, GameKind] = {}

for _module in ("server.kinds.roulette", "server.kinds.blackjack", "server.kinds.tournament"):
    try:
        _kind = importlib.import_module(_module).KIND
    except ImportError as exc:  # the engine is not part of this build
        logging.getLogger("casino").warning("game %s not available: %s", _module, exc)
        continue
    KINDS[_kind.name] = _kind


def kind(name: str) -> GameKind:
    from games.errors import GameError

    try:
        return KINDS[name]
    except KeyError:
        raise GameError("unknown_game", f"No game {name!r} on this server.") from None


__all__ = ["GameKind", "TableInfo", "Timer", "KINDS", "kind"]
