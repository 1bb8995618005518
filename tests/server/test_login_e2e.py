"""Logins against a real server: wrong passwords are answered 401, then 429 with
Retry-After (no password checked while one must wait), then the account is locked, in the
audit log, and stays locked across a restart; an unknown name gets exactly the answers a
wrong password gets and counts for the address; a good login after the wait clears the
failures; and a storm of logins never holds up other sockets (argon2 runs off the loop).

Each scenario comes from its own client address: uvicorn takes X-Forwarded-For from a
proxy on 127.0.0.1 (its default FORWARDED_ALLOW_IPS), as from a reverse proxy in front."""

from __future__ import annotations

import asyncio

import httpx
import pytest

from .conftest import PASSWORD, Floor, ServerProcess

pytestmark = pytest.mark.slow

LIMITS = {
    "CASINO_LOGIN_USER_FAILURES": "3",  # the 3rd failure of a name makes the next attempt wait 1 s
    "CASINO_LOGIN_DELAY_SECONDS": "1",  # ... then 2 s after the 4th
    "CASINO_LOGIN_LOCK_FAILURES": "5",  # the 5th locks it
    "CASINO_LOGIN_LOCK_SECONDS": "3600",
    "CASINO_LOGIN_ADDRESS_FAILURES": "6",
}


@pytest.fixture(scope="module")
def server(db_url: str, tmp_path_factory):
    srv = ServerProcess(db_url, tmp_path_factory.mktemp("login"), **LIMITS)
    srv.start()
    try:
        yield srv
    finally:
        srv.stop()


@pytest.fixture(scope="module")
def floor(server) -> Floor:
    return Floor(server)


async def attempt(server, user: str, password: str, address: str) -> httpx.Response:
    async with httpx.AsyncClient(base_url=server.url, timeout=30) as http:
        return await http.post("/auth/login", json={"user": user, "password": password},
                               headers={"X-Forwarded-For": address})


def answer(r: httpx.Response) -> tuple[int, str]:
    return r.status_code, r.json().get("code", "")


def retry_after(r: httpx.Response) -> int:
    assert r.status_code == 429 and r.headers["content-type"] == "application/problem+json"
    seconds = int(r.headers["retry-after"])
    assert seconds >= 1
    return seconds


async def test_wrong_passwords_401_then_429_then_a_lock_that_survives_a_restart(server, floor):
    await (await floor.account("tina")).close()
    ip = "10.0.1.1"
    for _ in range(3):
        assert answer(await attempt(server, "tina", "wrong-pass", ip)) == (401, "bad_credentials")
    waiting = await attempt(server, "tina", "wrong-pass", ip)
    assert answer(waiting) == (429, "too_many_attempts")
    assert waiting.json()["status"] == 429 and waiting.json()["instance"] == "/auth/login"
    # While she must wait even the right password is not checked.
    right = await attempt(server, "tina", PASSWORD, ip)
    assert answer(right) == (429, "too_many_attempts")
    await asyncio.sleep(retry_after(right))
    assert answer(await attempt(server, "tina", "wrong-pass", ip)) == (401, "bad_credentials")  # 4th
    again = await attempt(server, "tina", "wrong-pass", ip)
    assert answer(again) == (429, "too_many_attempts")
    await asyncio.sleep(retry_after(again))
    assert answer(await attempt(server, "tina", "wrong-pass", ip)) == (401, "bad_credentials")  # 5th: locked
    locked = await attempt(server, "tina", PASSWORD, ip)
    assert answer(locked) == (429, "account_locked") and retry_after(locked) > 3000

    admin = await floor.admin()
    try:
        audit = await admin.request("GET", "/audit", params={"target": "tina"})
    finally:
        await admin.close()
    assert [(e["actor"], e["action"], e["detail"]["failures"], e["detail"]["address"])
            for e in audit if e["action"] == "auth.lock"] == [("system", "auth.lock", 5, ip)]

    server.stop()
    server.start()
    still = await attempt(server, "tina", PASSWORD, "10.0.1.2")  # another address: the name is locked
    assert answer(still) == (429, "account_locked") and retry_after(still) > 3000


