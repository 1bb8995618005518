"""``casino``: the one command line for serving, simulating, odds reports and ledger tools.

Each subcommand lives next to what it drives, in a module with
``configure(parser)`` and ``run(args) -> int``; this file only wires them up.
"""

from __future__ import annotations

import argparse
import importlib
import sys

# (command words, module, one-line help)
COMMANDS: list[tuple[tuple[str, ...], str, str]] = [
    (("serve",), "server.serve_cli", "run the server"),
    (("demo",), "server.demo_cli", "run the server with demo tables and bots playing"),
    (("rtp", "roulette"), "tools.roulette_odds_cli", "exact return to player of every roulette bet"),
    (("rtp", "blackjack"), "tools.blackjack_odds_cli", "return of blackjack side bets and the main game"),
    (("simulate", "blackjack"), "tools.blackjack_simulate_cli", "play basic strategy through the engine"),
    (("verify",), "server.verify_cli", "check an RNG roulette spin against its commitment (provably fair)"),
    (("tournament",), "server.tournament_cli", "create and run a blackjack tournament or Sit&Go (via the API)"),
    (("report", "daily"), "server.report_cli", "the regulator's daily report (JSON or CSV), from the database"),
    (("unclaimed", "list"), "server.unclaimed_cli", "the unclaimed register (Art. 19): open, claimed, expired items"),
    (("unclaimed", "expire"), "server.unclaimed_cli",
     "move unclaimed items older than CASINO_UNCLAIMED_DAYS (30) to their table's float"),
    (("ledger", "check"), "games.ledger.cli_check", "verify the ledger's invariants"),
    (("ledger", "statement"), "games.ledger.cli_statement", "print an account's history"),
    (("audit", "verify"), "server.audit_cli", "recompute the audit hash chain; name the row where it breaks"),
    (("audit", "seal"), "server.audit_cli", "seal the audit rows that may be sealed now (the server does it too)"),
    (("db", "start"), "server.db_cli", "start the embedded PostgreSQL and leave it running"),
    (("db", "stop"), "server.db_cli", "stop the embedded PostgreSQL"),
    (("db", "status"), "server.db_cli", "whether the embedded PostgreSQL runs: its URL, data dir, pid"),
    (("db", "migrate"), "server.db_cli", "bring the schema of every package up to date and say what was applied"),
    (("redis", "start"), "server.redis_embedded", "start the embedded Redis (serve --workers) and leave it running"),
    (("redis", "stop"), "server.redis_embedded", "stop the embedded Redis"),
    (("redis", "status"), "server.redis_embedded", "whether the embedded Redis runs: its URL, folder, pid"),
]


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="casino", description=__doc__.splitlines()[0])
    groups: dict[tuple[str, ...], argparse._SubParsersAction] = {
        (): parser.add_subparsers(dest="command", required=True)
    }
    for words, module_name, help_text in COMMANDS:
        for depth in range(1, len(words)):
            prefix = words[:depth]
            if prefix not in groups:
                p = groups[prefix[:-1]].add_parser(prefix[-1], help=f"{prefix[-1]} ...")
                groups[prefix] = p.add_subparsers(dest="_".join(prefix), required=True)
        sub = groups[words[:-1]].add_parser(words[-1], help=help_text, description=help_text)
        sub.set_defaults(_module=module_name)
        try:
            importlib.import_module(module_name).configure(sub)
        except ModuleNotFoundError as exc:
            if exc.name != module_name:
                raise
            sub.set_defaults(_missing=True)
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    if getattr(args, "_missing", False):
        print(f"casino: {args._module} is not part of this build", file=sys.stderr)
        return 2
    return int(importlib.import_module(args._module).run(args) or 0)


if __name__ == "__main__":
    sys.exit(main())
