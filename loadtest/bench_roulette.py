"""Settlement benchmark: one spin holding 10,000 bets from 1,000 players.

    .venv/bin/python -m loadtest.bench_roulette [--rounds 15] [--players 1000] [--bets 10]

Places the bets through the engine, calls rien ne va plus, then times only
``handle(Result(...))`` (settlement and its events) on fresh copies of that state.
"""

from __future__ import annotations

import argparse
import statistics
import time

import msgspec

from games.commands import Actor
from games.rng import SeededRng
from roulette.commands import LaunchBall, NoMoreBets, OpenSpin, PlaceBet, Result
from roulette.engine import RouletteTable
from roulette.layout import COMBINATIONS
from roulette.state import RouletteState

CROUPIER = Actor("c1", "croupier")


def table_with_bets(players: int, per_player: int, seed: int = 7) -> RouletteTable:
    rng = SeededRng(seed)
    table = RouletteTable("bench")
    table.handle(OpenSpin(), CROUPIER)
    minimum = table.state.settings.minimum
    for p in range(players):
        who = Actor(f"p{p}")
        for _ in range(per_player):
            spot = COMBINATIONS[rng.randbelow(len(COMBINATIONS))].name
            table.handle(PlaceBet(player=who.id, spot=spot, amount=minimum * (1 + rng.randbelow(4))), who)
    table.handle(LaunchBall(), CROUPIER)
    table.handle(NoMoreBets(), CROUPIER)
    return table


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--players", type=int, default=1000)
    ap.add_argument("--bets", type=int, default=10, help="bets per player")
    ap.add_argument("--rounds", type=int, default=15)
    args = ap.parse_args(argv)
    table = table_with_bets(args.players, args.bets)
    frozen = msgspec.msgpack.encode(table.state)
    times, events = [], 0
    for i in range(args.rounds):
        fresh = RouletteTable.from_state(msgspec.msgpack.decode(frozen, type=RouletteState))
        number = (17, 0)[i % 2]  # a plain number and a zero (prison) alternately
        t0 = time.perf_counter()
        events = len(fresh.handle(Result(number=number), CROUPIER))
        times.append((time.perf_counter() - t0) * 1000)
    bets = args.players * args.bets
    print(
        f"settle one spin: {bets} bets from {args.players} players, {events} events; "
        f"median {statistics.median(times):.2f} ms, min {min(times):.2f} ms, "
        f"max {max(times):.2f} ms over {args.rounds} rounds"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
