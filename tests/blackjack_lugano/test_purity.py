"""The engine's Lugano modules stay pure: importing them (and the table) loads neither the
ledger nor its PostgreSQL driver, nor an event loop or sockets (their money becomes ledger
operations in the server, ``server.money``)."""

import subprocess
import sys

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
