"""The croupier's console in a real Chromium (/app/console.html): a live roulette spin run by
clicking while a player bets from Python; a refused command shown with its code and
nothing changed; a live blackjack round dealt with the card picker."""

from __future__ import annotations

import contextlib

import pytest

from helpers.browser import screenshot
from server.client import Rejected

from .conftest import PASSWORD

pytestmark = pytest.mark.slow


async def phase_of(client, table: str) -> str:
    return (await client.request("GET", f"/tables/{table}"))["view"]["phase"]


async def test_a_croupier_runs_a_live_spin_by_clicking(server, floor, open_page):
    t = "pgc-roulette"
    await floor.account("pgc-croupier", "croupier")
    ana = await floor.account("pgc-ana", chips=100_000)
    await floor.table("roulette", "campione", t, staff=("pgc-croupier",))
    try:
        await ana.connect()
        await ana.subscribe(t)
        page = await open_page.as_user("pgc-croupier", PASSWORD, f"/app/console.html?table={t}")
        await page.wait_for_selector("#phase:has-text('closed')")
        # Nothing but what the view says is legal now: no launch before a spin is open.
        assert await page.is_disabled("#cmd-launch_ball")
        assert await page.is_disabled("#number-17")

        await page.click("#cmd-open_spin")
        await ana.next_event(t, "spin_opened", timeout=15)
        await ana.bet(t, "plein 17", 500)  # CHF 5.00
        await page.wait_for_selector("#bets td:has-text('plein 17')")
        await page.click("#cmd-launch_ball")
        await page.click("#cmd-no_more_bets")
        await page.wait_for_selector("#phase:has-text('no_more_bets')")
        await page.click("#number-17")

        result = await ana.next_event(t, "spin_result", timeout=15)
        assert result["event"]["number"] == 17
        settled = await ana.next_event(t, "wager_settled", timeout=15)
        assert (settled["event"]["player"], settled["event"]["won"]) == ("pgc-ana", 17_500)  # 35 x 500
        assert (await ana.balance())["available"] == 100_000 + 17_500

        entry = page.locator("#events li[data-kind=spin_result]")
        await entry.wait_for()
        assert "number=17" in await entry.inner_text()
        await page.wait_for_selector("#last-numbers span:has-text('17')")
        await page.wait_for_selector("#events li[data-kind=spin_settled]")
        # The log is newest first.
        kinds = await page.eval_on_selector_all("#events li", "els => els.map(e => e.dataset.kind)")
        assert kinds.index("spin_settled") < kinds.index("spin_result") < kinds.index("spin_opened")
        await screenshot(page, "console-roulette")
        assert page.problems == []
    finally:
        await ana.close()
    assert await floor.ledger_problems() == []


async def test_a_refused_command_shows_its_code_and_changes_nothing(server, floor, open_page):
    t = "pgc-refusals"
    croupier = await floor.account("pgc-croupier-2", "croupier")
    await floor.table("roulette", "campione", t, staff=("pgc-croupier-2",))
    try:
        page = await open_page.as_user("pgc-croupier-2", PASSWORD, f"/app/console.html?table={t}")
        await page.wait_for_selector("#phase:has-text('closed')")
        # Every command of the game is in the generic form, from the AsyncAPI document.
        options = await page.eval_on_selector_all("#generic-command option", "els => els.map(e => e.value)")
        assert {"open_spin", "result", "void_spin", "accept_late", "mark_unclaimed", "raise_limit"} <= set(options)

        # Out of phase: rien ne va plus with no ball running.
        await page.select_option("#generic-command", "no_more_bets")
        await page.click("#generic-send")
        await page.wait_for_selector("#messages .msg.error:has-text('wrong_phase')")
        assert await phase_of(croupier, t) == "closed"
        assert await page.inner_text("#phase") == "closed"

        # A number off the wheel, once the ball has fallen.
        for button in ("#cmd-open_spin", "#cmd-launch_ball", "#cmd-no_more_bets"):
            await page.click(button)
        await page.wait_for_selector("#phase:has-text('no_more_bets')")
        seq = (await croupier.request("GET", f"/tables/{t}"))["seq"]
        await page.select_option("#generic-command", "result")
        await page.fill("#gf-number", "37")
        await page.select_option("#gf-source", "croupier")
        await page.click("#generic-send")
        await page.wait_for_selector("#messages .msg.error:has-text('number_out_of_range')")
        detail = await croupier.request("GET", f"/tables/{t}")
        assert (detail["seq"], detail["view"]["phase"]) == (seq, "no_more_bets")
        assert await page.inner_text("#phase") == "no_more_bets"
        # A croupier may not void a spin (the chef does): not offered.
        assert await page.is_disabled("#cmd-void_spin")
        # The spin is still there to finish.
        await page.click("#number-0")
        await page.wait_for_selector("#events li[data-kind=spin_result]")
        assert page.problems == []
    finally:
        await croupier.close()


