"""Prometheus's own tools for the tests of deploy/prometheus/: ``promtool`` and the
``prometheus`` server, from the PATH or unpacked by ``./dev test`` under
``.casino/tools/prometheus`` (Debian's package, not installed)."""

from __future__ import annotations

import shutil

from games.db.embedded import PROJECT_DIR

DEPLOY = PROJECT_DIR / "deploy" / "prometheus"
UNPACKED = PROJECT_DIR / ".casino" / "tools" / "prometheus" / "usr" / "bin"


def tool(name: str) -> str | None:
    """The path of ``promtool`` or ``prometheus`` (the PATH's where it has both, as ``./dev``
    decides), or None where neither place has it."""
    if shutil.which("promtool") and shutil.which("prometheus"):
        return shutil.which(name)
    path = UNPACKED / name
    return str(path) if path.is_file() else shutil.which(name)
