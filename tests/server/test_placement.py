"""Rendezvous placement (``server.placement``): every process computes the same owner for a
table from the same live set, the floor is spread evenly, and a process joining or leaving
moves only the tables it wins or held."""

from __future__ import annotations

import collections

import pytest

from server.placement import preferred

TABLES = [f"table-{i}" for i in range(3_000)]


def test_the_same_answer_whatever_the_order_of_the_live_set():
    for t in TABLES[:200]:
        assert preferred(t, ["a", "b", "c"]) == preferred(t, ["c", "a", "b"]) == preferred(t, {"b", "c", "a"})


def test_tables_spread_evenly_over_the_processes():
    counts = collections.Counter(preferred(t, ["w0", "w1", "w2", "w3"]) for t in TABLES)
    assert set(counts) == {"w0", "w1", "w2", "w3"}
    assert all(abs(n - 750) < 100 for n in counts.values()), counts  # 3,000 / 4, within a few sigma


def test_a_process_joining_takes_only_its_share_and_a_leaving_one_gives_only_its_own():
    before = {t: preferred(t, ["w0", "w1", "w2"]) for t in TABLES}
    joined = {t: preferred(t, ["w0", "w1", "w2", "w3"]) for t in TABLES}
    moved = [t for t in TABLES if before[t] != joined[t]]
    assert all(joined[t] == "w3" for t in moved)  # only to the newcomer
    assert abs(len(moved) - 750) < 100
    left = {t: preferred(t, ["w0", "w2"]) for t in TABLES}
    assert all(left[t] == before[t] for t in TABLES if before[t] != "w1")  # only w1's tables move


def test_nobody_live_nobody_preferred():
    assert preferred("table-1", []) is None


def test_a_workers_websocket_url_from_the_template():
    from server.supervisor import worker_ws_url

    assert worker_ws_url("ws://{host}:{port}/ws", "10.0.0.7", 8101, 1) == "ws://10.0.0.7:8101/ws"
    assert worker_ws_url("wss://casino.example/w{slot}/ws", "h", 8101, 3) == "wss://casino.example/w3/ws"
    assert worker_ws_url("wss://host-a.example/ws", "h", 8101, 3) == "wss://host-a.example/ws"  # the host's
    assert worker_ws_url("ws://{host}:{port}/ws", "::1", 8101, 0) == "ws://[::1]:8101/ws"


@pytest.mark.parametrize("template", ["ws://{hots}:{port}/ws", "ws://{host}:{port/ws", "ws://{0}/ws",
                                      "http://{host}:{port}/ws", "{host}:{port}"])
def test_a_template_that_names_no_websocket_url_is_refused(template):
    from server.supervisor import worker_ws_url

    with pytest.raises(ValueError, match="CASINO_WS_URL"):
        worker_ws_url(template, "h", 8101, 0)
