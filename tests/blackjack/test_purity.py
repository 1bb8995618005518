"""The engine modules import no clock, no I/O and no randomness of their own (the tools
that drive the engine, which may, live in ``tools/``); nor do the card and shoe kernel
they stand on. Importing them loads neither the ledger nor its PostgreSQL driver, nor an
event loop or sockets (their money becomes ledger operations in the server, ``server.money``)."""

import ast
import subprocess
import sys
from pathlib import Path

import blackjack
import games.cards
import games.shoe

FORBIDDEN = {"asyncio", "time", "datetime", "random", "os", "socket", "secrets", "threading", "multiprocessing"}


def test_engine_modules_are_pure():
    root = Path(blackjack.__file__).parent
    paths = sorted(root.rglob("*.py")) + [Path(games.cards.__file__), Path(games.shoe.__file__)]
    assert root / "round" / "steps.py" in paths
    for path in paths:
        for node in ast.walk(ast.parse(path.read_text())):
            names = []
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module:
                names = [node.module]
            for n in names:
                assert n.split(".")[0] not in FORBIDDEN, f"{path.name} imports {n}"


CODE = """
import sys
import blackjack.table, blackjack.jackpot, blackjack.jackpot_pool, blackjack.sidebets, blackjack.profiles
bad = sorted(m for m in sys.modules
             if m.split('.')[0] in ('asyncpg', 'asyncio', 'socket') or m.startswith('games.ledger'))
print(' '.join(bad))
"""


def test_engine_does_not_load_the_ledger_or_io():
    out = subprocess.run([sys.executable, "-c", CODE], capture_output=True, text=True, check=True).stdout
    assert out.strip() == ""
