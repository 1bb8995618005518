"""The roulette engine stays pure (h11's rule): importing it loads neither the ledger nor
its PostgreSQL driver, nor an event loop or sockets. Its money leaves it only as
``games.wagers`` events, which the server turns into ledger operations (``server.money``)."""

import subprocess
import sys

CODE = """
import sys
import roulette, roulette.engine, roulette.commands, roulette.events, roulette.phases, roulette.roles
import roulette.view, roulette.draw, roulette.settlement
io = ('asyncpg', 'asyncio', 'socket')
bad = sorted(m for m in sys.modules if m.split('.')[0] in io or m.startswith('games.ledger'))
print(' '.join(bad))
"""


def test_engine_does_not_load_the_ledger_or_io():
    out = subprocess.run([sys.executable, "-c", CODE], capture_output=True, text=True, check=True).stdout
    assert out.strip() == ""