# Cards are ints: suit * 13 + rank (rank 0 = ace ... 9 = ten, 12 = king; suits S H D C).
def card(rank: int, suit: int) -> int:
    return suit * 13 + rank


async def test_a_croupier_deals_a_live_blackjack_round_with_the_card_picker(server, floor, open_page):
    t = "pgc-blackjack"
    await floor.account("pgc-dealer", "croupier")
    bea = await floor.account("pgc-bea", chips=100_000)
    await floor.table("blackjack", "lugano", t, staff=("pgc-dealer",), min_bet=1_000, max_bet=10_000)

    async def deal(page, rank: int, suit: int, box: int, hand: int = 0) -> None:
        dealt = page.locator("#events li[data-kind=card_dealt]")
        n = await dealt.count()
        await page.select_option("#card-rank", index=rank)  # (the ranks' labels are numbers too: A, 2, ..., K)
        await page.select_option("#card-suit", str(suit))
        await page.select_option("#card-box", str(box))
        await page.select_option("#card-hand", str(hand))
        await page.click("#cmd-card")
        await dealt.nth(n).wait_for()  # (the page's CSP allows no evaluated strings)

    try:
        await bea.connect()
        await bea.subscribe(t)
        page = await open_page.as_user("pgc-dealer", PASSWORD, f"/app/console.html?table={t}")
        await page.wait_for_selector("#phase:has-text('shuffle')")
        await page.click("#cmd-shuffle")
        await page.click("#cmd-cut")
        await page.wait_for_selector("#phase:has-text('betting')")
        await bea.sit(t, 2)
        await bea.stake(t, 2, 2_000)
        await page.wait_for_selector("#box-2:has-text('pgc-bea')")
        await page.click("#cmd-close_bets")
        await page.wait_for_selector("#phase:has-text('dealing')")

        await deal(page, 9, 1, 2)  # 10♥ to box 2
        await deal(page, 5, 3, 0)  # 6♣ to the dealer
        await deal(page, 7, 0, 2)  # 8♠ to box 2: 18
        await page.wait_for_selector(f"#box-2 .card[data-card='{card(9, 1)}']")
        await page.wait_for_selector(f"#box-2 .card[data-card='{card(7, 0)}']")
        await page.wait_for_selector(f"#dealer .card[data-card='{card(5, 3)}']")
        assert "18" in await page.inner_text("#box-2")
        await screenshot(page, "console-blackjack")
        with contextlib.suppress(Rejected):  # the table may have stood for her already (CASINO_DECISION_SECONDS)
            await bea.act(t, "stand", 2)
        await deal(page, 12, 2, 0)  # K♦: the dealer has 16
        await deal(page, 1, 1, 0)  # 2♥: 18, a push
        await bea.next_event(t, "round_settled", timeout=15)
        settled = [f["event"] for f in bea.frames
                   if f.get("type") == "event" and f["event"]["type"] == "wager_settled"]
        assert [(s["stake"], s["returned"], s["won"]) for s in settled] == [(2_000, 2_000, 0)]
        assert (await bea.balance())["available"] == 100_000
        await page.wait_for_selector("#events li[data-kind=round_settled]")
        # The round as dealt, card by card, with each card's name in the log.
        log = await page.inner_text("#events")
        assert "card=10♥" in log and "card=2♥" in log
        assert page.problems == []
    finally:
        await bea.close()
    assert await floor.ledger_problems() == []
