"""A table's page opens its socket at the table's owner where the lobby names its address on
the page's own host (``ws_url``; a proxy's path per process), in a real Chromium: here the
server names its own /ws with a mark, and the page's socket goes there and plays. (Which
addresses a page takes: ``test_pages_lobby_e2e``.)"""

from __future__ import annotations

import pytest

from .conftest import PASSWORD, ServerProcess

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def server(db_url: str, tmp_path_factory):
    srv = ServerProcess(db_url, tmp_path_factory.mktemp("placed-pages"))
    srv.env["CASINO_WS_URL"] = f"ws://127.0.0.1:{srv.port}/ws?placed=1"
    with srv:
        yield srv


async def test_the_roulette_page_plays_through_the_socket_the_lobby_names(server, floor, open_page):
    t = "pg-placed-1"
    croupier = await floor.account("pg-placed-croupier", "croupier")
    await floor.table("roulette", "campione", t, staff=("pg-placed-croupier",))
    ana = await floor.account("pg-placed-ana", chips=10_000)
    await croupier.connect()
    await croupier.subscribe(t)
    await croupier.play(t, {"type": "open_spin"})
    page = await open_page.as_user("pg-placed-ana", PASSWORD)
    sockets: list[str] = []
    page.on("websocket", lambda ws: sockets.append(ws.url))
    await page.goto(f"{server.url}/app/roulette.html?table={t}")
    await page.wait_for_selector("#board.bettable")
    await page.click("#chip-500")
    await page.click('[data-spot="rouge"]')
    await page.wait_for_selector('[data-spot="rouge"] .stake')
    assert sockets[-1] == f"ws://127.0.0.1:{server.port}/ws?placed=1", sockets
    assert (await ana.balance())["pending"] == 500
    assert page.problems == []
    await croupier.close()
    await ana.close()
