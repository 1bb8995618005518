"""Randomness handed to engines.

Engines never create randomness: the server draws from an ``Rng`` and passes the
result (a number, a shuffled order) in a command, so every round replays exactly.
``randbelow`` must be unbiased (rejection sampling, never ``x % n`` on raw bits).
"""

from __future__ import annotations

import random
import secrets
from collections.abc import Sequence
from typing import Protocol, TypeVar

T = TypeVar("T")


class Rng(Protocol):
    def randbelow(self, n: int) -> int:
        """Uniform integer in [0, n)."""
        ...


class SystemRng:
    """Cryptographic RNG from the operating system (live RNG tables)."""

    def randbelow(self, n: int) -> int:
        return secrets.randbelow(n)


class SeededRng:
    """Reproducible RNG for simulations and tests. Never used for live play."""

    def __init__(self, seed: int) -> None:
        self._r = random.Random(seed)

    def randbelow(self, n: int) -> int:
        return self._r.randrange(n)


def shuffled(items: Sequence[T], rng: Rng) -> list[T]:
    """Fisher–Yates: every permutation equally likely given an unbiased ``randbelow``."""
    out = list(items)
    for i in range(len(out) - 1, 0, -1):
        j = rng.randbelow(i + 1)
        out[i], out[j] = out[j], out[i]
    return out
