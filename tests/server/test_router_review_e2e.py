"""An outsider's review of the routing between server processes (``server/router.py``,
``server/manager.py``, the websocket's forwarding): each test drives real ``casino serve``
processes sharing one PostgreSQL and one Redis of the test's own, and attacks one claim of
docs/operations.md ("Several processes", "Scaling as it stands") or docs/protocol.md ("The
rules of the conversation"). Each test proved a bug of the first version (the review's
findings); they hold the fixes."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import signal

import pytest

from server.client import CasinoClient, Rejected
from server.placement import preferred

from .conftest import PASSWORD, Floor, ServerProcess, owner_id, table_owners, until

pytestmark = pytest.mark.slow


def _proc(db_url: str, redis_url: str, tmp, **env: str) -> ServerProcess:
    return ServerProcess(db_url, tmp, REDIS_URL=redis_url, **{"CASINO_LEASE_SECONDS": "2", **env})


def _name_for(prefix: str, owner: ServerProcess, procs: list[ServerProcess]) -> str:
    """A table id that the placement gives to ``owner`` among ``procs``."""
    ids = [owner_id(p) for p in procs]
    for i in range(1000):
        name = f"{prefix}-{i}"
        if preferred(name, ids) == owner_id(owner):
            return name
    raise AssertionError("no name found")


async def _settled(server: ServerProcess, table: str, owner: ServerProcess) -> None:
    async def ok() -> bool:
        return (await table_owners(server)).get(table) == owner_id(owner)

    assert await until(ok), await table_owners(server)


async def _login(server: ServerProcess, user: str) -> CasinoClient:
    c = CasinoClient(server.url)
    await c.login(user, PASSWORD)
    return c


def _events(c: CasinoClient, table: str) -> list[dict]:
    return [f for f in c.frames if f.get("type") == "event" and f.get("table") == table]


def _seqs_ok(c: CasinoClient, table: str, since: int) -> tuple[list[int], list[int]]:
    """(holes, duplicates) among the seqs this client got for ``table`` after ``since``."""
    seqs = [f["seq"] for f in _events(c, table) if f["seq"] > since]
    holes = [s for s in range(since + 1, max(seqs, default=since) + 1) if s not in seqs]
    dups = sorted({s for s in seqs if seqs.count(s) > 1})
    return holes, dups


# ---- 1. a broker restart ---------------------------------------------------------------------


async def test_events_flow_again_after_a_redis_restart(db_url, own_redis, tmp_path_factory):
    """docs: 'losing the broker loses nothing committed' and 'a subscriber that finds a hole
    in the seqs gets the missing events from PostgreSQL first'. After Redis restarts, the
    floor must carry events again: to a socket on the owner and to one on another process."""
    folder, url = own_redis
    tmp = tmp_path_factory.mktemp("redis-restart")
    a, b = _proc(db_url, url, tmp), _proc(db_url, url, tmp)
    a.start()
    b.start()
    clients: list[CasinoClient] = []
    try:
        floor = Floor(a)
        croupier = await floor.account("rr-croupier", "croupier")
        table = _name_for("rr-live", a, [a, b])
        await floor.table("roulette", "campione", table, staff=("rr-croupier",))
        await _settled(b, table, a)
        near = await Floor(a).account("rr-near", chips=100_000)  # on the owner
        far = await Floor(b).account("rr-far", chips=100_000)  # on the other process
        clients += [croupier, near, far]
        await croupier.move_to(b.url)  # the console on the other process too
        for c in clients:
            await c.connect() if c.ws is None else None
            await c.subscribe(table)
        await croupier.play(table, {"type": "open_spin"})
        await far.next_event(table, "spin_opened", timeout=10)
        since = far.last_seq[table]

        from server.redis_embedded import _shutdown, _spawn

        _shutdown(folder)
        await asyncio.sleep(3)
        _spawn(folder)
        await asyncio.sleep(3)  # time to reconnect

        # Commands still reach the owner from the other process (the router reconnects) ...
        async def bet_goes_through() -> bool:
            try:
                await far.bet(table, "rouge", 1_000)
                return True
            except (Rejected, TimeoutError):
                return False

        assert await until(bet_goes_through, 20)
        for step in ({"type": "launch_ball"}, {"type": "no_more_bets"},
                     {"type": "result", "number": 1, "source": "croupier"}):
            await croupier.play(table, step)
        # ... and the events of that spin reach both sockets.
        got_near = await near.next_event(table, "spin_settled", timeout=10)
        got_far = await far.next_event(table, "spin_settled", timeout=10)
        assert got_near and got_far
        assert _seqs_ok(far, table, since) == ([], [])
    finally:
        for c in clients:
            with contextlib.suppress(Exception):
                await c.close()
        a.stop()
        b.stop()


# ---- 2. presence from a process restarted under the same name --------------------------------


async def test_a_seat_is_released_when_its_process_restarts_under_the_same_name(db_url, own_redis, tmp_path_factory):
    """paul follows a blackjack table through process b (not its owner) and sits; b is
    killed -9 and restarted at once under the same owner id (what the supervisor does: the
    slot's CASINO_OWNER_ID), paul does not come back. He is gone from every process: his seat
    must go after CASINO_SEAT_RELEASE_SECONDS, as it does when b stays dead."""
    _, url = own_redis
    tmp = tmp_path_factory.mktemp("presence")
    env = {"CASINO_LEASE_SECONDS": "10", "CASINO_SEAT_RELEASE_SECONDS": "1"}
    a, b = _proc(db_url, url, tmp, **env), _proc(db_url, url, tmp, **env)
    a.start()
    b.start()
    clients: list[CasinoClient] = []
    try:
        table = _name_for("rr-seat", a, [a, b])
        await Floor(a).table("blackjack", "lugano", table)
        await _settled(b, table, a)
        watch = await Floor(a).account("rr-watch")  # on the owner: sees the release
        paul = await Floor(b).account("rr-paul", chips=10_000)  # on the other process
        clients += [watch, paul]
        for c in clients:
            await c.connect()
            await c.subscribe(table)
        await paul.sit(table, 1)
        b.kill()
        with contextlib.suppress(Exception):
            await paul.close()
        b.start()  # the same port: the same owner id; paul does not come back
        released = [f for f in await _collect(watch, table, 8.0) if f["event"]["type"] == "seat_released"]
        assert released, "paul's seat was never released"
    finally:
        for c in clients:
            with contextlib.suppress(Exception):
                await c.close()
        a.stop()
        b.stop()


async def _collect(c: CasinoClient, table: str, seconds: float) -> list[dict]:
    """The events ``c`` gets for ``table`` within ``seconds``."""
    out: list[dict] = []
    with contextlib.suppress(TimeoutError, asyncio.TimeoutError):
        async with asyncio.timeout(seconds):
            while True:
                out.append(await c.next_event(table, timeout=seconds))
    return [f for f in out if f.get("type") == "event"]


# ---- 3. one client's commands in the order sent --------------------------------------------


async def _stream(c: CasinoClient, table: str, prefix: str, n: int, every: float) -> list[str]:
    """Send ``n`` bets without waiting for their answers (a console or a fast client
    pipelines), ``every`` seconds apart; their cids in the order sent."""
    cids = []
    for k in range(n):
        cid = f"{prefix}-{k}"
        cids.append(cid)
        await c.send_raw(json.dumps({"type": "play", "table": table, "cid": cid,
                                     "command": {"type": "place_bet", "spot": f"plein {k % 37}", "amount": 1_000}}))
        await asyncio.sleep(every)
    return cids


def _answers(c: CasinoClient, cids: list[str]) -> dict[str, list[dict]]:
    wanted, out = set(cids), {}
    for f in c.frames:
        if f.get("type") in ("accepted", "rejected") and f.get("cid") in wanted:
            out.setdefault(f["cid"], []).append(f)
    return out


async def _bets_across_a_hand_over(db_url: str, url: str, tmp, tag: str):
    """A player connected to a sends 160 bets back to back at a table served by b; b stops
    gracefully (SIGTERM) meanwhile and the table moves to a. Returns (the cids in the order
    sent, every answer per cid, the seqs of the player's wager_placed events in the history)."""
    a, b = _proc(db_url, url, tmp), _proc(db_url, url, tmp)
    a.start()
    b.start()
    clients: list[CasinoClient] = []
    try:
        floor = Floor(a)
        croupier = await floor.account(f"rr-{tag}c", "croupier")
        table = _name_for(f"rr-{tag}", b, [a, b])
        await floor.table("roulette", "campione", table, staff=(f"rr-{tag}c",))
        await _settled(a, table, b)
        ana = await floor.account(f"rr-{tag}ana", chips=10_000_000)
        clients += [croupier, ana]
        for c in clients:
            await c.connect()  # both on a, the process that does not serve the table
            await c.subscribe(table)
        await croupier.play(table, {"type": "open_spin"})
        sending = asyncio.create_task(_stream(ana, table, tag, 160, 0.025))
        await asyncio.sleep(0.8)
        await asyncio.to_thread(b.stop)  # SIGTERM: b hands its tables back
        cids = await sending

        async def all_answered() -> bool:
            return len(_answers(ana, cids)) == len(cids)

        if not await until(all_answered, 60):  # (a loaded machine: 160 answers across a hand-over)
            got = _answers(ana, cids)
            missing = [c for c in cids if c not in got]
            last = [(c, got[c][0].get("code")) for c in cids if c in got][-20:]
            raise AssertionError(f"unanswered {missing}; the last answered {last}")
        rows = await _db_rows(db_url, "SELECT seq FROM table_events WHERE table_id = $1 AND actor = $2 "
                                      "AND kind = 'wager_placed' ORDER BY seq", table, ana.user)
        return cids, _answers(ana, cids), [r["seq"] for r in rows]
    finally:
        for c in clients:
            with contextlib.suppress(Exception):
                await c.close()
        a.stop()
        b.stop()


async def test_bets_across_a_hand_over_are_answered_once_and_applied_once(db_url, own_redis, tmp_path_factory):
    """What held up: across a graceful hand-over every pipelined bet is answered exactly once,
    each accepted bet is in the history exactly once (at the seq it was acknowledged with),
    and no refused one is."""
    cids, answers, placed = await _bets_across_a_hand_over(db_url, own_redis[1], tmp_path_factory.mktemp("once"),
                                                           "once")
    assert all(len(v) == 1 for v in answers.values())
    acked = sorted(got[0]["seq"] for got in answers.values() if got[0]["type"] == "accepted")
    assert acked == placed  # (one event per bet: its seq is the bet's)


async def test_one_clients_commands_keep_their_order_across_a_hand_over(db_url, own_redis, tmp_path_factory):
    """docs: 'Messages to one process are gathered per event-loop turn into one publish on its
    inbox channel, so one client's commands arrive in the order sent.' The accepted bets of
    the hand-over above must have been applied in the order sent."""
    cids, answers, _ = await _bets_across_a_hand_over(db_url, own_redis[1], tmp_path_factory.mktemp("order"), "ord")
    applied = sorted((cids.index(cid), got[0]["seq"]) for cid, got in answers.items() if got[0]["type"] == "accepted")
    out_of_order = [(i, s, j, t) for (i, s), (j, t) in zip(applied, applied[1:], strict=False) if t < s]
    assert out_of_order == [], f"sent i before j, applied at seq s after t: {out_of_order[:10]}"


# ---- 4. an owner that answers late: refused, then applied ---------------------------------------


def _freeze(server: ServerProcess) -> None:
    os.kill(server.proc.pid, signal.SIGSTOP)  # a stalled owner (a long batch, a paging host)


def _thaw(server: ServerProcess) -> None:
    os.kill(server.proc.pid, signal.SIGCONT)


async def _db_rows(db_url: str, sql: str, *args):
    import asyncpg

    conn = await asyncpg.connect(db_url)
    try:
        return await conn.fetch(sql, *args)
    finally:
        await conn.close()


async def test_limits_refused_through_another_process_are_not_applied_later(db_url, own_redis, tmp_path_factory):
    """A director's PUT /tables/{id}/limits on a process that does not serve the table goes to
    the owner (router.service). If the owner is slow (> ANSWER_SECONDS), the director is told
    504 outcome_unknown ('look before trying again'), and the owner, getting the call after
    its deadline, does not apply it behind his back."""
    _, url = own_redis
    tmp = tmp_path_factory.mktemp("frozen-limits")
    env = {"CASINO_LEASE_SECONDS": "30"}  # the stall is shorter than a lease: no failover
    a, b = _proc(db_url, url, tmp, **env), _proc(db_url, url, tmp, **env)
    a.start()
    b.start()
    director = None
    try:
        table = _name_for("rr-lim", b, [a, b])
        await Floor(a).table("roulette", "campione", table)
        await _settled(a, table, b)
        director = await Floor(a).account("rr-dir", "director")
        _freeze(b)
        try:
            with pytest.raises(Exception) as refused:
                await director.request("PUT", f"/tables/{table}/limits",
                                       json={"minimum": 2_000, "maxima": {}, "reason": "rr-frozen-owner"})
            # Delivered and not answered in time: the outcome is unknown to the caller (504) ...
            assert getattr(refused.value, "code", "") == "outcome_unknown", refused.value
        finally:
            _thaw(b)
        await asyncio.sleep(2)  # ... and the owner, getting it after its deadline, never applies it
        history = await director.request("GET", f"/tables/{table}/limits")
        assert not [v for v in history if "rr-frozen-owner" in json.dumps(v)], history
    finally:
        if director is not None:
            await director.close()
        a.stop()
        b.stop()


async def test_a_command_refused_after_the_patience_is_not_applied_later(db_url, own_redis, tmp_path_factory):
    """The owner stalls longer than the router's PATIENCE but shorter than its lease: the
    player on the other process is told outcome_unknown (never table_unavailable, which
    promises nothing was applied), and the owner, getting the call after its deadline, does
    not apply it."""
    _, url = own_redis
    tmp = tmp_path_factory.mktemp("frozen-play")
    env = {"CASINO_LEASE_SECONDS": "40"}
    a, b = _proc(db_url, url, tmp, **env), _proc(db_url, url, tmp, **env)
    a.start()
    b.start()
    clients: list[CasinoClient] = []
    try:
        floor = Floor(a)
        croupier = await floor.account("rr-fc", "croupier")
        table = _name_for("rr-frz", b, [a, b])
        await floor.table("roulette", "campione", table, staff=("rr-fc",))
        await _settled(a, table, b)
        ben = await floor.account("rr-ben", chips=100_000)
        clients += [croupier, ben]
        for c in clients:
            await c.connect()
            await c.subscribe(table)
        await croupier.play(table, {"type": "open_spin"})
        _freeze(b)
        try:
            with pytest.raises(Rejected) as refused:
                await ben.bet(table, "rouge", 5_000, cid="rr-frozen-bet")
            assert refused.value.code == "outcome_unknown"  # delivered, unanswered: never "not applied"
        finally:
            _thaw(b)
        await asyncio.sleep(3)
        rows = await _db_rows(db_url, "SELECT seq FROM table_events WHERE table_id = $1 AND actor = 'rr-ben' "
                                      "AND kind = 'wager_placed'", table)
        assert rows == [], f"the refused bet was applied at seq {[r['seq'] for r in rows]}"
    finally:
        for c in clients:
            with contextlib.suppress(Exception):
                await c.close()
        a.stop()
        b.stop()


# ---- 5. who a forwarded call says it comes from ------------------------------------------------


async def test_a_forged_call_on_the_broker_is_refused(db_url, own_redis, tmp_path_factory):
    """The inbox channel casino.proc.<owner> carries the caller's identity (Call.who) with no
    proof: a process of the floor is trusted to have checked the token. Anything else that
    reaches the broker (REDIS_URL to a shared Redis) must not be able to stake a player's
    money by publishing a Call."""
    from redis.asyncio import Redis

    from server.auth import Principal
    from server.protocol import encoder
    from server.router import Call, Envelope, inbox

    _, url = own_redis
    tmp = tmp_path_factory.mktemp("forged")
    a = _proc(db_url, url, tmp)
    a.start()
    clients: list[CasinoClient] = []
    try:
        floor = Floor(a)
        croupier = await floor.account("rr-gc", "croupier")
        await floor.table("roulette", "campione", "rr-forged", staff=("rr-gc",))
        victim = await floor.account("rr-victim", chips=50_000)
        clients += [croupier, victim]
        await croupier.connect()
        await croupier.subscribe("rr-forged")
        await croupier.play("rr-forged", {"type": "open_spin"})
        bet = json.dumps({"type": "place_bet", "spot": "plein 13", "amount": 20_000}).encode()
        import msgspec

        call = Call(1, "rr-nobody", "play", "rr-forged", Principal("rr-victim", "player"), "forged-1", msgspec.Raw(bet))
        redis = Redis.from_url(url)
        try:
            await redis.publish(inbox(owner_id(a)), encoder.encode(Envelope("rr-nobody", [call])))
        finally:
            await redis.aclose()
        await asyncio.sleep(2)
        assert (await victim.balance())["available"] == 50_000
    finally:
        for c in clients:
            with contextlib.suppress(Exception):
                await c.close()
        a.stop()


# ---- 7. one table that cannot start ------------------------------------------------------------


async def test_one_table_that_cannot_start_does_not_block_the_take_over_of_the_others(
        db_url, own_redis, tmp_path_factory):
    """docs (Crash safety): a table whose history does not reproduce 'is not started and the
    log says which table'. Its owner is killed; another process must still take over the
    owner's other tables."""
    _, url = own_redis
    tmp = tmp_path_factory.mktemp("bad-table")
    a, b = _proc(db_url, url, tmp), _proc(db_url, url, tmp)
    ids = [owner_id(a), owner_id(b)]
    # Two tables a keeps while both live (load_tables reads them by id: the bad one first).
    bad, good = [n for n in (f"rr-brk-{i}" for i in range(200)) if preferred(n, ids) == ids[0]][:2]
    a.start()
    b.start()
    try:
        floor = Floor(a)
        for t in (bad, good):
            await floor.table("roulette", "campione", t)
        await _settled(b, good, a)
        await asyncio.sleep(1)  # a renews both leases together
        await _db_rows(db_url, "UPDATE table_state SET state = 'not a state'::bytea WHERE table_id = $1", bad)
        a.kill()

        async def good_one_served() -> bool:
            return (await table_owners(b)).get(good) == owner_id(b)

        assert await until(good_one_served, 10), await table_owners(b)
    finally:
        a.stop()
        b.stop()
        # (else no process of this module starts again: the bad table's lease has run out, and
        # an exception from a table's start in TableManager.start stops the server's start)
        await _db_rows(db_url, "UPDATE casino_tables SET archived_at = now(), archived_by = 'rr' WHERE id = $1", bad)


# ---- what held up ----------------------------------------------------------------------------------


async def test_a_seat_is_released_when_its_process_dies_for_good(db_url, own_redis, tmp_path_factory):
    """The control of the same-name restart above: paul's process is killed and stays dead;
    the owner forgets what it said once it stops beating, and paul's seat goes."""
    _, url = own_redis
    tmp = tmp_path_factory.mktemp("presence-dead")
    env = {"CASINO_SEAT_RELEASE_SECONDS": "1"}
    a, b = _proc(db_url, url, tmp, **env), _proc(db_url, url, tmp, **env)
    a.start()
    b.start()
    clients: list[CasinoClient] = []
    try:
        table = _name_for("rr-seatd", a, [a, b])
        await Floor(a).table("blackjack", "lugano", table)
        await _settled(b, table, a)
        watch = await Floor(a).account("rr-watch2")
        peter = await Floor(b).account("rr-peter", chips=10_000)
        clients += [watch, peter]
        for c in clients:
            await c.connect()
            await c.subscribe(table)
        await peter.sit(table, 1)
        b.kill()
        released = await watch.next_event(table, "seat_released", timeout=15)
        assert released["event"]["player"] == "rr-peter" if "player" in released["event"] else True
    finally:
        for c in clients:
            with contextlib.suppress(Exception):
                await c.close()
        a.stop()
        b.stop()


async def test_the_owner_checks_the_role_and_the_seat_of_a_forwarded_command(db_url, own_redis, tmp_path_factory):
    """Through a process that does not serve the table: a croupier not assigned to it, a
    player staking for another, a command carrying its own actor, a player giving a
    croupier's command: each refused by the rules, as on the owner itself; an inspector's
    game command never leaves the process it reached."""
    _, url = own_redis
    tmp = tmp_path_factory.mktemp("roles")
    a, b = _proc(db_url, url, tmp), _proc(db_url, url, tmp)
    a.start()
    b.start()
    clients: list[CasinoClient] = []
    try:
        floor = Floor(a)
        table = _name_for("rr-roles", b, [a, b])
        mine = await floor.account("rr-mine", "croupier")
        other = await floor.account("rr-other", "croupier")
        inspector = await floor.account("rr-insp", "inspector")
        await floor.table("roulette", "campione", table, staff=("rr-mine",))
        await _settled(a, table, b)
        eve = await floor.account("rr-eve", chips=10_000)
        await floor.account("rr-bob", chips=10_000)
        clients += [mine, other, inspector, eve]
        for c in clients:
            await c.connect()  # on a
            await c.subscribe(table)
        with pytest.raises(Rejected) as r:
            await other.play(table, {"type": "open_spin"})
        assert r.value.code == "not_your_table"
        with pytest.raises(Rejected) as r:
            await eve.play(table, {"type": "open_spin"})
        assert r.value.code not in ("", "table_unavailable")
        with pytest.raises(Rejected) as r:
            await inspector.play(table, {"type": "open_spin"})
        assert r.value.code == "forbidden"
        await mine.play(table, {"type": "open_spin"})
        for forged in ({"player": "rr-bob"}, {"by": "rr-bob"}, {"role": "croupier"}):
            with pytest.raises(Rejected):
                await eve.bet(table, "rouge", 1_000, **forged)
        assert (await eve.balance())["available"] == 10_000
    finally:
        for c in clients:
            with contextlib.suppress(Exception):
                await c.close()
        a.stop()
        b.stop()


async def test_no_hand_over_mid_spin_and_no_hole_on_another_process(db_url, own_redis, tmp_path_factory):
    """A table whose preferred process starts while a spin is in the air stays where it is
    until the spin is settled, then moves; a socket on the other process sees every seq
    once, across the move; the ledger check is clean."""
    _, url = own_redis
    tmp = tmp_path_factory.mktemp("no-mid-spin")
    a, b = _proc(db_url, url, tmp), _proc(db_url, url, tmp)
    a.start()
    clients: list[CasinoClient] = []
    try:
        floor = Floor(a)
        table = _name_for("rr-spin", b, [a, b])  # b's, once b lives
        croupier = await floor.account("rr-sc", "croupier")
        await floor.table("roulette", "campione", table, staff=("rr-sc",))
        dana = await floor.account("rr-dana", chips=100_000)
        clients += [croupier, dana]
        for c in clients:
            await c.connect()
            await c.subscribe(table)
        since = dana.last_seq[table]
        await croupier.play(table, {"type": "open_spin"})
        await dana.bet(table, "rouge", 2_000)
        await croupier.play(table, {"type": "launch_ball"})
        b.start()
        await asyncio.sleep(4)  # six lease ticks: a keeps the table while the ball is in the air
        assert (await table_owners(a)).get(table) == owner_id(a)
        await dana.bet(table, "noir", 1_000)  # a late bet is the rules' to refuse or not ...
        for step in ({"type": "no_more_bets"}, {"type": "result", "number": 1, "source": "croupier"}):
            await croupier.play(table, step)
        await dana.next_event(table, "spin_settled", timeout=10)
        await _settled(a, table, b)  # ... and settled, the table moves
        await croupier.play(table, {"type": "open_spin"})  # from a, to b now
        await dana.bet(table, "rouge", 1_000)
        await dana.next_event(table, "wager_placed", timeout=10)
        await asyncio.sleep(0.5)
        assert _seqs_ok(dana, table, since) == ([], [])
        assert await floor.ledger_problems() == []
    finally:
        for c in clients:
            with contextlib.suppress(Exception):
                await c.close()
        a.stop()
        b.stop()
