"""The server's side of an RNG card shoe, for any card game: the shuffle and the cut drawn
with the system RNG, and the shoe's secret.

At the shuffle the engine publishes a commitment (``games.shoe.commitment``: sha256 of a
fresh salt and the order) while the order and the salt stay here, saved beside the engine
state and never sent to anyone. When the shoe is over (or replaced mid-round) the server
reveals them (``ShoeRevealed``), so anyone can check that the cards dealt were the cards
committed to before the cut.
"""

from __future__ import annotations

import secrets

import msgspec

from games.cards import full_shoe
from games.rng import SystemRng, shuffled
from games.shoe import ShoeRules, commitment, cut_bounds

_rng = SystemRng()


class ShoeRevealed(msgspec.Struct, frozen=True, kw_only=True, tag_field="type", tag="shoe_revealed"):
    """The server's event once a shoe is over: the order it committed to at the shuffle (before
    the cut) and the salt, so anyone can check ``sha256(salt ‖ bytes(order)) == commitment``."""

    commitment: str
    salt: str
    order: list[int]


class ShoeSecret(msgspec.Struct, frozen=True):
    """What the commitment of the shoe in play hides until its end."""

    commitment: str
    salt: str
    order: list[int]


def new_shoe(rules: ShoeRules, on_table: list[int] | None = None) -> ShoeSecret:
    """A freshly shuffled shoe with a fresh salt: the whole shoe, or (a mid-round reshuffle)
    every card but those ``on_table``."""
    order = full_shoe(rules.decks)
    for c in on_table or []:
        order.remove(c)
    order = shuffled(order, _rng)
    salt = secrets.token_hex(16)  # per shoe: the commitment hides the order until the reveal
    return ShoeSecret(commitment(order, salt), salt, order)


def random_cut(rules: ShoeRules, cards: int) -> int:
    """Where the house cuts a shoe of ``cards`` cards when nobody chooses."""
    lo, hi = cut_bounds(rules, cards)
    return lo + _rng.randbelow(hi - lo + 1)


def revealed(secret: ShoeSecret | None) -> list[ShoeRevealed]:
    """The reveal of a shoe that is over (none if the server kept no secret for it)."""
    if secret is None:
        return []
    return [ShoeRevealed(commitment=secret.commitment, salt=secret.salt, order=secret.order)]
