"""Rounds per second of the blackjack simulator, one core and every core, per profile.

    .venv/bin/python -m loadtest.bench_blackjack [--rounds N]

Prints a Markdown table for BENCHMARKS.md. Each run plays basic strategy through the
real engine (``tools.blackjack_simulate``); the seed is fixed so runs are comparable.
"""

from __future__ import annotations

import argparse
import multiprocessing

from blackjack.profiles import BUILTIN, builtin
from tools.blackjack_simulate import default_boxes, simulate


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=300_000)
    ap.add_argument("--seed", type=int, default=3)
    args = ap.parse_args()
    cores = multiprocessing.cpu_count()
    print(f"| profile | boxes/round | 1 core (rounds/s) | {cores} cores (rounds/s) | box-rounds/s, {cores} cores |")
    print("|---|---|---|---|---|")
    for name in BUILTIN:
        p = builtin(name)
        one, w1 = simulate(p, args.rounds, args.seed, workers=1)
        many, wn = simulate(p, args.rounds, args.seed, workers=cores)
        boxes = default_boxes(p)
        r1, rn = one.rounds / w1, many.rounds / wn
        print(f"| `{name}` | {boxes} | {r1:,.0f} | {rn:,.0f} | {rn * boxes:,.0f} |")


if __name__ == "__main__":
    main()
