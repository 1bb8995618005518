"""``casino verify``: a player checks an RNG roulette spin himself (``roulette.fair``).

    casino verify campione-roulette-1 7 --user alice          # a spin he played, from its recall
    casino verify campione-roulette-1 7 --commitment C --seed S --number N   # offline, nothing asked

Online, it reads the spin's recall (``GET /tables/{table}/rounds/spin-{n}``: a player may
recall the rounds he played), takes the commitment published at ``spin_opened`` (before any
bet) and the seed revealed at ``spin_revealed`` (or ``spin_refunded``), and checks with this
machine's own code that sha256(seed) is the commitment and that the seed gives the number.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
from typing import Any

from roulette import fair


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("table")
    parser.add_argument("spin", type=int)
    parser.add_argument("--commitment", default="", help="offline: the commitment published when the spin opened")
    parser.add_argument("--seed", default="", help="offline: the seed revealed after the result")
    parser.add_argument("--number", type=int, help="offline: the number that came")
    parser.add_argument("--url", default=os.environ.get("CASINO_URL", "http://127.0.0.1:8000"))
    parser.add_argument("--user", default=os.environ.get("CASINO_USER", ""))
    parser.add_argument("--password", default=os.environ.get("CASINO_PASSWORD", ""))


def judge(table: str, spin: int, commitment: str, seed: str, number: int | None) -> tuple[bool, str]:
    """Whether the spin is what was committed to, and a line saying why."""
    if not fair.is_seed(seed):
        return False, f"the seed {seed!r} is not 64 lowercase hex digits"
    if fair.commitment(seed) != commitment:
        return False, f"sha256(seed) = {fair.commitment(seed)}, but the commitment published was {commitment}"
    expected = fair.spin_number(seed, table, spin)
    if number is None:  # a refunded spin: no number came; the seed still matches its commitment
        return True, f"spin {spin} was refunded; its seed matches the commitment (it would have been {expected})"
    if expected != number:
        return False, f"the seed gives {expected}, but the table announced {number}"
    return True, f"spin {spin} of {table}: sha256(seed) is the commitment and the seed gives {number}"


def from_recall(steps: list[dict[str, Any]]) -> tuple[str, str, int | None]:
    """(commitment, seed, number) out of a spin's recall (number None: refunded)."""
    commitment = seed = ""
    number = None
    for step in steps:
        e = step["event"]
        if step["kind"] == "spin_opened":
            commitment = e.get("commitment", "")
        elif step["kind"] == "spin_revealed":
            seed, number = e["seed"], e["number"]
        elif step["kind"] == "spin_refunded":
            seed = e["seed"]
    if not commitment:
        raise SystemExit("casino verify: this spin committed to nothing (a live wheel, or opened before seeds)")
    if not seed:
        raise SystemExit("casino verify: the spin's seed is not revealed yet (it has not ended)")
    return commitment, seed, number


async def _recall(args: argparse.Namespace) -> list[dict[str, Any]]:
    from server.client import CasinoClient

    client = CasinoClient(args.url)
    try:
        await client.login(args.user, args.password)
        return list(await client.request("GET", f"/tables/{args.table}/rounds/spin-{args.spin}"))
    finally:
        await client.close()


def run(args: argparse.Namespace) -> int:
    if args.seed or args.commitment:
        commitment, seed, number = args.commitment, args.seed, args.number
    else:
        from server.client import HTTPError

        try:
            commitment, seed, number = from_recall(asyncio.run(_recall(args)))
        except HTTPError as exc:
            print(f"casino verify: {exc.problem.get('code')}: {exc.problem.get('detail')}", file=sys.stderr)
            return 1
    ok, why = judge(args.table, args.spin, commitment, seed, number)
    print(("verified: " if ok else "NOT VERIFIED: ") + why)
    return 0 if ok else 1