async def test_an_unknown_name_is_answered_like_a_wrong_password_and_counts_for_the_address(server, floor):
    await (await floor.account("uma")).close()
    await (await floor.account("ulla")).close()
    # The same answers, attempt after attempt, for a real name and one that does not exist.
    seen = {}
    for name, ip in (("ulla", "10.0.2.1"), ("no-such-user", "10.0.2.2")):
        answers = []
        for _ in range(4):
            r = await attempt(server, name, "wrong-pass", ip)
            answers.append((r.status_code, r.json(), r.headers.get("retry-after")))
        seen[name] = answers
    assert seen["ulla"] == seen["no-such-user"]
    assert [a[0] for a in seen["ulla"]] == [401, 401, 401, 429]

    # Six failures from one address, each with another (unknown) name: the address waits,
    # whoever logs in from it; from elsewhere the same account logs in.
    ip = "10.0.2.3"
    assert answer(await attempt(server, "uma", "wrong-pass", ip)) == (401, "bad_credentials")
    for n in range(5):
        assert answer(await attempt(server, f"ghost-{n}", "wrong-pass", ip)) == (401, "bad_credentials")
    blocked = await attempt(server, "uma", PASSWORD, ip)
    assert answer(blocked) == (429, "too_many_attempts")
    retry_after(blocked)
    assert (await attempt(server, "uma", PASSWORD, "10.0.2.4")).status_code == 200


async def test_a_good_login_after_the_wait_works_and_clears_the_failures(server, floor):
    await (await floor.account("vera")).close()
    ip = "10.0.3.1"
    for _ in range(3):
        assert answer(await attempt(server, "vera", "wrong-pass", ip)) == (401, "bad_credentials")
    waiting = await attempt(server, "vera", PASSWORD, ip)
    assert answer(waiting) == (429, "too_many_attempts")
    await asyncio.sleep(retry_after(waiting))
    ok = await attempt(server, "vera", PASSWORD, ip)
    assert ok.status_code == 200 and ok.json()["user"] == "vera"
    # Cleared: three more failures before she waits again, and no lock at the 5th in all.
    ip = "10.0.3.2"
    assert [answer(await attempt(server, "vera", "wrong-pass", ip)) for _ in range(4)] == \
        [(401, "bad_credentials")] * 3 + [(429, "too_many_attempts")]


async def test_a_burst_of_guesses_gets_no_more_password_checks_than_the_limit(server, floor):
    """Ten wrong passwords at once for one name: only the three the name may fail are
    checked (401); the others are refused at once (429), not queued for argon2."""
    await (await floor.account("wanda")).close()
    burst = await asyncio.gather(*(attempt(server, "wanda", f"guess-{n}", "10.0.5.1") for n in range(10)))
    assert sorted(answer(r) for r in burst) == [(401, "bad_credentials")] * 3 + [(429, "too_many_attempts")] * 7


async def test_a_login_storm_does_not_hold_up_other_sockets(server, floor):
    """8 clients log in again and again (right passwords: every login checks one): pings
    on an open websocket are all answered while the storm's logins are still coming back.
    With argon2 on the event loop each ping waits for a password check to end, so 30 of
    them cannot all come back before 16 logins do."""
    storm = [f"storm-{n}" for n in range(8)]
    for user in storm:
        await (await floor.account(user)).close()
    watcher = await floor.account("watcher")
    await watcher.connect()
    order: list[str] = []
    first_login = asyncio.Event()

    async def client(n: int, user: str) -> None:
        async with httpx.AsyncClient(base_url=server.url, timeout=60) as http:
            for _ in range(2):
                r = await http.post("/auth/login", json={"user": user, "password": PASSWORD},
                                    headers={"X-Forwarded-For": f"10.0.4.{n}"})
                assert r.status_code == 200
                order.append("login")
                first_login.set()

    try:
        logins = [asyncio.create_task(client(n, user)) for n, user in enumerate(storm)]
        await first_login.wait()  # the storm is on: password checks are running
        for _ in range(30):
            assert (await watcher.command({"type": "ping"}))["type"] == "pong"
            order.append("pong")
        await asyncio.gather(*logins)
    finally:
        await watcher.close()
    assert order.count("login") == 16
    last_pong = len(order) - 1 - order[::-1].index("pong")
    assert "login" in order[last_pong:], f"every login came back before the pings: {order}"

    # Many people behind one address (a floor behind NAT) log in at once: more than the
    # address may fail, all being checked together.
    together = await asyncio.gather(*(attempt(server, user, PASSWORD, "10.0.6.1") for user in storm for _ in "ab"))
    assert [r.status_code for r in together] == [200] * 16
