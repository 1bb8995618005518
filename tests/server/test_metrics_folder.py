"""The workers' metrics folder of a supervisor that died without removing it (kill -9, the
OOM killer) is removed by the next supervisor's start; a live one's is left alone."""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile

from server.supervisor import METRICS_PREFIX, sweep_metrics_dirs


def test_a_dead_supervisors_folder_is_swept_a_live_ones_kept(tmp_path, monkeypatch):
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    gone = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True,
                          text=True, check=True)
    dead = tmp_path / f"{METRICS_PREFIX}{int(gone.stdout)}-k2j4"
    live = tmp_path / f"{METRICS_PREFIX}{os.getpid()}-x9q1"
    other = tmp_path / f"{METRICS_PREFIX}kept-by-someone"  # not a supervisor's name: not ours to remove
    for folder in (dead, live, other):
        folder.mkdir()
        (folder / "counter_1.db").write_bytes(b"\0" * 8)
    sweep_metrics_dirs()
    assert not dead.exists()
    assert live.exists() and other.exists()
