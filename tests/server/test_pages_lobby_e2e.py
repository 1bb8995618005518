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
