"""The engine modules import no clock, no I/O and no randomness of their own (the tools
that drive the engine, which may, live in ``tools/``); nor do the card and shoe kernel
they stand on."""

import ast
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
