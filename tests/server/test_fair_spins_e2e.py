"""A player verifies an RNG spin he played (issue 17, provably fair spins): the commitment
came with ``spin_opened``, before his bet; after the result ``spin_revealed`` gives the seed;
``casino verify`` (a subprocess, the player's own login) recomputes the number from the
spin's recall. The view shows the commitment, never the seed, while the spin runs."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys

import pytest

from roulette import fair

from .conftest import PASSWORD

pytestmark = pytest.mark.slow


async def test_a_player_verifies_a_spin_he_played(server, floor):
    await floor.table("roulette", "campione", "fair-rng", mode="rng")
    ivy = await floor.account("fair-ivy", chips=10_000)
    try:
        await ivy.connect()
        await ivy.subscribe("fair-rng")
        opened = await ivy.next_event("fair-rng", "spin_opened", timeout=30)
        spin, committed = opened["event"]["spin"], opened["event"]["commitment"]
        assert len(committed) == 64
        view = (await ivy.request("GET", "/tables/fair-rng"))["view"]
        if view["spin"] == spin and view["phase"] == "open":
            assert view["commitment"] == committed and "seed" not in view
        await ivy.bet("fair-rng", "rouge", 500)
        revealed = (await ivy.next_event("fair-rng", "spin_revealed", timeout=30))["event"]
        assert revealed["spin"] == spin and revealed["commitment"] == committed
        assert fair.verify(committed, revealed["seed"], "fair-rng", spin, revealed["number"])

        env = {**os.environ, "CASINO_PASSWORD": PASSWORD}
        run = await asyncio.to_thread(
            subprocess.run, [sys.executable, "-m", "server.cli", "verify", "fair-rng", str(spin), "--url", server.url,
                             "--user", "fair-ivy"], capture_output=True, text=True, env=env, timeout=60)
        assert run.returncode == 0, run.stdout + run.stderr
        assert run.stdout.startswith("verified: ") and f"gives {revealed['number']}" in run.stdout

        # A seed that is not the one committed to is caught.
        other = "ab" * 32
        run = await asyncio.to_thread(
            subprocess.run, [sys.executable, "-m", "server.cli", "verify", "fair-rng", str(spin), "--commitment",
                             committed, "--seed", other, "--number", str(revealed["number"])],
            capture_output=True, text=True, timeout=60)
        assert run.returncode == 1 and run.stdout.startswith("NOT VERIFIED")
    finally:
        await ivy.close()
