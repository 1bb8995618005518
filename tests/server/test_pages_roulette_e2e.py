"""The roulette player's page in a real Chromium, at a live campione table run by a
croupier (a Python client): chips, an announced bet and a plein placed by clicking, the
result, the win and the balance to the centime; a refusal shown with its code; rebet,
double and undo; every combination of the layout reachable by a click, on a wide screen
and at phone width.

The first spin, worked out by hand (campione: minimum CHF 5.00; amounts in centimes):

* the player picks the CHF 5.00 chip (500) and announces voisins du zéro: 9 pieces of
  500 (transversale 0-2-3 and carré 25-26-28-29 two units each, 1,000; chevaux 4/7,
  12/15, 18/21, 19/22, 32/35 one unit each, 500): 4,500; then clicks plein 0: 500.
  Staked 5,000; his wallet of 100,000 shows 95,000 available.
* The ball falls on 0. Plein 0 pays 35 to 1: won 17,500, its 500 back. Of voisins only
  transversale 0-2-3 holds 0: 11 to 1 on 1,000, won 11,000, its 1,000 back; the other
  pieces (3,500) are lost.
* Won 17,500 + 11,000 = 28,500 ("CHF 285.00"); paid with the stakes 28,500 + 1,500 =
  30,000; balance 95,000 + 30,000 = 125,000 ("CHF 1'250.00").
"""

from __future__ import annotations

import pytest

from helpers.browser import screenshot
from roulette.layout import COMBINATIONS

from .conftest import PASSWORD, until

pytestmark = pytest.mark.slow

# Is every combination one click away: the element's own centre hits it (nothing over it)?
REACHABLE = """(names) => names.filter((name) => {
  const el = document.querySelector(`[data-spot="${name}"]`);
  if (!el) return true;
  el.scrollIntoView({block: "center", inline: "center"});
  const r = el.getBoundingClientRect();
  const hit = document.elementFromPoint(r.left + r.width / 2, r.top + r.height / 2);
  return !hit || hit.closest("[data-spot]") !== el;
})"""


async def _staff(floor, table: str, croupier: str):
    client = await floor.account(croupier, "croupier")
    await floor.table("roulette", "campione", table, staff=(croupier,))
    return client


async def _run_spin(croupier, table: str, number: int) -> None:
    for step in ({"type": "launch_ball"}, {"type": "no_more_bets"},
                 {"type": "result", "number": number, "source": "croupier"}):
        await croupier.play(table, step)


async def _opened(page) -> None:
    await page.wait_for_selector("#phase[data-phase=open]")
    await page.wait_for_selector("#board.bettable")


