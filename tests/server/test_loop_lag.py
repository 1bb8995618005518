"""The event loop's lag and the garbage collector's pauses (``casino_event_loop_lag_seconds``,
``casino_gc_pause_seconds``): a loop held by synchronous work is seen as a late tick, each
collection as a pause of its generation."""

from __future__ import annotations

import asyncio
import time

from prometheus_client import REGISTRY

from server import metrics


def _later_than(bound: str) -> float:
    """Ticks observed later than ``bound`` seconds so far."""
    name = "casino_event_loop_lag_seconds"
    total = REGISTRY.get_sample_value(f"{name}_count") or 0.0
    return total - (REGISTRY.get_sample_value(f"{name}_bucket", {"le": bound}) or 0.0)


async def test_a_held_loop_is_observed_as_late_as_it_was_held():
    before, late_before = _later_than("0.25"), _later_than("2.5")
    chore = asyncio.create_task(metrics.keep_timing_the_loop(0.01))
    try:
        await asyncio.sleep(0.05)  # ticking
        time.sleep(0.4)  # noqa: ASYNC251  (the point: the loop held, as a long synchronous stretch holds it)
        await asyncio.sleep(0.05)  # the tick due meanwhile ran at least 0.39 s late
    finally:
        chore.cancel()
    assert _later_than("0.25") - before >= 1
    assert _later_than("2.5") - late_before == 0  # (in seconds: not the whole run, not milliseconds)


def _pauses(generation: str) -> float:
    return REGISTRY.get_sample_value("casino_gc_pause_seconds_count", {"generation": generation}) or 0.0


def test_each_collection_is_timed_by_its_generation_while_watched():
    import gc

    was_enabled = gc.isenabled()
    gc.disable()  # (no automatic collection in between: only the test's own are counted)
    try:
        before = [_pauses(g) for g in "012"]
        timer = metrics.watch_gc()
        try:
            gc.collect()  # the whole heap
            gc.collect(0)
        finally:
            metrics.unwatch_gc(timer)
        gc.collect()  # no longer watched
        metrics.fold_gc_pauses()  # (the loop's chore does it every tick)
        assert [_pauses(g) - b for g, b in zip("012", before, strict=True)] == [1, 0, 1]
        assert timer not in gc.callbacks
    finally:
        if was_enabled:
            gc.enable()
