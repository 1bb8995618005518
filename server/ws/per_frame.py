"""Work done once per published frame, not once per socket it goes to.

A frame published on a table's channel reaches every subscriber in this process as the
same bytes object, so what each socket's feed or sender derives from it (its text, its
seqs) is computed for the first socket and reused by the others: a settlement of thousands
of bets is megabytes, sent to thousands of sockets. Results are keyed by the frame's
identity; an entry holds its frame, so an id cannot be reused while it is cached.

The least recently used entry goes first, and a big frame (``big_bytes``) is kept apart
from the small ones, in a few places of its own: a big frame handed out over many turns of
the loop (``server.fanout``) stays while its sockets still ask for it, however many other
tables' frames pass meanwhile. Dropped, it was framed again, and each copy was held by the
transports that had not yet sent it: megabytes each. (More than ``big_size`` big frames
handed out at once in one process, round robin, would miss every time: 16 crowd
settlements at ordinary wheels going out together.)"""

from __future__ import annotations

from collections.abc import Callable
from typing import Generic, TypeVar

T = TypeVar("T")


class PerFrame(Generic[T]):
    """``fn(frame)``, remembered for the last ``size`` frames used of at least ``min_bytes``
    (smaller frames cost less to redo than to cache), and apart from them for the last
    ``big_size`` of at least ``big_bytes``."""

    def __init__(self, fn: Callable[[bytes], T], *, size: int = 32, min_bytes: int = 4096,
                 big_size: int = 16, big_bytes: int = 64 * 1024) -> None:
        self.fn, self.size, self.min_bytes = fn, size, min_bytes
        self.big_size, self.big_bytes = big_size, big_bytes
        self.cache: dict[int, tuple[bytes, T]] = {}
        self.big: dict[int, tuple[bytes, T]] = {}

    def __call__(self, frame: bytes) -> T:
        n = len(frame)
        cache, size = (self.big, self.big_size) if n >= self.big_bytes else (self.cache, self.size)
        key = id(frame)
        hit = cache.pop(key, None)
        if hit is not None and hit[0] is frame:
            cache[key] = hit  # (the most recently used now)
            return hit[1]
        value = self.fn(frame)
        if n >= self.min_bytes:
            if len(cache) >= size:
                del cache[next(iter(cache))]  # the least recently used
            cache[key] = (frame, value)
        return value
