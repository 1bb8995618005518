"""The one command contract of every game engine.

A command is what someone asks a table to do; the ``Actor`` is who asks. They travel
apart: the server decodes a command from the client's JSON with the game's typed decoder
(a client never says who he is), takes the actor from the authenticated token, and calls
``engine.handle(command, actor)``. The engine checks what that actor's role may do at the
table (seat ownership, phase, whose chips).

One role vocabulary for every game:

* ``player``: an online player, acting only for himself;
* ``croupier``, ``chef``, ``director``: table staff at the console (the server has already
  checked they are assigned to the table where the house requires it);
* ``system``: the server itself (a timer running out, a seat released, recovery after a
  crash); it may only do what the rules let the house do without a person.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Literal

import msgspec

from games.errors import GameError
from games.validation import Name, validated

Role = Literal["player", "croupier", "chef", "director", "system", "cashier"]
# Who acts at the tables. The cashier acts only towards a tournament (registering a player
# who pays at the desk, ``blackjack.tournament``), never at a table: not listed here.
ROLES: tuple[Role, ...] = ("player", "croupier", "chef", "director", "system")
STAFF: frozenset[str] = frozenset(("croupier", "chef", "director"))


class Actor(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """Who issues a command: a player's login (never a floor id, ``games.players``) or a
    member of staff, or the server (``system``), with the role they act in."""

    id: Name
    role: Role = "player"

    @property
    def is_staff(self) -> bool:
        return self.role in STAFF


@functools.lru_cache(maxsize=4096)
def _valid_actor(actor: Actor) -> Actor:
    return validated(actor)


def checked_actor(actor: Actor, check: Callable[[Actor], Actor] = validated) -> Actor:
    """``check(actor)``: the actor with every field within its bounds, remembered for the
    valid ones (the same players and staff send every command, and each check is a msgspec
    round trip of about a µs that a table paid twice a bet: its committed engine applies
    each command again). ``check`` accepts what ``validated`` accepts (it may refuse in its
    own words). Only plain strings are looked up: the cache finds an equal actor, and an
    equal str subclass is not one ``check`` would accept. Anything else, and an invalid
    actor, gets ``check``'s own answer each time."""
    who: object = actor.id  # (typed as what may come in, not as what the struct declares)
    role: object = actor.role
    if type(who) is str and type(role) is str:
        try:
            return _valid_actor(actor)
        except GameError:
            pass
    return check(actor)


class Command(msgspec.Struct, frozen=True, kw_only=True, tag_field="type", forbid_unknown_fields=True):
    """Base of every game command: frozen, keyword-only, tagged by ``type`` on the wire,
    and an unknown field is refused rather than silently dropped (a typo must not turn a
    bet into another). Subclasses set ``tag=``."""
