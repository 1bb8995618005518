"""The contract between a pure rule engine and the server that drives it.

Modelled on h11 / python-chess: the engine is a state machine object.

* ``handle(command) -> list[event]``: commands and events are msgspec Structs
  (tagged unions per game). An illegal command raises ``GameError`` and leaves the
  state exactly as it was (validate first, then mutate).
* No I/O, no clock, no randomness: time-outs, RNG draws and card/number entry
  arrive as commands; whoever issues a command (player id, croupier, chef) is a
  field of the command, and the engine checks what that role may do at the table
  level of the rules (seat ownership, phase). Authentication stays in the server.
* ``state`` is a msgspec Struct: ``engine.state`` encodes with msgspec and
  ``Engine.from_state(state)`` rebuilds an identical engine, so the server can
  persist it atomically with the ledger transfers and resume after a crash.
* ``view(viewer)`` returns what a given viewer may see (a hole card is nobody's
  until shown).
* Money leaves the engine only as ``games.wagers`` events.
"""

from __future__ import annotations

from typing import Any, Protocol, Self


class Engine(Protocol):
    state: Any

    @classmethod
    def from_state(cls, state: Any) -> Self: ...

    def handle(self, command: Any) -> list[Any]: ...

    def view(self, viewer: str | None) -> Any: ...
