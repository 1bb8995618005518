"""Run a pure, chunked computation on every core and time it.

The shell around engine simulations: engines and their players stay free of processes
and clocks; this module owns both. Chunks must be independent and deterministic (each
seeds its own RNG), so the result does not depend on how many processes ran it.
"""

from __future__ import annotations

import multiprocessing
import time
from collections.abc import Callable, Iterator
from typing import TypeVar

J = TypeVar("J")
R = TypeVar("R")


def run_chunks(work: Callable[[J], R], jobs: list[J], workers: int | None = None) -> Iterator[R]:
    """Yield ``work(job)`` for every job, in completion order, over ``workers`` processes
    (default: every core). ``work`` must be a module-level function (it is pickled)."""
    workers = workers or multiprocessing.cpu_count()
    if workers == 1 or len(jobs) <= 1:
        yield from map(work, jobs)
        return
    with multiprocessing.get_context("fork").Pool(workers) as pool:
        yield from pool.imap_unordered(work, jobs)


class Stopwatch:
    """Wall-clock seconds since it was made."""

    def __init__(self) -> None:
        self._t0 = time.perf_counter()

    @property
    def seconds(self) -> float:
        return time.perf_counter() - self._t0
