"""The pages' websocket (``server/web/js/live.js``) in a real Chromium, across a kill -9 of
the server: it reconnects by itself, authenticated by the session cookie, subscribes again
with ``since`` = the last seq it saw, and gets every event after it exactly once; a command
sent while the server was down is answered once it is back."""

from __future__ import annotations

import asyncio

import pytest

from helpers.browser import Pages

from .conftest import PASSWORD, Floor, ServerProcess

pytestmark = pytest.mark.slow

# Loaded into the lobby page: the same module every page uses, with what it saw kept on window.
FOLLOW = """async (table) => {
  const { Live } = await import("/app/js/live.js");
  window.seen = []; window.statuses = []; window.answers = [];
  const live = new Live();
  live.onStatus = (s) => window.statuses.push(s);
  live.subscribe(table, (snap) => window.seen.push(["snapshot", snap.seq]),
                 (events) => events.forEach((e) => window.seen.push([e.event.type, e.seq])));
  window.live = live;
}"""


async def test_a_page_resumes_from_its_last_seq_after_the_server_is_killed(db_url, tmp_path, browser):
    srv = ServerProcess(db_url, tmp_path)
    srv.start()
    pages = Pages(browser, srv.url)
    try:
        floor = Floor(srv)
        croupier = await floor.account("pr-croupier", "croupier")
        await floor.table("roulette", "campione", "pr-live", staff=("pr-croupier",))
        await floor.account("pr-ann", chips=100_000)
        page = await pages.as_user("pr-ann", PASSWORD)
        await page.evaluate(FOLLOW, "pr-live")
        await page.wait_for_function("() => window.seen.length >= 1")
        await croupier.connect()
        await croupier.subscribe("pr-live")
        await croupier.play("pr-live", {"type": "open_spin"})
        await page.wait_for_function("() => window.seen.some(([t]) => t === 'spin_opened')")
        seen_before = await page.evaluate("window.seen.length")

        srv.kill()  # kill -9: the page's socket drops
        await page.wait_for_function("() => window.statuses.includes('reconnecting')")
        # While the server is down the player bets: the page sends it once the socket is back.
        bet = page.evaluate("""() => window.live.play('pr-live',
            {type: 'place_bet', spot: 'plein 17', amount: 500}).then((a) => window.answers.push(a))""")
        srv.start()
        await croupier.close()  # (its socket died with the server)
        await page.wait_for_function("() => window.statuses.filter((s) => s === 'connected').length >= 2",
                                     timeout=30_000)
        await bet
        await page.wait_for_function("() => window.answers.length === 1", timeout=30_000)
        answer = (await page.evaluate("window.answers"))[0]
        assert answer["type"] == "accepted", answer

        # The croupier spins on: every event reaches the page once, in seq order, no hole.
        from server.client import CasinoClient

        console = CasinoClient(srv.url)
        await console.login("pr-croupier", PASSWORD)
        await console.connect()
        await console.subscribe("pr-live")
        for step in ({"type": "launch_ball"}, {"type": "no_more_bets"},
                     {"type": "result", "number": 17, "source": "croupier"}):
            await console.play("pr-live", step)
        await page.wait_for_function("() => window.seen.some(([t]) => t === 'spin_settled')", timeout=30_000)
        seen = await page.evaluate("window.seen")
        seqs = [s for kind, s in seen if kind != "snapshot"]
        assert seqs == sorted(set(seqs)), seen  # each event once, in order
        first = seen[0][1]  # the snapshot's seq: every later event follows it without a hole
        assert seqs == list(range(first + 1, seqs[-1] + 1)), seen
        assert len(seen) > seen_before
        kinds = [kind for kind, _ in seen]
        assert "table_resumed" in kinds and kinds.index("table_resumed") > kinds.index("spin_opened")
        settled = [kind for kind in kinds if kind == "wager_settled"]
        assert settled  # the bet sent while the server was down was played and settled
        await console.close()
        # (the browser's own lines for the refused connections while the server was down)
        assert [p for p in page.problems if "ERR_CONNECTION_REFUSED" not in p] == []
    finally:
        await pages.close()
        await asyncio.to_thread(srv.stop)
