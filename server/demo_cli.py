"""``casino demo``: the server with demo tables and accounts, plus bots that play, so a
newcomer sees live tables at once."""

from __future__ import annotations

import argparse

from server import serve_cli


def configure(parser: argparse.ArgumentParser) -> None:
    serve_cli.configure(parser)


def run(args: argparse.Namespace) -> int:
    args.no_demo = False
    return serve_cli.serve(args, bots=True)
