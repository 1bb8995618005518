"""The crowd benchmark's small form, as CI runs it: one live wheel, 200 players (one socket
each, over two driver processes) placing 5 straight bets each at random times in a 5 s
betting window, then the croupier's launch, rien ne va plus and number. Every bet must be
acknowledged, none refused, the settlement must reach every player and the ledger check be
clean. Nothing here is about speed (the full size and its figures: BENCHMARKS.md)."""

from __future__ import annotations

import argparse
import asyncio

import pytest

from loadtest.bench_server import BENCH_ENV, bench_crowd
from loadtest.server_process import LoadServer

pytestmark = pytest.mark.slow


@pytest.mark.parametrize("crowd_table", [False, True], ids=["ordinary", "crowd-table"])
def test_every_bet_of_a_crowd_at_one_wheel_is_acked_and_settled(pg_url, tmp_path, crowd_table):
    """At an ordinary table, and at a crowd table (each player his share: server.crowd)."""
    a = argparse.Namespace(players=200, bets=5, window=5.0, procs=2, crowd_table=crowd_table)
    with LoadServer(pg_url, env=BENCH_ENV, log_path=tmp_path / "server.log") as srv:
        r = asyncio.run(bench_crowd(srv, a))
        log = srv.log()
    bets, settled = r["bets"], r["settlement"]
    assert r["connected"] == 200, log[-3000:]
    assert bets["scheduled"] == bets["sent"] == bets["acked"] == 1000, (bets, log[-3000:])
    assert bets["refused"] == {}
    assert bets["unanswered"] == 0
    assert (settled["sockets"], settled["missing"], settled["closed"]) == (200, 0, 0)
    assert r["ledger_problems"] == []


def test_the_locust_crowd_runs_without_failures(pg_url, tmp_path):
    """``loadtest.run --crowd``: 20 players and the croupier at one wheel, 3 s windows."""
    from loadtest.run import run_load

    s = run_load(users=21, spawn_rate=21, run_time=15, database_url=pg_url, out_dir=tmp_path, quiet=True,
                 crowd=(5, 3.0))
    assert s["failures"] == 0, (tmp_path / "locust_failures.csv").read_text()
    assert s["exit_code"] == 0, (tmp_path / "locust.log").read_text()[-3000:]
    assert s["ledger_problems"] == []
    done = {(r["type"], r["name"]): r["requests"] for r in s["rows"]}
    assert done.get(("WS", "crowd plein"), 0) >= 100, sorted(done)
    assert done.get(("EVENT", "spin_settled"), 0) > 0, sorted(done)
