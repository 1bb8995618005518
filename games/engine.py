"""The contract between a pure rule engine and the server that drives it.

Modelled on h11 / python-chess: the engine is a state machine object.

* ``handle(command, actor) -> list[event]``: commands are ``games.commands.Command``
  Structs (one tagged union per game), events are msgspec Structs. The ``Actor`` travels
  apart from the command (``games.commands``): the engine checks what that actor's role
  may do at the table level of the rules (seat ownership, phase, whose chips);
  authentication stays in the server. An illegal command raises ``GameError`` and leaves
  the state exactly as it was (validate first, then mutate).
* No I/O, no clock, no randomness: time-outs, RNG draws and card/number entry arrive as
  commands.
* ``state`` is a msgspec Struct: ``engine.state`` encodes with msgspec and
  ``Engine.from_state(state)`` rebuilds an identical engine, so the server can persist it
  atomically with the ledger transfers and resume after a crash.
* ``view(viewer)`` returns what a given viewer may see (a hole card is nobody's until
  shown).
* Money leaves the engine only as ``games.wagers`` events.

``Engine`` is generic in the game's command, event, state and view types, so a typed
caller keeps them: ``Engine[RouletteCommand, RouletteEvent, RouletteState, TableView]``.
"""

from __future__ import annotations

from typing import Protocol, Self, TypeVar

import msgspec

from games.commands import Actor, Command

__all__ = ["Engine"]

CommandT = TypeVar("CommandT", bound=Command, contravariant=True)
EventT = TypeVar("EventT", bound=msgspec.Struct)
StateT = TypeVar("StateT", bound=msgspec.Struct)
ViewT = TypeVar("ViewT", bound=msgspec.Struct, covariant=True)


class Engine(Protocol[CommandT, EventT, StateT, ViewT]):
    @property
    def state(self) -> StateT:
        """Everything the engine knows; read-only for callers (only ``handle`` changes it)."""
        ...

    @classmethod
    def from_state(cls, state: StateT) -> Self:
        """An engine identical to the one whose ``state`` this was."""
        ...

    def handle(self, command: CommandT, actor: Actor) -> list[EventT]:
        """Apply ``command`` issued by ``actor``: the events it caused, in order.

        :raises GameError: the command is refused; the state is unchanged.
        """
        ...

    def view(self, viewer: str | None) -> ViewT:
        """What ``viewer`` (a player id, or ``None`` for the public) may see."""
        ...
