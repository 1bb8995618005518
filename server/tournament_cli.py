"""``casino tournament``: run a blackjack tournament or Sit&Go from the command line, against
a running server's API (the same calls the console makes).

    casino tournament create spring --name "Spring Cup" --buy-in 100.00 --starts-at 2026-12-01T20:00
    casino tournament send spring open_registration
    casino tournament send spring register --user anna --password anna-pass    # from his wallet
    casino tournament send spring '{"type": "register", "player": "bob", "source": "cashier"}' --user cashier
    casino tournament send spring start
    casino tournament show spring

Who you are: ``--user`` / ``--password`` (or CASINO_USER / CASINO_PASSWORD; the director by
default): the director creates and runs it, a player registers himself, the cashier
registers players who pay at the desk.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
from datetime import datetime
from decimal import Decimal
from typing import Any

from server.client import CasinoClient, HTTPError


def configure(parser: argparse.ArgumentParser) -> None:
    who = argparse.ArgumentParser(add_help=False)
    who.add_argument("--url", default=os.environ.get("CASINO_URL", "http://127.0.0.1:8000"))
    who.add_argument("--user", default=os.environ.get("CASINO_USER", "director"))
    who.add_argument("--password", default=os.environ.get("CASINO_PASSWORD", ""))
    sub = parser.add_subparsers(dest="action", required=True)
    create = sub.add_parser("create", parents=[who], help="create a tournament (the director)")
    create.add_argument("id")
    create.add_argument("--name", required=True)
    create.add_argument("--buy-in", required=True, help="in EUR, e.g. 100.00")
    create.add_argument("--starts-at", default="", help="ISO local time (a tournament; a Sit&Go starts when full)")
    create.add_argument("--sit-and-go", action="store_true", help="one table, starts itself at 5 entries")
    for flag in ("max-entrants", "max-tables", "min-bet", "max-bet", "shoes", "finalists", "stack", "decks"):
        create.add_argument(f"--{flag}", type=int)
    create.add_argument("--mode", choices=("rng", "live"), default="rng")
    create.add_argument("--staff", default="", help="a live tournament's croupiers, comma-separated")
    sub.add_parser("list", parents=[who], help="every tournament")
    show = sub.add_parser("show", parents=[who], help="registrations, phase, tables, standings, prizes")
    show.add_argument("id")
    send = sub.add_parser("send", parents=[who], help="send a command: a type (start, pause, ...) or JSON")
    send.add_argument("id")
    send.add_argument("command")


def spec_of(args: argparse.Namespace) -> dict[str, Any]:
    spec: dict[str, Any] = {"name": args.name, "buy_in": int(Decimal(args.buy_in) * 100), "mode": args.mode}
    if args.sit_and_go:
        spec.update(format="sit_and_go", max_entrants=7, max_tables=1, min_entrants=5, prizes=[100])
    if args.starts_at:
        spec["starts_at"] = int(datetime.fromisoformat(args.starts_at).timestamp())
    for key in ("max_entrants", "max_tables", "min_bet", "max_bet", "shoes", "finalists", "stack", "decks"):
        if getattr(args, key) is not None:
            spec[key] = getattr(args, key)
    if args.staff:
        spec["staff"] = [s for s in args.staff.split(",") if s]
    return spec


async def _run(args: argparse.Namespace) -> Any:
    client = CasinoClient(args.url)
    try:
        await client.login(args.user, args.password)
        if args.action == "create":
            return await client.request("POST", "/tournaments", json={"id": args.id, "spec": spec_of(args)})
        if args.action == "list":
            return await client.request("GET", "/tournaments")
        if args.action == "show":
            return await client.request("GET", f"/tournaments/{args.id}")
        command = json.loads(args.command) if args.command.lstrip().startswith("{") else {"type": args.command}
        return await client.request("POST", f"/tournaments/{args.id}/commands", json={"command": command})
    finally:
        await client.close()


def run(args: argparse.Namespace) -> int:
    try:
        out = asyncio.run(_run(args))
    except HTTPError as exc:
        print(json.dumps(exc.problem, indent=2), file=sys.stderr)
        return 1
    print(json.dumps(out, indent=2))
    return 0
