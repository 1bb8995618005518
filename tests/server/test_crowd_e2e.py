"""A crowd table (issue 14, ``server.crowd``): a player's stream and view are his share of
the table (the table's own events and his own bets), staff see everything, and a resume or a
snapshot says the same as the live stream. Worked by hand: ann stakes 2,000 on rouge and 500
on plein 17, bob 1,000 on noir; the croupier enters 4 (black): ann loses 2,500, bob wins 1,000."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable

import pytest

from server.client import HTTPError
from server.placement import preferred

from .conftest import Floor, ServerProcess, owner_id, table_owners, until
from .test_many_processes_e2e import _processes
from .test_many_processes_e2e import redis_url as redis_url  # (a fixture)

pytestmark = pytest.mark.slow

T = "crowd-1"


def _events(client, table: str) -> list[dict]:
    return [f["event"] for f in client.frames if f.get("type") == "event" and f.get("table") == table]


async def test_a_player_sees_his_share_of_a_crowd_table(server, floor: Floor):
    croupier = await floor.account("cr-croupier", "croupier")
    ann = await floor.account("cr-ann", chips=10_000)
    bob = await floor.account("cr-bob", chips=10_000)
    await floor.table("roulette", "campione", T, staff=("cr-croupier",), crowd=True)
    try:
        for c in (croupier, ann, bob):
            await c.connect()
            await c.subscribe(T)
        await croupier.play(T, {"type": "open_spin"})
        await ann.bet(T, "rouge", 2_000)
        await bob.bet(T, "noir", 1_000)
        await ann.bet(T, "plein 17", 500)
        # Mid-window: each player's view holds his own bets only; the croupier's all three.
        mine = (await ann.request("GET", f"/tables/{T}"))["view"]["bets"]
        assert sorted((b["player"], b["spot"]) for b in mine) == [("cr-ann", "plein 17"), ("cr-ann", "rouge")]
        assert len((await croupier.request("GET", f"/tables/{T}"))["view"]["bets"]) == 3
        for step in ({"type": "launch_ball"}, {"type": "no_more_bets"},
                     {"type": "result", "number": 4, "source": "croupier"}):
            await croupier.play(T, step)
        for c in (croupier, ann, bob):
            await c.next_event(T, "spin_settled")

        seen = _events(ann, T)
        named = {e.get("player") for e in seen if e.get("player")}
        assert named == {"cr-ann"}  # nothing of bob's
        placed = [(e["spot"], e["amount"]) for e in seen if e["type"] == "wager_placed"]
        assert sorted(placed) == [("plein 17", 500), ("rouge", 2_000)]
        settled = [e for e in seen if e["type"] == "wager_settled"]
        assert sorted(e["returned"] + e["won"] - e["stake"] for e in settled) == [-2_000, -500]
        (result,) = [e for e in seen if e["type"] == "spin_result"]
        assert result["number"] == 4 and {b["player"] for b in result["bets"]} == {"cr-ann"}
        assert {"spin_opened", "ball_launched", "bets_closed", "spin_settled"} <= {e["type"] for e in seen}
        bob_seen = _events(bob, T)
        assert {e.get("player") for e in bob_seen if e.get("player")} == {"cr-bob"}
        # The croupier sees everyone's.
        staff = _events(croupier, T)
        assert {e["player"] for e in staff if e["type"] == "wager_placed"} == {"cr-ann", "cr-bob"}
        assert len([e for e in staff if e["type"] == "wager_settled"]) == 3
        assert (await ann.balance())["available"] == 7_500 and (await bob.balance())["available"] == 11_000
        # The round's recall says the same as his stream: his share (the croupier: all of it).
        rnd = next(f["round"] for f in ann.frames if f.get("type") == "event"
                                  and f["event"]["type"] == "spin_result")
        steps = await ann.request("GET", f"/tables/{T}/rounds/{rnd}")
        assert {s["event"].get("player") for s in steps if s["event"].get("player")} == {"cr-ann"}
        (res,) = [s["event"] for s in steps if s["kind"] == "spin_result"]
        assert {b["player"] for b in res["bets"]} == {"cr-ann"}
        staff_steps = await croupier.request("GET", f"/tables/{T}/rounds/{rnd}")
        assert len([s for s in staff_steps if s["kind"] == "wager_placed"]) == 3
        [mine] = await ann.request("GET", "/players/cr-ann/recall", params={"table": T})
        (res,) = [s["event"] for s in mine["steps"] if s["kind"] == "spin_result"]
        assert {b["player"] for b in res["bets"]} == {"cr-ann"}

        # A resume from before the spin replays his share only, the same as he saw live.
        first = min(f["seq"] for f in ann.frames if f.get("table") == T and f.get("type") == "event")
        live = [(f["seq"], f["event"]["type"]) for f in ann.frames if f.get("table") == T
                and f.get("type") == "event"]
        ann.frames.clear()
        ann.last_seq[T] = first - 1
        await ann.reconnect()
        await ann.wait_seq(T, live[-1][0])
        again = [(f["seq"], f["event"]["type"]) for f in ann.frames if f.get("table") == T
                 and f.get("type") == "event"]
        assert again == live
    finally:
        for c in (croupier, ann, bob):
            await c.close()
    assert await floor.ledger_problems() == []


async def test_the_crowd_setting_is_true_or_false(floor: Floor):
    with pytest.raises(HTTPError) as refused:
        await floor.table("roulette", "campione", "crowd-bad", crowd="yes")
    assert refused.value.code == "invalid_settings"
    with pytest.raises(HTTPError) as refused:  # a blackjack table has no crowd setting
        await floor.table("blackjack", "lugano", "crowd-bj", crowd=True)
    assert refused.value.code == "invalid_settings"


@pytest.fixture
async def own_db(pg_url: str):
    from helpers.databases import new_database

    async with new_database(pg_url, "crowdmp") as url:
        yield url


async def test_a_crowd_table_served_by_another_process(own_db, redis_url, tmp_path_factory):
    """The players on the process that does not serve the crowd table: each gets his share
    there through that process's one subscription (the broker in between)."""
    a, b = _processes(own_db, redis_url, tmp_path_factory.mktemp("crowd-two"), 2)
    a.start()
    b.start()
    try:
        floor = Floor(a)
        croupier = await floor.account("cm-croupier", "croupier")
        await floor.table("roulette", "campione", "crowd-mp", staff=("cm-croupier",), crowd=True)
        owner = preferred("crowd-mp", [owner_id(a), owner_id(b)])
        elsewhere = b if owner == owner_id(a) else a

        async def settled() -> bool:
            return (await table_owners(elsewhere)).get("crowd-mp") == owner

        assert await until(settled)
        players = [await Floor(elsewhere).account(f"cm-p{i}", chips=10_000) for i in range(3)]
        for c in (croupier, *players):
            await c.move_to(elsewhere.url)
            await c.subscribe("crowd-mp")
        await croupier.play("crowd-mp", {"type": "open_spin"})
        for i, p in enumerate(players):
            await p.bet("crowd-mp", "rouge", 1_000 * (i + 1))
        for step in ({"type": "launch_ball"}, {"type": "no_more_bets"},
                     {"type": "result", "number": 1, "source": "croupier"}):  # 1 is red: all win
            await croupier.play("crowd-mp", step)
        for i, p in enumerate(players):
            await p.next_event("crowd-mp", "spin_settled")
            seen = _events(p, "crowd-mp")
            assert {e.get("player") for e in seen if e.get("player")} == {p.user}
            assert [e["won"] for e in seen if e["type"] == "wager_settled"] == [1_000 * (i + 1)]
        assert len([e for e in _events(croupier, "crowd-mp") if e["type"] == "wager_settled"]) == 3
        for c in (croupier, *players):
            await c.close()
        assert await floor.ledger_problems() == []
    finally:
        a.stop()
        b.stop()


