"""Who issues the commands in the engine tests (``games.commands.Actor``): the same staff,
players and floor players in both games' tests."""

from __future__ import annotations

from games.commands import Actor

CROUPIER = Actor("c1", "croupier")
CHEF = Actor("h1", "chef")
DIRECTOR = Actor("d1", "director")
ANN = Actor("ann")
BOB = Actor("bob")
# Floor players (``games.players``): cash chips at a live felt, entered by staff. As actors
# they exist only to prove the engines refuse them: nobody logs in as a floor player.
FLOOR_ANN = Actor("floor:ann")
FLOOR_BOB = Actor("floor:bob")


def actor(by: Actor | str) -> Actor:
    """``by`` as an actor: a bare id is a player."""
    return by if isinstance(by, Actor) else Actor(by)
