"""GET /metrics against a real server: bets, refusals and sockets played over the real
protocol show up exactly in the Prometheus text (counters by the amount they caused,
histograms consistent with them, the live gauges); the optional scrape token."""

from __future__ import annotations

import asyncio

import httpx
import pytest
import websockets
from prometheus_client.parser import text_string_to_metric_families

from helpers.databases import new_database
from server.client import Rejected
from server.protocol import CLOSE_UNAUTHORIZED

from .conftest import Floor, ServerProcess

pytestmark = pytest.mark.slow

T = "metrics-roul"


class Scrape:
    """One scrape, parsed by prometheus_client's own parser: sample values by name and labels."""

    def __init__(self, text: str) -> None:
        self.families = {f.name: f for f in text_string_to_metric_families(text)}
        self.samples = {(s.name, frozenset(s.labels.items())): s.value
                        for f in self.families.values() for s in f.samples}

    def get(self, name: str, **labels: str) -> float:
        return self.samples.get((name, frozenset(labels.items())), 0.0)

    def has(self, name: str, **labels: str) -> bool:
        return (name, frozenset(labels.items())) in self.samples


async def scrape(server: ServerProcess, **headers: str) -> Scrape:
    async with httpx.AsyncClient() as http:
        r = await http.get(f"{server.url}/metrics", headers=headers)
    assert r.status_code == 200, r.text
    assert r.headers["content-type"].startswith("text/plain; version=")  # the Prometheus text format
    return Scrape(r.text)


async def until(server: ServerProcess, check) -> Scrape:
    """Scrape until ``check(scrape)`` holds (what the server does after a socket closes is async)."""
    for _ in range(250):
        s = await scrape(server)
        if check(s):
            return s
        await asyncio.sleep(0.02)
    raise AssertionError("the metrics never got there")


async def test_bets_refusals_and_sockets_are_counted(floor, server):
    croupier = await floor.account("m-croupier", "croupier")
    alice = await floor.account("m-alice", chips=100_000)
    bob = await floor.account("m-bob", chips=100_000)
    await floor.table("roulette", "campione", T, staff=("m-croupier",))
    clients = [croupier, alice, bob]
    try:
        for c in clients:
            await c.connect()
            await c.subscribe(T)
        # The table's start (its resume batch) is committed: from here every batch is ours.
        before = await until(server, lambda s: s.get("casino_ws_sockets_open") == 3
                             and s.get("casino_batch_commands_count", game="roulette") >= 1)

        with pytest.raises(Rejected) as early:  # no spin open yet: the table refuses it
            await alice.bet(T, "rouge", 1_000)
        with pytest.raises(Rejected) as unknown:  # refused by the socket, before any table
            await bob.bet("no-such-table", "rouge", 1_000)
        assert unknown.value.code == "unknown_table"
        await croupier.play(T, {"type": "open_spin"})
        await alice.bet(T, "plein 17", 1_000)
        await alice.bet(T, "rouge", 2_000)
        await bob.bet(T, "pair", 5_000)
        after = await scrape(server)

        def delta(name: str, **labels: str) -> float:
            return after.get(name, **labels) - before.get(name, **labels)

        # Acked commands by game and type: 3 bets, 1 croupier command, nothing else.
        assert delta("casino_commands_accepted_total", game="roulette", command="place_bet") == 3
        assert delta("casino_commands_accepted_total", game="roulette", command="open_spin") == 1
        accepted = {s.labels["command"]: s.value for s in after.families["casino_commands_accepted"].samples
                    if s.labels["game"] == "roulette"}
        assert sum(accepted.values()) - sum(s.value for s in before.families["casino_commands_accepted"].samples
                                            if s.labels["game"] == "roulette") == 4
        # Refusals by code: the table's and the socket's, one each.
        assert early.value.code != "unknown_table"
        assert delta("casino_refusals_total", code=early.value.code) == 1
        assert delta("casino_refusals_total", code="unknown_table") == 1
        assert sum(s.value for s in after.families["casino_refusals"].samples) - \
            sum(s.value for s in before.families["casino_refusals"].samples) == 2

        # Histograms: one ack latency per acked command; one commit time and one batch size per
        # committed batch, the batch sizes adding up to the commands committed (4, each alone:
        # every command was sent after the previous one's answer).
        assert delta("casino_ack_latency_seconds_count", game="roulette") == 4
        assert delta("casino_ack_latency_seconds_bucket", game="roulette", le="+Inf") == 4
        assert 0 < delta("casino_ack_latency_seconds_sum", game="roulette") < 4 * 5
        assert delta("casino_ack_latency_seconds_bucket", game="roulette", le="5.0") == 4
        batches = delta("casino_batch_commands_count", game="roulette")
        assert delta("casino_batch_commands_sum", game="roulette") == 4
        assert 1 <= batches <= 4
        assert delta("casino_commit_seconds_count", game="roulette") == batches
        assert delta("casino_commit_seconds_bucket", game="roulette", le="+Inf") == batches
        assert delta("casino_commit_seconds_sum", game="roulette") > 0
        assert delta("casino_ack_latency_seconds_count", game="blackjack") == 0

        # Live gauges: this test's three sockets, this module's one table, a fresh lease.
        assert after.get("casino_ws_sockets_open") == 3
        assert after.get("casino_ws_send_queue_frames") >= 0
        assert 0 <= after.get("casino_ws_send_queue_frames_max") <= after.get("casino_ws_send_queue_frames")
        assert after.get("casino_tables_owned", game="roulette") == 1
        assert after.has("casino_tables_owned", game="blackjack")
        assert after.get("casino_tables_owned", game="blackjack") == 0
        assert after.get("casino_table_queue_commands") == 0  # every command was answered
        assert after.get("casino_lease_seconds") == 15
        assert after.get("casino_broker_publish_queue_frames") == 0  # (published as they came)
        assert after.get("casino_fanout_waiting_frames") == 0  # (three sockets: no hand-out is ever cut)
        assert after.get("casino_fanout_waiting_bytes") == 0
        assert 0 <= after.get("casino_lease_age_seconds") < 15
        assert after.families["casino_ws_sockets_open"].type == "gauge"
        assert after.families["casino_commands_accepted"].type == "counter"
        assert after.families["casino_ack_latency_seconds"].type == "histogram"
        # Per process: Python's own collectors come with the default registry.
        assert after.has("process_resident_memory_bytes")
        # The collector's pauses, by generation (present from the start, at 0 if none came).
        assert all(after.has("casino_gc_pause_seconds_count", generation=g) for g in "012")

        await bob.close()
        clients.remove(bob)
        await until(server, lambda s: s.get("casino_ws_sockets_open") == 2)
    finally:
        for c in clients:
            await c.close()
    await until(server, lambda s: s.get("casino_ws_sockets_open") == 0)


