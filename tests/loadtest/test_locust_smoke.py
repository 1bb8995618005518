"""The locust smoke run CI executes: a real server subprocess on its own database, the
real locustfile headless for about 20 s, zero failures. Nothing here is about speed."""

from __future__ import annotations

import pytest

from loadtest.run import run_load

pytestmark = pytest.mark.slow


def test_locust_smoke_run_has_no_failures(pg_url, tmp_path):
    s = run_load(users=24, spawn_rate=24, run_time=20, database_url=pg_url, out_dir=tmp_path, quiet=True)
    failures = (tmp_path / "locust_failures.csv").read_text()
    assert s["failures"] == 0, failures
    assert s["exit_code"] == 0, (tmp_path / "locust.log").read_text()[-3000:]
    assert s["ledger_problems"] == []
    done = {(r["type"], r["name"]) for r in s["rows"] if r["requests"] > 0}
    # Every kind of user really played: players' commands, the croupier's wheel, observers'
    # pings, and table events timed on delivery.
    for entry in [("HTTP", "POST /auth/login"), ("WS", "connect"), ("WS", "subscribe"), ("WS", "roulette plein"),
                  ("WS", "blackjack bet box"), ("WS", "croupier roulette open_spin"),
                  ("WS", "croupier roulette result"), ("WS", "croupier blackjack close_bets"),
                  ("WS", "croupier blackjack card"), ("WS", "ping"), ("EVENT", "wager_placed"),
                  ("EVENT", "spin_settled")]:
        assert entry in done, f"no {entry} in {sorted(done)}"
    assert s["requests"] > 500
