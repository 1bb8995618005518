"""A tournament played to the end by bots: its wall time and what the server spent on it.

    .venv/bin/python -m loadtest.bench_tournament [--players 70 --shoes 6 --decks 6]

On a fresh server (``loadtest.server_process``), first the same run's baseline: a Sit&Go of 7
bots at one table, then the tournament: ``--players`` bots (70: 10 tables of 7), an
elimination phase of ``--shoes`` shoes, tie-breaks where the places matter, a final table of
7 for ``--shoes`` more, prizes paid. Each bot bets the minimum every hand and stands (the
server's RNG deals); the server's clocks are the load tests' (a betting window closes at
once when every player in has bet). Reported for each: wall time from the start to the
prizes, hands played (summed over tables), the cores each process group kept busy, server
CPU per hand, and the ledger check; then the tournament against the Sit&Go.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import time
from datetime import UTC, datetime
from typing import Any

from games.db.embedded import PROJECT_DIR
from loadtest.bench_measure import cpu_by_group, cpu_share
from loadtest.server_process import ADMIN_PASSWORD, LoadServer, ledger_problems, mint_token
from loadtest.tournament_bots import TournamentBot, tournament_command
from server.client import CasinoClient

OUT = PROJECT_DIR / ".casino" / "bench"
PASSWORD = "bench-tournament-pass"


def client_as(url: str, user: str, role: str) -> CasinoClient:
    """A client holding the token /auth/login would give (no password hashing per bot)."""
    c = CasinoClient(url)
    c.token, c.user, c.role = mint_token(user, role), user, role
    return c


async def accounts(url: str, players: list[str]) -> None:
    admin = CasinoClient(url)
    await admin.login("admin", ADMIN_PASSWORD)
    try:
        for user, role in (("b-director", "director"), ("b-cashier", "cashier")):
            await admin.request("POST", "/accounts", json={"user": user, "password": PASSWORD, "role": role})
        sem = asyncio.Semaphore(8)

        async def one(user: str) -> None:
            async with sem:
                await admin.request("POST", "/accounts", json={"user": user, "password": PASSWORD,
                                                               "role": "player", "currency": "EUR"})
        await asyncio.gather(*(one(p) for p in players))
    finally:
        await admin.close()
    cashier = client_as(url, "b-cashier", "cashier")
    try:
        for p in players:
            await cashier.request("POST", "/cashier/deposit", json={"user": p, "amount": 1_000_000,
                                                                    "currency": "EUR", "id": f"dep-{p}"})
    finally:
        await cashier.close()


async def play(srv: LoadServer, tid: str, players: list[str], spec: dict[str, Any]) -> dict[str, Any]:
    director = client_as(srv.url, "b-director", "director")
    await director.request("POST", "/tournaments", json={"id": tid, "spec": spec})
    await director.connect()
    await director.subscribe(tid)
    await tournament_command(director, tid, {"type": "open_registration"})
    sit_and_go = spec.get("format") == "sit_and_go"
    clients = [client_as(srv.url, p, "player") for p in players]
    bots = [TournamentBot(c, tid) for c in clients]
    runs = [asyncio.create_task(b.run(timeout=3600)) for b in bots]
    await asyncio.sleep(1.0)  # every bot follows the tournament before the draw
    cpu0 = cpu_by_group(srv.pid, {os.getpid()})
    t0 = time.monotonic()
    for c in clients:
        await tournament_command(c, tid, {"type": "register"})
        if not sit_and_go:
            await tournament_command(c, tid, {"type": "check_in"})
    if not sit_and_go:
        await tournament_command(director, tid, {"type": "start"})
    await director.next_event(tid, "finished", "cancelled", timeout=3600)
    wall = time.monotonic() - t0
    cpu = cpu_share(cpu0, cpu_by_group(srv.pid, {os.getpid()}), wall)
    await asyncio.gather(*runs, return_exceptions=True)
    frames = [f["event"] for f in director.frames if f.get("type") == "event" and f.get("table") == tid]
    hands = sum(e["hand"] for e in frames if e["type"] == "standings_updated"
                and not any(x["type"] == "standings_updated" and x["table"] == e["table"] and x["hand"] > e["hand"]
                            for x in frames))
    phases = [(e["kind"], len(e["tables"])) for e in frames if e["type"] == "phase_started"]
    finished = next(e for e in frames if e["type"] in ("finished", "cancelled"))
    for c in [director, *clients]:
        await c.close()
    return {"players": len(players), "wall_s": round(wall, 2), "hands": hands, "phases": phases,
            "cores": cpu, "server_cpu_ms_per_hand": round(cpu["server"] * wall * 1000 / max(hands, 1), 1),
            "prizes": finished.get("prizes", {}), "bot_errors": sum(len(b.errors) for b in bots)}


async def bench(srv: LoadServer, a: argparse.Namespace) -> dict[str, Any]:
    players = [f"bp{i:03d}" for i in range(a.players)]
    t = time.monotonic()
    await accounts(srv.url, players)
    print(f"  {a.players} players, each with EUR 10,000 ({time.monotonic() - t:.0f} s)", flush=True)
    common = {"buy_in": 10_000, "shoes": a.shoes, "decks": a.decks, "min_bet": 10, "max_bet": 100}
    sng = await play(srv, "bench-sng", players[:7], {
        **common, "name": "Bench Sit&Go", "format": "sit_and_go", "max_entrants": 7, "max_tables": 1,
        "min_entrants": 7, "prizes": [100]})
    print(f"  baseline, a Sit&Go of 7 (one table): {sng['wall_s']:.1f} s, {sng['hands']} hands, "
          f"cores {sng['cores']}, server {sng['server_cpu_ms_per_hand']} ms CPU per hand", flush=True)
    tables = -(-a.players // 7)
    cup = await play(srv, "bench-cup", players, {
        **common, "name": "Bench Cup", "starts_at": int(time.time()) + 7200, "max_entrants": a.players,
        "max_tables": tables})
    print(f"  the tournament, {a.players} players: {cup['wall_s']:.1f} s, {cup['hands']} hands over "
          f"{cup['phases']}, cores {cup['cores']}, server {cup['server_cpu_ms_per_hand']} ms CPU per hand; "
          f"prizes {cup['prizes']}", flush=True)
    problems = [str(p) for p in await ledger_problems(srv.db_url)]
    ratio = {"wall": round(cup["wall_s"] / sng["wall_s"], 2),
             "hands": round(cup["hands"] / max(sng["hands"], 1), 2),
             "cpu_per_hand": round(cup["server_cpu_ms_per_hand"] / max(sng["server_cpu_ms_per_hand"], 0.1), 2)}
    print(f"  tournament / Sit&Go: wall {ratio['wall']}x for {ratio['hands']}x the hands; server CPU per hand "
          f"{ratio['cpu_per_hand']}x; ledger check: {problems or 'clean'}", flush=True)
    return {"sit_and_go": sng, "tournament": cup, "ratio": ratio, "ledger_problems": problems}


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m loadtest.bench_tournament", description=__doc__.splitlines()[0])
    p.add_argument("--players", type=int, default=70)
    p.add_argument("--shoes", type=int, default=6)
    p.add_argument("--decks", type=int, default=6)
    a = p.parse_args(argv)
    OUT.mkdir(parents=True, exist_ok=True)
    stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%S")
    print(f"tournament: {os.cpu_count()} cores, {stamp}", flush=True)
    env = {"CASINO_BETTING_SECONDS": "5", "CASINO_DECISION_SECONDS": "5", "CASINO_HEARTBEAT_SECONDS": "15"}
    with LoadServer(env=env, log_path=OUT / f"tournament-{stamp}-server.log") as srv:
        result = asyncio.run(bench(srv, a))
    path = OUT / f"tournament-{stamp}.json"
    path.write_text(json.dumps(result, indent=1, default=str))
    print(f"results: {path}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