async def test_server_side_closes_are_counted_by_code(server):
    before = await scrape(server)
    assert before.has("casino_ws_closes_total", code="4008")  # at 0 from the start
    ws = await websockets.connect(f"ws://127.0.0.1:{server.port}/ws",
                                  additional_headers={"Authorization": "Bearer not-a-token"})
    with pytest.raises(websockets.ConnectionClosed) as closed:
        await ws.recv()
    assert closed.value.rcvd is not None and closed.value.rcvd.code == CLOSE_UNAUTHORIZED
    after = await until(server, lambda s: s.get("casino_ws_sockets_open") == 0)
    assert after.get("casino_ws_closes_total", code="4001") - before.get("casino_ws_closes_total", code="4001") == 1
    assert after.get("casino_ws_closes_total", code="4008") == before.get("casino_ws_closes_total", code="4008")


async def test_the_event_loop_is_timed(server):
    # (a chore every 0.1 s: its lateness is the loop's lag; tests/server/test_loop_lag.py)
    await until(server, lambda s: s.get("casino_event_loop_lag_seconds_count") >= 2)


async def test_health_and_metrics_need_no_user_token(server):
    async with httpx.AsyncClient() as http:
        for path in ("/health/live", "/health/ready", "/metrics"):
            assert (await http.get(f"{server.url}{path}")).status_code == 200, path
        schema = (await http.get(f"{server.url}/schema/openapi.json")).json()
    assert "/metrics" not in schema["paths"]  # outside the OpenAPI, like the health routes


@pytest.fixture(scope="module")
async def token_server(pg_url, tmp_path_factory):
    async with new_database(pg_url, "srvmetrics") as url:
        srv = ServerProcess(url, tmp_path_factory.mktemp("metrics-token"), CASINO_METRICS_TOKEN="scrape-me-123")
        srv.start()
        try:
            yield srv
        finally:
            srv.stop()


async def test_the_optional_scrape_token(token_server):
    url = f"{token_server.url}/metrics"
    async with httpx.AsyncClient() as http:
        for headers in ({}, {"Authorization": "Bearer wrong"}, {"Authorization": "scrape-me-123"}):
            r = await http.get(url, headers=headers)
            assert r.status_code == 401, headers
            assert r.headers["content-type"] == "application/problem+json"
            assert r.json()["code"] == "unauthorized"
            assert "scrape-me" not in r.text
        # A player's token is not the scrape token either.
        floor = Floor(token_server)
        player = await floor.account("m-tok-player")
        try:
            r = await http.get(url, headers={"Authorization": f"Bearer {player.token}"})
            assert r.status_code == 401
        finally:
            await player.close()
    s = await scrape(token_server, Authorization="Bearer scrape-me-123")
    assert s.get("casino_tables_owned", game="roulette") == 0
    assert s.get("casino_lease_age_seconds") == 0


async def test_only_the_public_paths_skip_the_user_token(server):
    """The token-free paths are whole paths: a table or user whose name starts like one
    (``metrics-...``, ``ws-...``, ``health-...``) still needs a token (401, never a 500)."""
    async with httpx.AsyncClient() as http:
        for path in ("/tables/metrics-x", "/tables/ws-x", "/tables/health-x", "/accounts/wsmith/balance",
                     "/tables/schema-x/limits"):
            r = await http.get(f"{server.url}{path}")
            assert r.status_code == 401, (path, r.text)