async def _subscribed_twice(floor: Floor, table: str, crowd: bool,
                            place: Callable[[str], Awaitable[ServerProcess]] | None = None) -> None:
    """Two subscribes for ``table`` sent at once by one player (on the process ``place``
    names once the table is made, if given): every event reaches him once, and nothing after
    he unsubscribes."""
    n = int(crowd)
    croupier = await floor.account(f"{table}-croupier", "croupier")
    eve = await floor.account(f"{table}-eve", chips=10_000)
    await floor.table("roulette", "campione", table, staff=(croupier.user,), crowd=crowd)
    at = await place(table) if place is not None else None
    try:
        for c in (croupier, eve):
            if at is not None:
                await c.move_to(at.url)
            else:
                await c.connect()
        # eve's first: the table's first subscription in her process (through a broker, its
        # SUBSCRIBE is awaited there).
        await asyncio.gather(eve.subscribe(table), eve.subscribe(table))
        await croupier.subscribe(table)
        await croupier.play(table, {"type": "open_spin"})
        await eve.bet(table, "rouge", 1_000 + n)
        await croupier.play(table, {"type": "launch_ball"})
        await eve.next_event(table, "ball_launched")
        await asyncio.sleep(0.3)  # (a second copy would be on its way)
        seqs = [f["seq"] for f in eve.frames if f.get("type") == "event" and f.get("table") == table]
        assert seqs and len(seqs) == len(set(seqs)), seqs
        await eve.unsubscribe(table)
        await croupier.play(table, {"type": "no_more_bets"})
        await asyncio.sleep(0.3)
        assert not [f for f in eve.frames if f.get("type") == "event" and f["event"]["type"] == "bets_closed"]
    finally:
        for c in (croupier, eve):
            await c.close()


@pytest.mark.parametrize("crowd", [False, True], ids=["ordinary", "crowd"])
async def test_two_subscribes_at_once_leave_one_subscription(server, floor: Floor, crowd: bool):
    """A client that sends two subscribes for a table at once (a reconnect racing its own
    retry, say) is subscribed once. (Here, with no broker, the two hardly interleave: the
    form below has one between them.)"""
    await _subscribed_twice(floor, f"crowd-twice-{int(crowd)}", crowd)


@pytest.mark.parametrize("crowd", [False, True], ids=["ordinary", "crowd"])
async def test_two_subscribes_at_once_through_a_broker_leave_one(own_db, redis_url, tmp_path_factory, crowd: bool):
    """The same on a process that does not serve the table: each subscribe waits for Redis,
    so the second can get its subscription while the first waits. The first then went on
    unseen (its events twice to the socket, and after the unsubscribe); the later now
    replaces it."""
    a, b = _processes(own_db, redis_url, tmp_path_factory.mktemp("twice-two"), 2)
    a.start()
    b.start()
    try:
        async def elsewhere(table: str) -> ServerProcess:
            """The process that does not serve ``table``, once both agree on its owner."""
            owner = preferred(table, [owner_id(a), owner_id(b)])
            other = b if owner == owner_id(a) else a

            async def settled() -> bool:
                return (await table_owners(other)).get(table) == owner

            assert await until(settled)
            return other

        await _subscribed_twice(Floor(a), f"twice-mp-{int(crowd)}", crowd, elsewhere)
    finally:
        a.stop()
        b.stop()
