"""The pit and the tournaments pages in a real Chromium: a director sees every table with its
state, the ledger check, a round recalled event by event, and changes a table's limits
through the form; a player gets none of it. A Sit&Go's page: a player registers by
clicking, the fifth entry starts it, and the standings follow."""

from __future__ import annotations

import pytest

from helpers.browser import screenshot
from loadtest.tournament_bots import tournament_command

from .conftest import PASSWORD

pytestmark = pytest.mark.slow


async def test_a_director_runs_the_pit_and_a_player_gets_nothing(server, floor, open_page):
    director = await floor.account("pgp-director", "director")
    croupier = await floor.account("pgp-croupier", "croupier")
    paul = await floor.account("pgp-paul", chips=50_000)
    await floor.table("roulette", "campione", "pgp-roulette", staff=("pgp-croupier",))
    await floor.table("blackjack", "lugano", "pgp-bj", mode="rng")
    t = "pgp-roulette"
    try:
        for c in (croupier, paul):
            await c.connect()
            await c.subscribe(t)
        await croupier.play(t, {"type": "open_spin"})
        await paul.bet(t, "plein 5", 500)
        for step in ({"type": "launch_ball"}, {"type": "no_more_bets"},
                     {"type": "result", "number": 5, "source": "croupier"}):
            await croupier.play(t, step)
        await paul.next_event(t, "spin_settled", timeout=15)

        page = await open_page.as_user("pgp-director", PASSWORD, "/app/pit.html")
        row = page.locator(f"#pit-tables tr[data-table={t}]")
        await row.wait_for()
        assert "settled, spin 1" in await row.locator("td.state").inner_text()
        assert "pgp-croupier" in await row.inner_text()
        assert "CHF 5.00" in await row.locator("td.limits").inner_text()
        await page.wait_for_selector("#pit-tables tr[data-table=pgp-bj]")
        await page.wait_for_selector("#ledger-check :text('Ledger check: ok')")

        # The spin recalled, event by event.
        await page.select_option("#recall-table", t)
        await page.fill("#recall-round", "spin-1")
        await page.click("#recall-go")
        result = page.locator("#recall tr[data-kind=spin_result]")
        await result.wait_for()
        assert "number=5" in await result.inner_text()
        kinds = await page.eval_on_selector_all("#recall tbody tr", "els => els.map(e => e.dataset.kind)")
        assert kinds[0] == "spin_opened" and "wager_settled" in kinds and kinds[-1] == "spin_settled"

        # New limits for the blackjack table, from its next round.
        await page.select_option("#limits-table", "pgp-bj")
        await page.fill("#limits-minimum", "15.00")
        await page.fill("#limits-maximum", "150.00")
        await page.fill("#limits-reason", "evening")
        await page.click("#limits-save")
        await page.wait_for_selector("#messages .msg.ok:has-text('Limits of pgp-bj changed')")
        history = await director.request("GET", "/tables/pgp-bj/limits")
        last = history[-1]
        assert (last["limits"]["minimum"], last["limits"]["maximum"]) == (1_500, 15_000)
        assert last["changed_by"] == "pgp-director" and last["reason"] == "evening"
        await page.wait_for_selector("#pit-tables tr[data-table=pgp-bj] td.limits:has-text('CHF 15.00 – CHF 150.00')")
        await page.wait_for_selector("#audit td:has-text('table.set_limits')")
        await screenshot(page, "pit")
        assert page.problems == []

        # A player: the server refuses him the pit's data, and the page says so.
        player_page = await open_page.as_user("pgp-paul", PASSWORD, "/app/pit.html")
        await player_page.wait_for_selector("#messages .msg.error:has-text('forbidden')")
        assert await player_page.locator("#pit-tables").count() == 0
        assert await player_page.locator("#ledger-check").count() == 0
    finally:
        for c in (director, croupier, paul):
            await c.close()


async def test_a_sit_and_go_page_registers_and_shows_the_standings(server, floor, open_page):
    tid = "pgt-sng"
    director = await floor.account("pgt-director", "director")
    players = [await floor.account(f"pgt-{i}", chips=20_000, currency="EUR") for i in range(5)]
    spec = {"name": "Page Sit&Go", "format": "sit_and_go", "buy_in": 1000, "max_entrants": 7, "max_tables": 1,
            "min_entrants": 5, "prizes": [100], "shoes": 1, "decks": 1, "min_bet": 10, "max_bet": 50}
    try:
        await director.request("POST", "/tournaments", json={"id": tid, "spec": spec})
        await tournament_command(director, tid, {"type": "open_registration"})
        for p in players[:4]:
            await tournament_command(p, tid, {"type": "register"})

        page = await open_page.as_user("pgt-4", PASSWORD, "/app/tournaments.html")
        await page.wait_for_selector(f"#tournaments tr[data-tournament={tid}]")
        await page.click(f"#tournaments tr[data-tournament={tid}] a")
        await page.wait_for_selector("#entrants tr[data-player=pgt-0]")
        assert await page.locator("#entrants tbody tr").count() == 4
        # The fifth entry, by clicking: it fills the Sit&Go, which starts by itself.
        await page.click("#register")
        await page.wait_for_selector("#messages .msg.ok")
        await page.wait_for_selector("#entrants tr[data-player=pgt-4]")
        await page.wait_for_selector("#standings tbody tr[data-player=pgt-4]", timeout=30_000)
        assert await page.locator("#standings tbody tr[data-player]").count() == 5
        places = await page.eval_on_selector_all("#standings tbody tr[data-player]",
                                                 "els => els.map(e => e.dataset.place)")
        assert sorted(int(p) for p in places) == [1, 2, 3, 4, 5]
        await page.wait_for_selector("#me:has-text('Your place')")
        await page.wait_for_selector("#t-events li[data-kind=started]")
        assert await page.is_disabled("#register")  # once is enough
        await screenshot(page, "tournament")
        view = (await director.request("GET", f"/tournaments/{tid}"))["view"]
        assert view["status"] in ("running", "finished") and len(view["entrants"]) == 5
        assert page.problems == []
    finally:
        for c in (director, *players):
            await c.close()
