"""The lobby page in a real Chromium: logging in through the form (the token stays in an
HttpOnly cookie no script can read), the tables, the wallet and its statement."""

from __future__ import annotations

import pytest

from helpers.browser import screenshot

from .conftest import PASSWORD

pytestmark = pytest.mark.slow


async def test_a_player_logs_in_and_sees_tables_wallet_and_statement(server, floor, open_page):
    await floor.table("roulette", "campione", "pg-lobby-roulette", staff=())
    await floor.table("blackjack", "lugano", "pg-lobby-bj")
    await floor.account("pg-lobby-ana", chips=250_000)
    page = await open_page.as_user("pg-lobby-ana", PASSWORD)
    await page.wait_for_selector("#tables tr[data-table=pg-lobby-roulette]")
    assert "CHF 2'500.00" in await page.inner_text("#balance")
    assert "deposit" in await page.inner_text("#statement")
    assert "lugano" in await page.inner_text("#tables tr[data-table=pg-lobby-bj]")
    # The session cookie is HttpOnly: the page's own scripts cannot read the token.
    assert await page.evaluate("document.cookie") == ""
    cookies = await page.context.cookies()
    session = next(c for c in cookies if c["name"] == "casino_session")
    assert session["httpOnly"] and session["sameSite"] == "Strict"
    await screenshot(page, "lobby")
    assert page.problems == []


async def test_a_table_page_opens_its_socket_at_the_owner_the_lobby_names_on_its_own_host(server, floor, open_page):
    """``tableSocket``: the lobby's ``ws_url`` for a table where it is on the page's own host
    (a proxy routing a path to each process: the session cookie goes with it); this host's
    /ws otherwise: another host or port would not take the cookie, nor does a URL of another
    scheme or none."""
    await floor.account("pg-place-ana", chips=1_000)
    page = await open_page.as_user("pg-place-ana", PASSWORD)
    here = server.url.replace("http://", "ws://") + "/ws"
    host = server.url.removeprefix("http://")
    cases = {
        f"ws://{host}/w1/ws": f"ws://{host}/w1/ws",
        "ws://127.0.0.1:1/ws": here,
        f"wss://{host}/w1/ws": here,
        "": here,
        "not a url": here,
    }
    for ws_url, expected in cases.items():
        got = await page.evaluate("(u) => import('/app/js/live.js').then((m) => m.tableSocket(u))", ws_url)
        assert got == expected, ws_url
