"""Provably fair RNG spins: the number is fixed before the bets, and anyone can check it after.

When an RNG wheel opens a spin, the server draws a fresh secret ``seed`` (32 bytes from the
system CSPRNG, ``server.kinds.roulette``) and the table publishes only its ``commitment``,
``sha256(seed)``. The spin's number is then no longer a choice: it is ``spin_number(seed,
table, spin)``, derived with HMAC-SHA256 keyed by the seed and scaled to 0-36 by rejection
sampling. The result reveals the seed, so a player (``casino verify``) checks that
``sha256(seed)`` is the commitment he saw before he bet and recomputes the number.

Why the commitment gives nothing away: it is the hash of 256 random bits, and the number
depends on the seed itself (through HMAC), never on the commitment; guessing the number from
the commitment is guessing a pocket (1 in 37) unless SHA-256 can be inverted.

>>> seed = "00" * 32
>>> commitment(seed)[:16]
'66687aadf862bd77'
>>> spin_number(seed, "campione-roulette-1", 7)
13
>>> verify(commitment(seed), seed, "campione-roulette-1", 7, 13)
True
"""

from __future__ import annotations

import hashlib
import hmac

POCKETS = 37
SEED_BYTES = 32
# The largest multiple of 37 that fits 32 bits: a draw at or above it is thrown away and the
# next block is read, so each pocket keeps exactly LIMIT / 37 of the values (no modulo bias).
LIMIT = (1 << 32) - (1 << 32) % POCKETS


def is_seed(seed: str) -> bool:
    """A seed as the server draws it: 64 lowercase hex digits."""
    return len(seed) == 2 * SEED_BYTES and all(ch in "0123456789abcdef" for ch in seed)


def commitment(seed: str) -> str:
    """What the table publishes when the spin opens: sha256 of the seed's bytes, hex."""
    return hashlib.sha256(bytes.fromhex(seed)).hexdigest()


def spin_number(seed: str, table: str, spin: int) -> int:
    """The spin's pocket: HMAC-SHA256(seed, "<table>:<spin>:<block>") read 4 bytes at a time,
    big-endian, the first value below LIMIT taken mod 37 (rejection sampling: unbiased)."""
    key = bytes.fromhex(seed)
    block = 0
    while True:
        digest = hmac.new(key, f"{table}:{spin}:{block}".encode(), hashlib.sha256).digest()
        for i in range(0, len(digest), 4):
            value = int.from_bytes(digest[i:i + 4], "big")
            if value < LIMIT:
                return value % POCKETS
        block += 1  # (all eight values rejected: about once in 10^68 spins)


def verify(committed: str, seed: str, table: str, spin: int, number: int) -> bool:
    """Whether a revealed spin is what was committed: the seed hashes to the commitment
    published before the bets, and the number is the one it gives."""
    return is_seed(seed) and hmac.compare_digest(commitment(seed), committed) and \
        spin_number(seed, table, spin) == number
