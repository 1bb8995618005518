"""``casino simulate blackjack``: basic strategy through the engine, house edge with a 95% interval."""

from __future__ import annotations

import argparse
import sys

import msgspec

from blackjack.strategy import strategy_for
from tools._cli import add_profile_option, load_profile, progress_bar
from tools.blackjack_simulate import default_boxes, simulate


def configure(parser: argparse.ArgumentParser) -> None:
    add_profile_option(parser, default="campione")
    parser.add_argument("--rounds", type=int, default=100_000)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--boxes", type=int, default=0,
                        help="boxes played each round (default: the fewest a lone player may)")
    parser.add_argument("--workers", type=int, default=0, help="processes (default: every core)")
    parser.add_argument("--json", action="store_true", help="print the result as JSON")
    parser.add_argument("--strategy", action="store_true", help="print the computed basic strategy and stop")


def run(args: argparse.Namespace) -> int:
    prof = load_profile(args.profile)
    if prof is None:
        return 2
    if args.strategy:
        chart = strategy_for(prof).chart()
        if args.json:
            sys.stdout.write(msgspec.json.encode(chart).decode() + "\n")
        else:
            print(f"{prof.name}: S stand, H hit, D double (else hit/stand), P split")
            print(f"{'':10} " + " ".join(f"{u:>2}" for u in ["2", "3", "4", "5", "6", "7", "8", "9", "10", "A"]))
            for row, cells in chart.items():
                print(f"{row:10} " + " ".join(f"{c:>2}" for c in cells))
        return 0
    if args.rounds <= 0:
        print("casino: --rounds must be positive", file=sys.stderr)
        return 2
    boxes = args.boxes or default_boxes(prof)
    if not 1 <= boxes <= 7 or boxes < prof.lone_player_min_boxes:
        print(f"casino: {prof.name} needs 1-7 boxes, at least {prof.lone_player_min_boxes}", file=sys.stderr)
        return 2
    progress = progress_bar if sys.stderr.isatty() and not args.json else None
    stats, wall = simulate(prof, args.rounds, args.seed, boxes=boxes, workers=args.workers or None, progress=progress)
    edge, half = stats.house_edge()
    rate = stats.rounds / wall if wall else 0.0
    if args.json:
        out = {
            "profile": prof.name,
            "rounds": stats.rounds,
            "boxes_per_round": boxes,
            "seed": args.seed,
            "house_edge": edge,
            "ci95": [edge - half, edge + half],
            "rounds_per_second": rate,
            "seconds": wall,
            "outcomes": stats.outcomes,
            "voided_wagers": stats.voided,
        }
        sys.stdout.write(msgspec.json.encode(out).decode() + "\n")
        return 0
    print(f"profile {prof.name}: {stats.rounds:,} rounds, {boxes} box(es) each, seed {args.seed}")
    print(f"house edge   {edge * 100:+.3f}%  (95% interval {100 * (edge - half):+.3f}% .. {100 * (edge + half):+.3f}%)")
    print(f"speed        {rate:,.0f} rounds/s ({wall:.1f} s)")
    print("outcomes per box (net units: boxes)")
    total = sum(stats.outcomes.values()) or 1
    for k, v in stats.outcomes.items():
        print(f"  {k:>6}  {v:>10,}  {100 * v / total:6.2f}%")
    return 0