async def test_a_player_bets_by_clicking_and_sees_his_win(server, floor, open_page):
    t = "pg-roul-1"
    croupier = await _staff(floor, t, "pg-roul-croupier")
    player = await floor.account("pg-roul-ana", chips=100_000)
    try:
        await croupier.connect()
        await croupier.subscribe(t)
        await croupier.play(t, {"type": "open_spin"})

        page = await open_page.as_user("pg-roul-ana", PASSWORD, f"/app/roulette.html?table={t}")
        await _opened(page)
        assert await page.inner_text("#phase") == "Faites vos jeux"
        assert "spin 1" in await page.inner_text("#spin")
        # Every combination of the layout is there and takes a click at its centre.
        names = [c.name for c in COMBINATIONS]
        assert len(names) == 157
        assert await page.evaluate(REACHABLE, names) == []

        await page.click("#chip-500")
        assert await page.get_attribute("#chip-500", "aria-pressed") == "true"
        await page.click("#announce-voisins")
        await page.wait_for_selector('[data-spot="carré 25-26-28-29"] .stake')
        await page.click('[data-spot="plein 0"]')
        await page.wait_for_selector('[data-spot="plein 0"] .stake')
        await page.wait_for_function("() => document.querySelector('#staked').textContent === 'CHF 50.00'")
        stakes = await page.evaluate("""() => Object.fromEntries([...document.querySelectorAll('.rl-board .stake')]
            .map((s) => [s.parentElement.dataset.spot, Number(s.dataset.amount)]))""")
        assert stakes == {"plein 0": 500, "transversale 0-2-3": 1_000, "carré 25-26-28-29": 1_000,
                          "cheval 4/7": 500, "cheval 12/15": 500, "cheval 18/21": 500, "cheval 19/22": 500,
                          "cheval 32/35": 500}
        await page.wait_for_function("() => document.querySelector('#balance').textContent === \"CHF 950.00\"")
        # The table and the ledger agree with the page.
        view = (await player.request("GET", f"/tables/{t}"))["view"]
        assert view["viewer_staked"] == 5_000
        assert sorted((b["spot"], b["amount"]) for b in view["bets"] if b["player"] == "pg-roul-ana") == sorted(
            stakes.items())
        bal = await player.balance()
        assert (bal["available"], bal["pending"]) == (95_000, 5_000)

        await _run_spin(croupier, t, 0)
        await page.wait_for_selector("#result[data-number='0']")
        assert await page.inner_text("#result") == "0"
        await page.wait_for_selector("#win[data-won]")
        assert await page.get_attribute("#win", "data-won") == "28500"
        assert await page.get_attribute("#win", "data-returned") == "1500"
        assert await page.inner_text("#win-amount") == "CHF 285.00"
        await page.wait_for_function("() => document.querySelector('#balance').textContent === \"CHF 1'250.00\"")
        # The winning spots lit: the number itself, and every combination holding 0.
        assert "hit" in await page.get_attribute('[data-spot="plein 0"]', "class")
        for spot in ("transversale 0-2-3", "cheval 0/3", "quatre premiers"):
            assert "won" in await page.get_attribute(f'[data-spot="{spot}"]', "class")
        for spot in ("carré 25-26-28-29", "rouge", "plein 17"):
            assert "won" not in await page.get_attribute(f'[data-spot="{spot}"]', "class")
        await page.wait_for_selector("#phase[data-phase=settled]")
        assert await page.inner_text("#history span.latest") == "0"
        bal = await player.balance()
        assert (bal["available"], bal["pending"]) == (125_000, 0)
        await screenshot(page, "roulette")
        assert page.problems == []
    finally:
        await croupier.close()
        await player.close()
    assert await floor.ledger_problems() == []


async def test_a_refusal_shows_its_code_and_rebet_double_undo(server, floor, open_page):
    """Spin 1: plein 17 for CHF 10.00 (two clicks with the CHF 5.00 chip: two wagers of 500),
    lost on 5: 50,000 - 1,000 = 49,000. Spin 2: CHF 1.00 (under the CHF 5.00 minimum) is
    refused ``below_minimum`` and changes nothing; rebet restates both wagers (1,000); double
    places each again (2,000); undo takes the last one back (1,500): 47,500 available."""
    t = "pg-roul-2"
    croupier = await _staff(floor, t, "pg-roul-croupier-2")
    player = await floor.account("pg-roul-bea", chips=50_000)
    try:
        await croupier.connect()
        await croupier.subscribe(t)
        page = await open_page.as_user("pg-roul-bea", PASSWORD, f"/app/roulette.html?table={t}")
        await page.wait_for_selector("#phase[data-phase=closed]")
        # Nothing to offer while the table is closed: the view's legal list says so.
        for button in ("#rebet", "#double", "#undo", "#announce-voisins"):
            assert await page.is_disabled(button)
        await croupier.play(t, {"type": "open_spin"})
        await _opened(page)
        assert await page.is_disabled("#undo")  # nothing of his on the layout yet
        await page.click("#chip-500")
        for _ in range(2):
            await page.click('[data-spot="plein 17"]')
            await page.wait_for_selector('[data-spot="plein 17"] .stake')
        await page.wait_for_selector('[data-spot="plein 17"] .stake[data-amount="1000"]')
        await _run_spin(croupier, t, 5)
        await page.wait_for_selector("#win[data-won='0']")
        assert await page.inner_text("#win") == "No win this spin"
        await page.wait_for_function("() => document.querySelector('#balance').textContent === 'CHF 490.00'")
        await page.wait_for_selector("#phase[data-phase=settled]")
        assert await page.inner_text("#staked") == "CHF 0.00"

        await croupier.play(t, {"type": "open_spin"})
        await _opened(page)
        assert await page.inner_text("#result") == "–"
        await page.fill("#chip-custom", "1.00")
        await page.click('[data-spot="plein 17"]')
        await page.wait_for_selector("#messages .msg.error")
        assert "below_minimum" in await page.inner_text("#messages")
        view = (await player.request("GET", f"/tables/{t}"))["view"]
        assert view["viewer_staked"] == 0 and view["bets"] == []
        assert (await player.balance())["available"] == 49_000
        assert await page.inner_text("#staked") == "CHF 0.00"

        await page.click("#rebet")
        await page.wait_for_selector('[data-spot="plein 17"] .stake[data-amount="1000"]')
        await page.click("#double")
        await page.wait_for_selector('[data-spot="plein 17"] .stake[data-amount="2000"]')
        await page.click("#undo")
        await page.wait_for_selector('[data-spot="plein 17"] .stake[data-amount="1500"]')
        assert await page.inner_text("#staked") == "CHF 15.00"
        view = await until(lambda: _staked(player, t, 1_500))
        assert [b["amount"] for b in view["bets"]] == [500, 500, 500]
        assert (await player.balance())["available"] == 47_500
        await page.wait_for_function("() => document.querySelector('#balance').textContent === 'CHF 475.00'")
        assert page.problems == []
    finally:
        await croupier.close()
        await player.close()
    assert await floor.ledger_problems() == []


