"""The broker benchmark runs: both parsers read every message off a real Redis, and the
embedded Redis it started is stopped again."""

from __future__ import annotations

import re
import shutil

import pytest

from loadtest import bench_broker

pytestmark = pytest.mark.skipif(shutil.which("redis-server") is None, reason="redis-server is not installed")


def test_both_parsers_are_measured_and_the_broker_stopped(capsys, monkeypatch) -> None:
    started: list = []
    start = bench_broker.redis_embedded.start_redis

    def start_recorded(folder):
        started.append(folder)
        return start(folder)

    monkeypatch.setattr(bench_broker.redis_embedded, "start_redis", start_recorded)
    assert bench_broker.main(["--messages", "2000", "--sizes", "300", "--rounds", "1"]) == 0
    out = capsys.readouterr().out
    assert re.search(r"300 B: hiredis \d+\.\d µs, redis-py \d+\.\d µs \(best of each: \d\.\d\d ×\)", out), out
    assert not bench_broker.redis_embedded.status(started[0]).running
    assert not started[0].parent.exists()
