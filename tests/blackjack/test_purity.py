"""The engine modules import no clock, no I/O and no randomness of their own. Only the
simulator (a tool that drives the engine) may time itself and start processes."""

import ast
from pathlib import Path

import blackjack

FORBIDDEN = {"asyncio", "time", "datetime", "random", "os", "socket", "secrets", "threading", "multiprocessing"}
TOOLS = {"simulate.py", "simulate_cli.py"}


def test_engine_modules_are_pure():
    root = Path(blackjack.__file__).parent
    for path in sorted(root.glob("*.py")):
        if path.name in TOOLS:
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            names = []
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module:
                names = [node.module]
            for n in names:
                assert n.split(".")[0] not in FORBIDDEN, f"{path.name} imports {n}"
