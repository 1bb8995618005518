"""``casino_event_loop_lag_seconds``: a loop held by synchronous work is seen as a late tick."""

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
