"""Which live process should serve a table: rendezvous (highest random weight) hashing.

Every process computes the same answer from the same list of live processes, with no
coordination: each table goes to the process whose hash with it is highest. When a
process joins or leaves, only the tables it wins or held move (about 1/N of them), not a
reshuffle of the floor.

>>> preferred("table-1", ["a", "b", "c"]) == preferred("table-1", ["c", "b", "a"])
True
>>> preferred("t", []) is None
True
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable


def weight(table: str, owner: str) -> int:
    return int.from_bytes(hashlib.blake2b(f"{table}\0{owner}".encode(), digest_size=8).digest(), "big")


def preferred(table: str, live: Iterable[str]) -> str | None:
    """The live process that should serve ``table`` (None when none is live)."""
    return max(live, key=lambda owner: weight(table, owner), default=None)
