"""The outsider's attack, bounded for CI (issue 12; the long form and its figures are in
RELIABILITY.md): thousands of hostile websocket frames on one socket, then schemathesis
over the whole OpenAPI document. Every frame is answered and the socket stays open; no
answer is an internal error, no request a 5xx, nothing reaches the log as a traceback;
nobody else's wallet moves and the ledger check is clean."""

from __future__ import annotations

import asyncio
import subprocess
import sys

import pytest

from loadtest.fuzz import LOGOUTS, fuzz

pytestmark = pytest.mark.slow

FRAMES = 3_000


@pytest.fixture(scope="module")
async def tables(floor):
    croupier = await floor.account("fz-croupier", "croupier")
    await floor.table("roulette", "campione", "fz-roul-live", staff=("fz-croupier",))
    await floor.table("roulette", "campione", "fz-roul-rng", mode="rng")
    await floor.table("blackjack", "lugano", "fz-bj-rng", mode="rng", min_bet=1_000, max_bet=10_000)
    await floor.table("blackjack", "titano", "fz-bj-live", staff=("fz-croupier",), min_bet=1_000, max_bet=10_000)
    await croupier.connect()
    await croupier.subscribe("fz-roul-live")
    await croupier.play("fz-roul-live", {"type": "open_spin"})
    await croupier.close()
    return ["fz-roul-live", "fz-roul-rng", "fz-bj-rng", "fz-bj-live"]


async def test_thousands_of_hostile_frames_cost_only_themselves(floor, tables):
    player = await floor.account("fz-ann", chips=100_000)
    bystander = await floor.account("fz-bob", chips=100_000)
    try:
        before = await bystander.balance()
        url = floor.server.url.replace("http", "ws", 1) + "/ws"
        out = await fuzz(url, player.token, FRAMES, seed=12, tables=tables)
        assert out.sent == FRAMES and out.closed is None  # every frame sent on one socket, still open
        assert out.codes["internal_error"] == 0, out.codes
        assert sum(out.codes.values()) >= FRAMES  # every frame answered
        assert await bystander.balance() == before
        assert "Traceback" not in floor.server.log()
        assert await floor.ledger_problems() == []
    finally:
        await player.close()
        await bystander.close()


async def test_schemathesis_finds_no_server_error_and_no_undocumented_answer(floor, tables):
    director = await floor.account("fz-director", "director")
    try:
        run = await asyncio.to_thread(
            subprocess.run,
            [sys.executable, "-m", "schemathesis.cli", "run", f"{floor.server.url}/schema/openapi.json",
             "--max-examples", "10", "--seed", "7", "--no-color",
             "--checks", "not_a_server_error,status_code_conformance,content_type_conformance,ignored_auth",
             # Logging out would revoke the run's own token, and every later request would be a
             # 401 (test_logout_e2e.py covers both routes).
             "--exclude-operation-id-regex", LOGOUTS,
             "-H", f"Authorization: Bearer {director.token}"],
            capture_output=True, text=True, timeout=300,
        )
    finally:
        await director.close()
    assert run.returncode == 0, run.stdout[-4000:]
    assert "Traceback" not in floor.server.log()
    assert await floor.ledger_problems() == []
