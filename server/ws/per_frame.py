"""Work done once per published frame, not once per socket it goes to.

A frame published on a table's channel reaches every subscriber in this process as the
same bytes object, so what each socket's feed or sender derives from it (its text, its
seqs) is computed for the first socket and reused by the others: a settlement of thousands
of bets is megabytes, sent to thousands of sockets. Results are keyed by the frame's
identity; an entry holds its frame, so an id cannot be reused while it is cached.

The least recently used entry goes first: a big frame handed out over many turns of the
loop (``server.fanout``) stays while its sockets still ask for it, however many other
tables' frames pass meanwhile (dropped first in, first out, it was framed again, and each
copy held by the transports that had not yet sent it)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Generic, TypeVar

T = TypeVar("T")


class PerFrame(Generic[T]):
    """``fn(frame)``, remembered for the last ``size`` frames of at least ``min_bytes``
    (smaller frames cost less to redo than to cache)."""

    def __init__(self, fn: Callable[[bytes], T], *, size: int = 32, min_bytes: int = 4096) -> None:
        self.fn, self.size, self.min_bytes = fn, size, min_bytes
        self.cache: dict[int, tuple[bytes, T]] = {}

    def __call__(self, frame: bytes) -> T:
        cache, key = self.cache, id(frame)
        hit = cache.pop(key, None)
        if hit is not None and hit[0] is frame:
            cache[key] = hit  # (the most recently used now)
            return hit[1]
        value = self.fn(frame)
        if len(frame) >= self.min_bytes:
            if len(cache) >= self.size:
                del cache[next(iter(cache))]  # the least recently used
            cache[key] = (frame, value)
        return value
