"""The three layers import one way: ``games`` is the ground, the engines stand on it, and
the server, the tools and the load tests stand on top. Nothing below imports what stands
above it (a name in a string, like a package whose migrations to apply, is not an import)."""

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
ABOVE = {
    "games": {"roulette", "blackjack", "server", "tools", "loadtest"},
    "roulette": {"blackjack", "server", "tools", "loadtest"},
    "blackjack": {"roulette", "server", "tools", "loadtest"},
    "tools": {"server", "loadtest"},
}


def _imports(path: Path) -> set[str]:
    out = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            out |= {a.name.split(".")[0] for a in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            out.add(node.module.split(".")[0])
    return out


@pytest.mark.parametrize("package", sorted(ABOVE))
def test_nothing_imports_a_layer_above(package):
    wrong = {str(p.relative_to(ROOT)): sorted(_imports(p) & ABOVE[package])
             for p in sorted((ROOT / package).rglob("*.py"))}
    assert {p: names for p, names in wrong.items() if names} == {}
