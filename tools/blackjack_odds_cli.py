"""``casino rtp blackjack --profile NAME [--json]``: exact side-bet returns and the main
game's simulated house edge for one profile."""

from __future__ import annotations

import argparse
import sys
from fractions import Fraction
from typing import Any

import msgspec

from games.money import currency
from tools._cli import add_profile_option, load_profile, progress_bar
from tools.blackjack_odds import BetOdds, BlazingOdds, side_bet_report
from tools.blackjack_simulate import default_boxes, simulate


def configure(parser: argparse.ArgumentParser) -> None:
    add_profile_option(parser, default="lugano")
    parser.add_argument("--json", action="store_true", help="machine-readable")
    for meter in ("minor", "major"):
        parser.add_argument(f"--{meter}", type=int, default=None,
                            help=f"Blazing 7s {meter} meter, minor units (default: its seed)")
    parser.add_argument("--rounds", type=int, default=1_000_000, help="simulated rounds for the main game (0: skip)")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--workers", type=int, default=0, help="simulator processes (default: every core)")


def pct(x: Fraction | float, digits: int = 4) -> str:
    return f"{100 * float(x):.{digits}f}%"


def _frac(x: Fraction) -> str:
    return f"{x.numerator}/{x.denominator}"


def _bet_json(b: BetOdds) -> dict[str, Any]:
    return {
        "lines": [{"line": ln.line, "pays": ln.pays, "probability": _frac(ln.probability),
                   "probability_float": float(ln.probability)} for ln in b.lines],
        "rtp": _frac(b.rtp),
        "rtp_percent": round(100 * float(b.rtp), 6),
        "house_edge_percent": round(100 * float(1 - b.rtp), 6),
    }


def _blazing_json(b: BlazingOdds, minor: int, major: int) -> dict[str, Any]:
    return {
        "stake": b.stake,
        "lines": [{"line": ln.line, "pays": ln.pays, "probability": _frac(ln.probability),
                   "probability_float": float(ln.probability)} for ln in b.lines],
        "rtp_formula": {"base": _frac(b.base), "per_minor_unit_on_minor_meter": _frac(b.minor_coef),
                        "per_minor_unit_on_major_meter": _frac(b.major_coef)},
        "envy_per_other_bet": _frac(b.envy_per_other_bet),
        "meters": {"minor": minor, "major": major},
        "rtp_percent": round(100 * float(b.rtp(minor, major)), 6),
        "break_even_major_with_this_minor": _break_even(b, minor),
    }


def _break_even(b: BlazingOdds, minor: int) -> int:
    """The major meter (minor units) at which the bet returns its stake, the minor as given."""
    need = 1 - b.base - b.minor_coef * minor
    return max(0, -(-need.numerator * b.major_coef.denominator // (need.denominator * b.major_coef.numerator)))


def run(args: argparse.Namespace) -> int:
    prof = load_profile(args.profile)
    if prof is None:
        return 2
    rep = side_bet_report(prof)
    cur = currency(prof.currency)
    b7cfg = getattr(prof, "blazing_7s", None)
    minor = args.minor if args.minor is not None else (b7cfg.minor.seed if b7cfg else 0)
    major = args.major if args.major is not None else (b7cfg.major.seed if b7cfg else 0)
    main = None
    if args.rounds > 0:
        progress = progress_bar if sys.stderr.isatty() and not args.json else None
        stats, wall = simulate(prof, args.rounds, args.seed, workers=args.workers or None, progress=progress)
        edge, half = stats.house_edge()
        main = {"rounds": stats.rounds, "seed": args.seed, "boxes_per_round": default_boxes(prof),
                "house_edge": edge, "ci95": [edge - half, edge + half], "seconds": wall}
    if args.json:
        doc = {
            "game": "blackjack",
            "profile": prof.name,
            "decks": prof.decks,
            "perfect_pairs": _bet_json(rep.perfect_pairs) if rep.perfect_pairs else None,
            "twenty_one_plus_three": _bet_json(rep.twenty_one_plus_three) if rep.twenty_one_plus_three else None,
            "push_22": _bet_json(rep.push_22) if rep.push_22 else None,
            "blazing_7s": _blazing_json(rep.blazing_7s, minor, major) if rep.blazing_7s else None,
            "dealer_finals": {k: float(v) for k, v in rep.dealer.items()},
            "main_game": main,
        }
        sys.stdout.write(msgspec.json.format(msgspec.json.encode(doc)).decode() + "\n")
        return 0
    out = [f"Blackjack, profile {prof.name}: {prof.decks} decks. Side bets exact over the full shoe's"
           " composition; return per unit staked.", ""]
    for title, b in (("Perfect Pairs", rep.perfect_pairs), ("21+3", rep.twenty_one_plus_three),
                     ("Push 22", rep.push_22)):
        if b is None:
            out += [f"{title}: not offered", ""]
            continue
        out.append(f"{title}: return {pct(b.rtp)}, house edge {pct(1 - b.rtp)}")
        for ln in b.lines:
            out.append(f"  {ln.line.replace('_', ' '):<18} {ln.pays:>3}:1  p = {float(ln.probability):.8f}")
        out.append("")
    d = rep.dealer
    out.append("Dealer's final hand (from a full shoe): " + ", ".join(f"{k} {pct(v, 2)}" for k, v in d.items()))
    out.append("")
    b7 = rep.blazing_7s
    if b7 is None:
        out += ["Blazing 7s: not offered", ""]
    else:
        out.append(f"Blazing 7s: stake {cur.format(b7.stake)}, never returned")
        for ln in b7.lines:
            paid = cur.format(ln.pays) if ln.pays else f"the {ln.line} jackpot"
            out.append(f"  {ln.line.replace('_', ' '):<18} {paid:>22}  p = {float(ln.probability):.10f}")
        out.append(f"  return = {pct(b7.base)}"
                   f" + {float(b7.minor_coef) * cur.scale * 100:.8f}% per CHF on the minor meter"
                   f" + {float(b7.major_coef) * cur.scale * 100:.8f}% per CHF on the major meter")
        out.append(f"  at minor {cur.format(minor)}, major {cur.format(major)}: {pct(b7.rtp(minor, major))}"
                   f" (house edge {pct(1 - b7.rtp(minor, major))}), alone at the table")
        out.append(f"  each other Blazing 7s bet at the table adds {pct(b7.envy_per_other_bet)} (envy bonuses)")
        out.append(f"  the bet returns its stake when the major reaches {cur.format(_break_even(b7, minor))}"
                   f" (minor at {cur.format(minor)})")
        out.append("")
    if main:
        lo, hi = main["ci95"]
        out.append(f"Main game (simulated, basic strategy, {main['rounds']:,} rounds, seed {main['seed']}):"
                   f" house edge {pct(main['house_edge'], 3)} (95% interval {pct(lo, 3)} .. {pct(hi, 3)})")
    print("\n".join(out))
    return 0
