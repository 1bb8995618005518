"""The shoe: shuffling with a handed RNG, commitment, cut bounds, live-card checks."""

from __future__ import annotations

import hashlib

from blackjack.cards import full_shoe
from blackjack.profiles import Profile
from games.errors import GameError
from games.rng import Rng, shuffled


def shuffle_order(profile: Profile, rng: Rng) -> list[int]:
    """Fisher–Yates over the whole shoe with the server's RNG (games.rng.shuffled)."""
    return shuffled(full_shoe(profile.decks), rng)


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


def cut_bounds(profile: Profile, cards: int) -> tuple[int, int]:
    return profile.cut_margin, cards - profile.cut_margin


def cut(order: list[int], at: int) -> list[int]:
    """A cut moves the top ``at`` cards under the rest."""
    return order[at:] + order[:at]


def fresh_counts(profile: Profile) -> list[int]:
    return [profile.decks] * 52
