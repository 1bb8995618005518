"""A shoe of playing cards (``games.cards``), for any card game: shuffling with a handed
RNG, the commitment published before play, cutting, and a rigged shoe for tests, croupier
training and replaying a disputed round.

The house's shoe rules come from the game's profile (any object with the ``ShoeRules``
attributes), so this module knows no game.
"""

from __future__ import annotations

import hashlib
from typing import Protocol

from games.cards import RANKS, full_shoe, parse_card
from games.errors import GameError
from games.rng import Rng, shuffled


class ShoeRules(Protocol):
    """What a house says about its shoe."""

    @property
    def decks(self) -> int: ...

    @property
    def cut_margin(self) -> int:
        """Cards the cut must leave on each side."""

    @property
    def burn_cards(self) -> int:
        """Cards burned after the cut."""


def shuffle_order(rules: ShoeRules, rng: Rng) -> list[int]:
    """Fisher–Yates over the whole shoe with the server's RNG (games.rng.shuffled)."""
    return shuffled(full_shoe(rules.decks), rng)


def commitment(order: list[int], salt: str = "") -> str:
    """sha256 of the salt and the order: published before play, checkable once both are
    revealed. The salt (random, from the server) keeps the unseen rest of the shoe from
    being found by hashing every arrangement of the few cards left near its end."""
    return hashlib.sha256(salt.encode() + bytes(order)).hexdigest()


def check_order(order: list[int], expected: list[int]) -> None:
    """The order must be a permutation of exactly the cards expected."""
    if sorted(order) != sorted(expected):
        raise GameError(
            "bad_shuffle",
            f"The shuffled shoe must hold exactly the {len(expected)} cards expected "
            f"(got {len(order)} that do not match).",
        )


def cut_bounds(rules: ShoeRules, cards: int) -> tuple[int, int]:
    return rules.cut_margin, cards - rules.cut_margin


def cut(order: list[int], at: int) -> list[int]:
    """A cut moves the top ``at`` cards under the rest."""
    return order[at:] + order[:at]


def fresh_counts(rules: ShoeRules) -> list[int]:
    """How many of each card int a full shoe holds (a live table counts what is unseen)."""
    return [rules.decks] * 52


# -- a rigged shoe ----------------------------------------------------------------------------


def _rigged_card(spec: int | str, left: list[int]) -> int:
    if isinstance(spec, int):
        return spec
    t = spec.strip().upper()
    if t in RANKS:  # a rank alone: any suit still in the shoe
        r = RANKS.index(t)
        for s in range(4):
            if left[s * 13 + r]:
                return s * 13 + r
        raise ValueError(f"no {spec} left in the shoe")
    return parse_card(t)


def rigged_shoe(rules: ShoeRules, cards: list[int | str] | str, cut_at: int | None = None) -> tuple[list[int], int]:
    """A shuffle order and a cut point such that, once cut and burned, the shoe deals
    ``cards`` in that order (then the rest)."""
    specs: list[int | str] = list(cards.split()) if isinstance(cards, str) else cards
    left = [rules.decks] * 52
    wanted: list[int] = []
    for spec in specs:
        c = _rigged_card(spec, left)
        if left[c] <= 0:
            raise ValueError(f"the shoe holds only {rules.decks} of card {c}")
        left[c] -= 1
        wanted.append(c)
    rest = full_shoe(rules.decks)
    for c in wanted:
        rest.remove(c)
    burn, rest = rest[: rules.burn_cards], rest[rules.burn_cards :]
    after_cut = burn + wanted + rest
    at = rules.cut_margin if cut_at is None else cut_at
    # The cut moves the top ``at`` cards under the rest; undo it.
    order = after_cut[-at:] + after_cut[:-at]
    return order, at
