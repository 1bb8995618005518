"""``casino rtp roulette [--json] [--each]``: the exact odds report."""

from __future__ import annotations

import argparse
import sys
from fractions import Fraction

import msgspec

from tools.roulette_odds import Row, announced_rows, combination_rows, percent


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--json", action="store_true", help="machine-readable, every bet listed")
    parser.add_argument("--each", action="store_true", help="one line per combination and bet")


def _grouped(rows: list[Row]) -> list[tuple[str, str, Fraction, list[str]]]:
    """Rows sharing a group and an exact value, in first-seen order."""
    out: dict[tuple[str, str, Fraction], list[str]] = {}
    for r in rows:
        out.setdefault((r.group, r.pays, r.rtp), []).append(r.name)
    return [(g, p, v, names) for (g, p, v), names in out.items()]


def _each_label(r: Row) -> str:
    # a simple chance has one row per zero rule: say which
    prefix = "simple chance, "
    return f"{r.name}, {r.group[len(prefix):]}" if r.group.startswith(prefix) else r.name


def _table(title: str, rows: list[Row], each: bool, size: str) -> list[str]:
    head = f"  {'bet':<40} {'count':>5} {size:>9} {'RTP exact':>11} {'RTP %':>8} {'edge %':>7}"
    lines = [title, head]
    if each:
        items = [(_each_label(r), 1, r.pays, r.rtp) for r in rows]
    else:
        # Every bet is computed on its own; bets of one group with the same exact value
        # share a line (a group whose bets differed would show one line per value).
        items = [(g, len(names), p, v) for g, p, v, names in _grouped(rows)]
    for label, count, pays, value in items:
        exact = f"{value.numerator}/{value.denominator}"
        lines.append(
            f"  {label:<40} {count:>5} {pays:>9} {exact:>11} {percent(value):>8} {percent(1 - value):>7}"
        )
    return lines


def run(args: argparse.Namespace) -> int:
    combos, announced = combination_rows(), announced_rows()
    if args.json:
        def enc(rows: list[Row]) -> list[dict[str, str]]:
            return [
                {
                    "group": r.group,
                    "name": r.name,
                    "pays": r.pays,
                    "rtp": f"{r.rtp.numerator}/{r.rtp.denominator}",
                    "rtp_percent": percent(r.rtp, 6),
                    "house_edge_percent": percent(1 - r.rtp, 6),
                }
                for r in rows
            ]

        doc = {"game": "roulette", "wheel": "single zero (Campione)",
               "combinations": enc(combos), "announced": enc(announced)}
        sys.stdout.write(msgspec.json.format(msgspec.json.encode(doc)).decode() + "\n")
        return 0
    lines = [
        "Roulette, single zero (Campione rules): exact return to player per unit staked,",
        "each bet settled by the engine over all 37 numbers (simple chances over the prison chain).",
        "",
    ]
    lines += _table("Combinations", combos, args.each, "pays")
    lines += [""]
    lines += _table("Announced bets (Art. 17)", announced, args.each, "stake")
    print("\n".join(lines))
    return 0
