"""One command: a server on the embedded PostgreSQL, a floor, a headless locust run, a summary.

    .venv/bin/python -m loadtest.run [--users 60] [--spawn-rate 20] [--run-time 60]
    .venv/bin/python -m loadtest.run --crowd [--users 101] [--bets 5] [--window 15]

Starts ``casino serve`` on 127.0.0.1 with a fresh database (``.casino/loadtest-pg/``, or
the server in ``DATABASE_URL``), creates players, croupiers and tables over HTTP, runs
``loadtest/locustfile.py`` headless against it, prints requests, failures and percentiles
per command and event, checks the ledger, and stops everything. Exit status 1 when any
request failed or the ledger check found a problem.

``--crowd`` runs ``loadtest/locust_crowd.py`` instead: one live wheel, every user but its
croupier a player placing ``--bets`` straight bets per spin over a ``--window`` s window.
"""

from __future__ import annotations

import argparse
import asyncio
import csv
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from games.db.embedded import PROJECT_DIR
from loadtest.floor import build_floor
from loadtest.locust_floor import FLOOR_ENV
from loadtest.server_process import ADMIN_PASSWORD, LoadServer, ledger_problems

LOCUSTFILE = Path(__file__).with_name("locustfile.py")
CROWD_LOCUSTFILE = Path(__file__).with_name("locust_crowd.py")


def run_load(*, users: int = 60, spawn_rate: float = 20, run_time: int = 60, database_url: str | None = None,
             players: int | None = None, out_dir: Path | None = None, quiet: bool = False,
             crowd: tuple[int, float] | None = None, workers: int = 1, placed: bool = False) -> dict[str, Any]:
    """Run everything; the summary: totals, one row per entry, the ledger's problems.
    ``crowd``: (bets, window seconds) for the crowd at one wheel instead of the floor's mix;
    ``workers``: ``casino serve --workers N`` (locust's users land on every worker);
    ``placed``: each worker on a port of its own too (``--worker-ports``), which the lobby
    names for its tables: a roulette player's socket opens again at his table's owner's."""
    out_dir = Path(out_dir or tempfile.mkdtemp(prefix="casino-load-"))
    out_dir.mkdir(parents=True, exist_ok=True)
    env = {"CASINO_WORKER_PORTS": "0"} if placed and workers > 1 else None
    with LoadServer(database_url, env=env, log_path=out_dir / "server.log", workers=workers) as srv:
        shape = {"roulette_rng": 0, "blackjack_rng": (), "blackjack_live": ()} if crowd else {}
        floor = asyncio.run(build_floor(srv.url, ADMIN_PASSWORD, players=players or users, **shape))
        floor_path = out_dir / "floor.json"
        floor_path.write_text(json.dumps(floor))
        prefix = out_dir / "locust"
        cmd = [sys.executable, "-m", "locust", "-f", str(CROWD_LOCUSTFILE if crowd else LOCUSTFILE), "--headless",
               "--users", str(users), "--spawn-rate", str(spawn_rate), "--run-time", f"{run_time}s",
               "--host", srv.url, "--csv", str(prefix), "--only-summary", "--stop-timeout", "3",
               "--loglevel", "WARNING"]
        env = {**os.environ, FLOOR_ENV: str(floor_path)}
        if crowd:
            env.update(CASINO_CROWD_BETS=str(crowd[0]), CASINO_CROWD_WINDOW=str(crowd[1]))
        with open(out_dir / "locust.log", "wb") as log:
            proc = subprocess.run(cmd, cwd=PROJECT_DIR, env=env, stdout=log, stderr=subprocess.STDOUT,
                                  timeout=run_time + 120)
        problems = asyncio.run(ledger_problems(srv.db_url))
    summary = _summary(prefix.with_name("locust_stats.csv"))
    summary.update(exit_code=proc.returncode, ledger_problems=[str(p) for p in problems], out_dir=str(out_dir))
    if not quiet:
        print(format_summary(summary))
    return summary



def _summary(stats_csv: Path) -> dict[str, Any]:
    rows, total = [], None
    if stats_csv.exists():
        with open(stats_csv, newline="") as f:
            for r in csv.DictReader(f):
                row = {"type": r["Type"], "name": r["Name"], "requests": int(r["Request Count"]),
                       "failures": int(r["Failure Count"]), "p50": r["50%"], "p95": r["95%"], "p99": r["99%"],
                       "rps": float(r["Requests/s"])}
                if r["Name"] == "Aggregated":
                    total = row
                else:
                    rows.append(row)
    return {"requests": total["requests"] if total else 0, "failures": total["failures"] if total else 0,
            "rows": rows, "total": total}


def format_summary(s: dict[str, Any]) -> str:
    lines = [f"{'type':<6} {'name':<44} {'requests':>9} {'fail':>5} {'p50 ms':>7} {'p95 ms':>7} {'p99 ms':>7}"]
    for r in sorted(s["rows"], key=lambda r: (r["type"], r["name"])):
        lines.append(f"{r['type']:<6} {r['name'][:44]:<44} {r['requests']:>9} {r['failures']:>5} "
                     f"{r['p50']:>7} {r['p95']:>7} {r['p99']:>7}")
    t = s["total"]
    if t:
        lines.append(f"{'':<6} {'all':<44} {t['requests']:>9} {t['failures']:>5} {t['p50']:>7} {t['p95']:>7} "
                     f"{t['p99']:>7}   ({t['rps']:.0f} req/s)")
    lines.append(f"ledger check: {'clean' if not s['ledger_problems'] else s['ledger_problems']}")
    lines.append(f"logs and CSV: {s['out_dir']}")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m loadtest.run", description=__doc__.splitlines()[0])
    p.add_argument("--users", type=int, default=60, help="locust users (croupiers come on top, one per live table)")
    p.add_argument("--spawn-rate", type=float, default=20)
    p.add_argument("--run-time", type=int, default=60, help="seconds")
    p.add_argument("--players", type=int, default=None, help="player accounts (default: one per user)")
    p.add_argument("--out", type=Path, default=None, help="folder for the CSV and logs (default: a temp folder)")
    p.add_argument("--crowd", action="store_true",
                   help="one live wheel, every user but its croupier a player there (loadtest/locust_crowd.py)")
    p.add_argument("--bets", type=int, default=5, help="with --crowd: straight bets per player per spin")
    p.add_argument("--window", type=float, default=15, help="with --crowd: seconds of the betting window")
    p.add_argument("--workers", type=int, default=1, help="server processes (casino serve --workers N)")
    p.add_argument("--placed", action="store_true",
                   help="with --workers N: a port of its own for each worker, players' sockets at their tables' owners")
    a = p.parse_args(argv)
    s = run_load(users=a.users, spawn_rate=a.spawn_rate, run_time=a.run_time, players=a.players, out_dir=a.out,
                 crowd=(a.bets, a.window) if a.crowd else None, workers=a.workers, placed=a.placed)
    return 0 if s["failures"] == 0 and s["requests"] > 0 and not s["ledger_problems"] and s["exit_code"] == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