async def _staked(client, table: str, amount: int):
    view = (await client.request("GET", f"/tables/{table}"))["view"]
    return view if view["viewer_staked"] == amount else None


async def test_the_page_at_phone_width(server, floor, open_page):
    t = "pg-roul-3"
    croupier = await _staff(floor, t, "pg-roul-croupier-3")
    player = await floor.account("pg-roul-cat", chips=20_000)
    try:
        await croupier.connect()
        await croupier.subscribe(t)
        await croupier.play(t, {"type": "open_spin"})
        page = await open_page.as_user("pg-roul-cat", PASSWORD, f"/app/roulette.html?table={t}", width=375,
                                       height=740)
        await _opened(page)
        # Nothing wider than the screen: no sideways scrolling, nothing cut off.
        assert await page.evaluate("document.documentElement.scrollWidth") <= 375
        assert await page.evaluate(REACHABLE, [c.name for c in COMBINATIONS]) == []
        await page.click("#chip-1000")
        await page.click('[data-spot="plein 17"]')
        await page.click('[data-spot="cheval 17/20"]')
        await page.click('[data-race="26"]')  # 26 et 2 voisins: 5 pleins of CHF 10.00
        await page.wait_for_function("() => document.querySelector('#staked').textContent === 'CHF 70.00'")
        view = (await player.request("GET", f"/tables/{t}"))["view"]
        assert sorted((b["spot"], b["amount"]) for b in view["bets"]) == sorted(
            [("plein 17", 1_000), ("cheval 17/20", 1_000)] + [(f"plein {n}", 1_000) for n in (35, 3, 26, 0, 32)])
        await page.evaluate("window.scrollTo(0, 0)")
        await screenshot(page, "roulette-phone")
        assert page.problems == []
    finally:
        await croupier.close()
        await player.close()


async def test_an_rng_table_runs_on_its_clock_and_a_watcher_cannot_bet(server, floor, open_page):
    """At an RNG table the page follows the table's clock (``next_automatic``) and the spins
    it runs by itself, and verifies each spin's revealed seed against the commitment it
    showed before the bets; staff watch (their view offers no bet)."""
    t = "pg-roul-rng"
    await floor.table("roulette", "campione", t, mode="rng")
    player = await floor.account("pg-roul-dan", chips=10_000)
    watcher = await floor.account("pg-roul-watch", "croupier")
    try:
        page = await open_page.as_user("pg-roul-dan", PASSWORD, f"/app/roulette.html?table={t}")
        await page.wait_for_selector("#phase[data-phase]")
        await page.wait_for_function("() => /(Bets close|Next spin|Rien ne va plus|Result) in \\d+s/"
                                     ".test(document.querySelector('#countdown').textContent)")
        await page.wait_for_selector("#history span[data-n]", timeout=30_000)
        await page.wait_for_selector("#result[data-number]")
        # Provably fair: the page checked the revealed seed itself (WebCrypto), as casino verify does.
        await page.wait_for_selector("#fair[data-verified=yes]", timeout=30_000)
        assert "verified ✓" in await page.inner_text("#fair")
        assert page.problems == []
        staff = await open_page.as_user("pg-roul-watch", PASSWORD, f"/app/roulette.html?table={t}")
        await staff.wait_for_selector("#watching")
        assert await staff.query_selector("#chips") is None
        await staff.wait_for_selector("#phase[data-phase]")
        assert await staff.is_disabled("#announce-voisins")
        await staff.click('[data-spot="plein 17"]')
        assert "watching" in await staff.inner_text("#messages")
        assert staff.problems == []
    finally:
        await player.close()
        await watcher.close()
