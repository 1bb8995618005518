"""The winning number on an RNG table: one unbiased draw from the randomness handed in."""

from __future__ import annotations

from games.rng import Rng

POCKETS = 37


def draw_number(rng: Rng) -> int:
    """A pocket 0-36, each with probability 1/37.

    ``randbelow`` is uniform on [0, 37) by contract (rejection sampling), and pocket k is
    the draw k, so the mapping is a bijection and adds no bias (never ``bits % 37``).
    """
    n = rng.randbelow(POCKETS)
    if type(n) is not int or not 0 <= n < POCKETS:
        raise ValueError(f"rng.randbelow(37) returned {n!r}")
    return n
