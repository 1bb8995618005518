"""The list of processes using a shared embedded server (the embedded PostgreSQL, the embedded
Redis): a JSON list of pids in a file beside its data, so that the last user stops it."""

from __future__ import annotations

import json
from pathlib import Path


def alive(pid: int) -> bool:
    """Whether ``pid`` is a running process (a zombie is not)."""
    import psutil

    try:
        return psutil.Process(pid).status() != psutil.STATUS_ZOMBIE
    except psutil.Error:
        return False


def read_pids(path: Path) -> list[int]:
    """The pids listed in ``path`` (none when it is missing or unreadable)."""
    try:
        text = path.read_text().strip()
        return [int(p) for p in json.loads(text)] if text else []
    except (OSError, ValueError, TypeError):
        return []


def write_pids(path: Path, pids: list[int]) -> None:
    """List ``pids`` in ``path`` (no file is made for an empty list)."""
    if path.exists() or pids:
        path.write_text(json.dumps(pids))
