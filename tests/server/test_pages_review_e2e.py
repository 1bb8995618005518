"""An outsider's review of the web pages (``server/web/``, ``server/pages.py``), in a real
Chromium: markup a player or staff controls (a table's or tournament's name, a società, the
reasons of a refused late bet, a void spin, a limits change, a cancelled tournament, an
echoed refusal) stays text on every page; the session token never reaches a script, a URL or
a response body; another origin's page (same site on another port, and localhost against
127.0.0.1) can neither post nor play with a visitor's cookie; a player or a croupier at a
table not his gets every command refused with its code; odd or unknown table ids, an
archived table and a login gone mid-session break nothing; the headers every /app file and
every answer with a balance should carry."""

from __future__ import annotations

import asyncio
import contextlib
import functools
import http.server
import json
import re
import threading
import time

import httpx
import pytest

from loadtest.server_process import free_port
from loadtest.tournament_bots import tournament_command

from .conftest import PASSWORD

pytestmark = pytest.mark.slow

# Markup in everything a person names or writes: three elements, two handlers, an attribute
# breaker. If any of it is parsed, an element with an id starting "xss" appears.
PAYLOAD = "<img src=x id=xss1 onerror=pwned=1><b id=xss2>b</b><svg id=xss3 onload=pwned=2>\"'&"
JWT = re.compile(r"eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}")

# Loaded before any page script (Playwright's init script, not subject to the page's CSP):
# every element that is ever added, even for a moment, is checked for the payload's marks.
WATCH = """
window.__xss = [];
new MutationObserver((ms) => {
  for (const m of ms) for (const n of m.addedNodes) {
    if (n.nodeType !== 1) continue;
    for (const el of [n, ...n.querySelectorAll('*')]) {
      const tag = el.tagName.toLowerCase();
      if ((el.id || '').startsWith('xss') || tag === 'svg' || (tag === 'img' && el.getAttribute('src') === 'x')
          || [...el.attributes].some((a) => a.name.startsWith('on'))) window.__xss.push(el.outerHTML);
    }
  }
}).observe(document, { childList: true, subtree: true });
"""


async def watched(open_page, user: str, path: str):
    """A page logged in as ``user``, at ``path``, with the injection watch installed."""
    page = await open_page.as_user(user, PASSWORD)
    await page.context.add_init_script(WATCH)
    await page.goto(open_page.base_url + path)
    return page


async def shows(page, selector: str, text: str = PAYLOAD, timeout: float = 15_000) -> None:
    """Wait until an element matching ``selector`` holds ``text`` as text (the payload did reach
    the page: a clean page is then a real result, not a page that never showed it)."""
    await page.wait_for_function(
        "([sel, t]) => [...document.querySelectorAll(sel)].some((e) => e.textContent.includes(t))",
        arg=[selector, text], timeout=timeout)


async def assert_clean(page) -> None:
    got = await page.evaluate("""() => ({ pwned: typeof window.pwned, injected: window.__xss || [],
        now: document.querySelectorAll('[id^=xss], img[src=x], svg').length })""")
    assert got == {"pwned": "undefined", "injected": [], "now": 0}, got
    assert page.problems == []


async def new_table(client, game: str, profile: str, table_id: str, *, mode: str = "live", name: str = "",
                    staff: tuple[str, ...] = ()) -> None:
    await client.request("POST", "/tables", json={"game": game, "profile": profile, "mode": mode, "id": table_id,
                                                  "name": name, "settings": {}})
    for user in staff:
        await client.request("POST", f"/tables/{table_id}/staff", json={"user": user})


# ---- 1. markup stays text ------------------------------------------------------------------------


async def test_markup_at_a_roulette_table_stays_text_on_every_page(server, floor, open_page):
    t = "rvx-roulette"
    director = await floor.account("rvx-dir", "director")
    croupier = await floor.account("rvx-crp", "croupier")
    chef = await floor.account("rvx-chef", "chef")
    ann = await floor.account("rvx-ann", chips=100_000)
    bob = await floor.account("rvx-bob", chips=100_000)
    clients = [director, croupier, chef, ann, bob]
    try:
        await new_table(director, "roulette", "campione", t, name=PAYLOAD, staff=("rvx-crp", "rvx-chef"))
        player = await watched(open_page, "rvx-ann", f"/app/roulette.html?table={t}")
        console = await watched(open_page, "rvx-chef", f"/app/console.html?table={t}")
        await shows(console, "h1")  # the table's name, as text
        await console.wait_for_selector("#conn:has-text('live at')")
        await player.wait_for_selector("#phase[data-phase=closed]")
        for c in (croupier, chef, ann):
            await c.connect()
            await c.subscribe(t)

        await chef.play(t, {"type": "register_societa", "name": PAYLOAD, "members": ["rvx-ann", "rvx-bob"]})
        await shows(console, "#events li[data-kind=societa_registered]")

        await croupier.play(t, {"type": "open_spin"})
        # A refusal echoing what the croupier typed: a floor player and a spot made of markup.
        await console.select_option("#generic-command", "place_bet")
        await console.fill("#gf-player", PAYLOAD)
        await console.fill("#gf-spot", PAYLOAD)
        await console.fill("#gf-amount", "500")
        await console.click("#generic-send")
        await console.wait_for_selector("#messages .msg.error:has-text('Refused (')")

        await croupier.play(t, {"type": "launch_ball"})
        ack = await ann.bet(t, "plein 36", 500)  # after the launch: a late bet, for the chef
        await ann.wait_seq(t, ack["seq"])
        late = next(f["event"]["late"] for f in ann.frames
                    if f.get("seq") == ack["seq"] and f["type"] == "event" and f["event"]["type"] == "late_bet_pending")
        await chef.play(t, {"type": "refuse_late", "late": late, "reason": PAYLOAD})
        await shows(player, "#messages")
        await shows(console, "#events li[data-kind=late_bet_refused]")
        await chef.play(t, {"type": "void_spin", "reason": PAYLOAD})
        await shows(player, "#messages")
        await shows(console, "#events li[data-kind=spin_voided]")
        await assert_clean(player)
        await assert_clean(console)

        # The director's reasons land in the audit log, read on the pit page; the name in the lobby.
        await director.request("PUT", f"/tables/{t}/limits", json={"minimum": 500, "reason": PAYLOAD})
        await director.request("POST", f"/tables/{t}/authorisations",
                               json={"chef": "rvx-chef", "action": "suspend", "reason": PAYLOAD, "minutes": 5})
        pit = await watched(open_page, "rvx-dir", "/app/pit.html")
        await shows(pit, f"#pit-tables tr[data-table={t}] strong")
        await shows(pit, "#audit")
        await assert_clean(pit)
        lobby = await watched(open_page, "rvx-ann", "/app/")
        await shows(lobby, f"#tables tr[data-table={t}]")
        await assert_clean(lobby)
        cons = await watched(open_page, "rvx-crp", f"/app/console.html?table={t}")
        await shows(cons, "h1")
        await assert_clean(cons)
    finally:
        for c in clients:
            await c.close()


async def test_markup_in_a_blackjack_tables_name_stays_text(server, floor, open_page):
    t = "rvx-bj"
    director = await floor.account("rvx-dir-2", "director")
    await floor.account("rvx-cat", chips=100_000)
    try:
        await new_table(director, "blackjack", "lugano", t, mode="rng", name=PAYLOAD)
    finally:
        await director.close()
    page = await watched(open_page, "rvx-cat", f"/app/blackjack.html?table={t}")
    await shows(page, "#table-name")
    assert await page.title() == f"Casino: {PAYLOAD}"
    await assert_clean(page)


async def test_markup_in_a_tournaments_name_and_cancel_reason_stays_text(server, floor, open_page):
    tid = "rvx-cup"
    director = await floor.account("rvx-dir-3", "director")
    await floor.account("rvx-dan", chips=100_000, currency="EUR")
    try:
        spec = {"name": PAYLOAD, "buy_in": 10_000, "starts_at": int(time.time()) + 3600, "shoes": 1, "decks": 1,
                "min_bet": 10, "max_bet": 50, "max_entrants": 14, "max_tables": 2}
        await director.request("POST", "/tournaments", json={"id": tid, "spec": spec})
        await tournament_command(director, tid, {"type": "open_registration"})
        listing = await watched(open_page, "rvx-dan", "/app/tournaments.html")
        await shows(listing, f"#tournaments tr[data-tournament={tid}]")
        await assert_clean(listing)
        page = await watched(open_page, "rvx-dan", f"/app/tournaments.html?id={tid}")
        await shows(page, "h1")
        await asyncio.sleep(2.0)  # subscribed (#conn is wiped by every render: no sure sign)
        await tournament_command(director, tid, {"type": "cancel", "reason": PAYLOAD})
        await shows(page, "#t-events li")
        await assert_clean(page)
        staff = await watched(open_page, "rvx-dir-3", f"/app/tournaments.html?id={tid}")
        await shows(staff, "h1")
        await assert_clean(staff)
    finally:
        await director.close()


# ---- 2. the token --------------------------------------------------------------------------------


async def test_no_script_url_storage_or_body_ever_holds_the_token(server, floor, open_page):
    t = "rvx-token"
    await floor.table("roulette", "campione", t, mode="rng")
    await floor.table("blackjack", "lugano", "rvx-token-bj", mode="rng")
    await floor.account("rvx-eve", chips=100_000)
    ctx = await open_page.browser.new_context()
    open_page.contexts.append(ctx)
    page = await ctx.new_page()
    page.set_default_timeout(15_000)
    seen: list[tuple[str, str]] = []  # (where, what)

    async def body(response) -> None:
        with contextlib.suppress(Exception):
            seen.append((f"body {response.url}", await response.text()))

    def socket(ws) -> None:
        seen.append(("ws url", ws.url))
        ws.on("framesent", lambda p: seen.append(("ws sent", str(p))))
        ws.on("framereceived", lambda p: seen.append(("ws received", str(p))))

    page.on("response", lambda r: seen.append(("pending", "")) or asyncio.ensure_future(body(r)))
    page.on("request", lambda r: seen.append((f"request {r.url}", (r.post_data or "") + r.url)))
    page.on("websocket", socket)
    await page.goto(server.url + "/app/")
    await page.fill("input[name=user]", "rvx-eve")
    await page.fill("input[name=password]", PASSWORD)
    await page.click("#login")
    await page.wait_for_selector("#wallet")
    token = next(c["value"] for c in await ctx.cookies() if c["name"] == "casino_session")
    assert JWT.match(token)
    for path in ("/app/", f"/app/roulette.html?table={t}", "/app/blackjack.html?table=rvx-token-bj",
                 "/app/tournaments.html", f"/app/console.html?table={t}", "/app/pit.html"):
        await page.goto(server.url + path)
        await page.wait_for_load_state("networkidle")
        state = await page.evaluate("""() => JSON.stringify({ cookie: document.cookie, url: location.href,
            local: { ...localStorage }, session: { ...sessionStorage }, html: document.documentElement.outerHTML })""")
        seen.append((f"page {path}", state))
    await page.wait_for_selector("#main")
    await asyncio.sleep(0.5)
    assert any(w == "ws url" for w, _ in seen) and any(w.startswith("body ") for w, _ in seen)
    leaks = [(w, x[:200]) for w, x in seen if token in x or JWT.search(x)]
    assert leaks == []
    assert all("token" not in x for w, x in seen if w == "ws url")


# ---- 3. another origin ---------------------------------------------------------------------------

EVIL_HTML = """<!doctype html><html><body>
<iframe name="sink" id="sink"></iframe>
<form id="f" method="POST" enctype="text/plain" target="sink"><input id="i"></form>
<script src="evil.js"></script></body></html>"""

# What another site's page tries with a visitor's casino cookie: a fetch (no-cors, so no
# preflight), a JSON fetch (preflighted), a read of /me, a text/plain form that is valid JSON,
# and the websocket: subscribe and bet.
EVIL_JS = r"""
const q = new URLSearchParams(location.search);
const casino = q.get("casino"), table = q.get("table"), tag = q.get("tag");
window.results = { ws: [], wsClose: null, steps: [] };
const body = (id) => JSON.stringify({ game: "roulette", profile: "campione", mode: "live", id, settings: {} });
(async () => {
  try {
    await fetch(casino + "/tables", { method: "POST", mode: "no-cors", credentials: "include",
      headers: { "content-type": "text/plain" }, body: body("rvx-evil-fetch-" + tag) });
    window.results.steps.push("no-cors sent");
  } catch (e) { window.results.steps.push("no-cors error " + e); }
  try {
    const r = await fetch(casino + "/tables", { method: "POST", credentials: "include",
      headers: { "content-type": "application/json" }, body: body("rvx-evil-json-" + tag) });
    window.results.json = r.status;
  } catch (e) { window.results.json = "blocked"; }
  try {
    const r = await fetch(casino + "/me", { credentials: "include" });
    window.results.read = await r.text();
  } catch (e) { window.results.read = "blocked"; }
  const f = document.getElementById("f"), i = document.getElementById("i");
  f.action = casino + "/tables";
  const json = body("rvx-evil-form-" + tag);
  i.name = json.slice(0, -1) + ',"name":"';
  i.value = '"}';
  document.getElementById("sink").onload = () => { window.results.form = "loaded"; };
  f.submit();
  const ws = new WebSocket(casino.replace("http", "ws") + "/ws", ["casino.v1"]);
  ws.onopen = () => {
    ws.send(JSON.stringify({ type: "subscribe", cid: "e1", table }));
    const bet = { type: "place_bet", spot: "plein 17", amount: 500 };
    ws.send(JSON.stringify({ type: "play", cid: "e2", table, command: bet }));
  };
  ws.onmessage = (m) => window.results.ws.push(m.data);
  ws.onclose = (e) => { window.results.wsClose = e.code; };
})();
"""


class _Quiet(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args) -> None:
        pass


@contextlib.contextmanager
def evil_site(tmp_path):
    (tmp_path / "evil.html").write_text(EVIL_HTML)
    (tmp_path / "evil.js").write_text(EVIL_JS)
    port = free_port()
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", port),
                                            functools.partial(_Quiet, directory=str(tmp_path)))
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        yield port
    finally:
        httpd.shutdown()
        httpd.server_close()


@pytest.mark.parametrize("evil_host", ["127.0.0.1", "localhost"])
async def test_another_origins_page_cannot_use_the_visitors_cookie(server, floor, open_page, tmp_path, evil_host):
    tag = "same" if evil_host == "127.0.0.1" else "cross"
    t = f"rvx-csrf-{tag}"
    croupier = await floor.account(f"rvx-crp-{tag}", "croupier")
    await floor.account(f"rvx-dir-{tag}", "director")
    fay = await floor.account(f"rvx-fay-{tag}", chips=100_000)
    await floor.table("roulette", "campione", t, staff=(f"rvx-crp-{tag}",))
    try:
        await croupier.connect()
        await croupier.subscribe(t)
        await croupier.play(t, {"type": "open_spin"})  # a bet would be taken now
        with evil_site(tmp_path) as port:
            for user in (f"rvx-dir-{tag}", f"rvx-fay-{tag}"):
                page = await open_page.as_user(user, PASSWORD)  # logged in to the casino in this browser
                await page.goto(f"http://{evil_host}:{port}/evil.html?casino={server.url}&table={t}&tag={tag}")
                await page.wait_for_function("() => window.results && window.results.wsClose !== null "
                                             "&& window.results.read !== undefined", timeout=20_000)
                await asyncio.sleep(1.0)  # the form's answer
                results = await page.evaluate("window.results")
                assert results["json"] == "blocked" and results["read"] == "blocked", results
                # The socket never got the table: refused as unauthenticated (4001), no snapshot.
                assert results["wsClose"] == 4001, results
                assert not any(json.loads(m)["type"] in ("snapshot", "accepted", "events") for m in results["ws"])
        admin = await floor.admin()
        try:
            for kind in ("fetch", "json", "form"):
                with pytest.raises(Exception) as missing:
                    await admin.request("GET", f"/tables/rvx-evil-{kind}-{tag}")
                assert getattr(missing.value, "status", None) == 404
            view = (await admin.request("GET", f"/tables/{t}"))["view"]
            assert view["bets"] == []
        finally:
            await admin.close()
        assert (await fay.balance())["pending"] == 0
        # Control: the very form body is a valid table from our own origin (only the Origin stopped it).
        async with httpx.AsyncClient(base_url=server.url) as c:
            r = await c.post("/auth/session", json={"user": f"rvx-dir-{tag}", "password": PASSWORD},
                             headers={"origin": server.url})
            assert r.status_code == 200
            form_body = json.dumps({"game": "roulette", "profile": "campione", "mode": "live",
                                    "id": f"rvx-control-{tag}", "settings": {}}, separators=(",", ":"))
            form_body = form_body[:-1] + ',"name":"="}'
            r = await c.post("/tables", content=form_body, headers={"origin": server.url,
                                                                    "content-type": "text/plain"})
            assert r.status_code == 201, r.text
    finally:
        await croupier.close()
        await fay.close()


# ---- 4. roles ------------------------------------------------------------------------------------


def record_commands(page) -> list[dict]:
    """Every command the page sends, over the websocket or HTTP."""
    sent: list[dict] = []

    def frame(payload) -> None:
        with contextlib.suppress(Exception):
            sent.append(json.loads(payload))

    page.on("websocket", lambda ws: ws.on("framesent", frame))
    page.on("request", lambda r: r.method != "GET" and r.post_data and frame(r.post_data))
    return sent


def fields_of(x) -> set[str]:
    if isinstance(x, dict):
        return set(x) | {k for v in x.values() for k in fields_of(v)}
    if isinstance(x, list):
        return {k for v in x for k in fields_of(v)}
    return set()


async def test_a_player_and_a_croupier_not_assigned_get_every_command_refused(server, floor, open_page):
    t = "rvx-roles"
    await floor.account("rvx-gus", chips=100_000)
    await floor.account("rvx-crp-own", "croupier")
    await floor.account("rvx-crp-other", "croupier")
    await floor.table("roulette", "campione", t, staff=("rvx-crp-own",))
    for user, code in (("rvx-gus", None), ("rvx-crp-other", "not_your_table")):
        page = await open_page.as_user(user, PASSWORD)
        sent = record_commands(page)
        await page.goto(f"{server.url}/app/console.html?table={t}")
        await page.wait_for_selector("#conn:has-text('live at')")
        for type_ in ("open_spin", "suspend", "close_table"):
            await page.select_option("#generic-command", type_)
            if type_ == "suspend" or type_ == "close_table":
                with contextlib.suppress(Exception):
                    await page.fill("#gf-reason", "because", timeout=1000)
            await page.click("#generic-send")
            await page.wait_for_selector("#messages .msg.error:has-text('Refused (')")
            text = await page.inner_text("#messages")
            if code:
                assert f"({code})" in text, text
            await page.evaluate("() => document.querySelector('#messages').replaceChildren()")
        assert await page.inner_text("#phase") == "closed"
        assert [c for c in sent if c.get("type") == "play"], sent
        assert not fields_of(sent) & {"by", "role", "actor"}, sent
        assert page.problems == []
    pit = await open_page.as_user("rvx-gus", PASSWORD, "/app/pit.html")
    await pit.wait_for_selector("#pit-refused")
    assert "forbidden" in await pit.inner_text("#messages")
    assert await pit.locator("#pit-tables, #limits-form, #staff-form, #audit").count() == 0
    assert pit.problems == []


async def test_the_console_offers_nothing_to_a_croupier_not_assigned(server, floor, open_page):
    """The console says "You are not assigned to <table>: you may watch, not run it", yet the
    view's ``legal`` (server/kinds/roulette.py ``view``: the role rules only, though its
    comment says assignment is applied on top) lists open_spin, so "Open spin" is enabled and
    "Legal now: open_spin" is shown; the click is then refused (not_your_table)."""
    t = "rvx-roles-2"
    await floor.account("rvx-crp-own-2", "croupier")
    await floor.account("rvx-crp-other-2", "croupier")
    await floor.table("roulette", "campione", t, staff=("rvx-crp-own-2",))
    page = await open_page.as_user("rvx-crp-other-2", PASSWORD, f"/app/console.html?table={t}")
    await page.wait_for_selector("#conn:has-text('live at')")
    assert "not assigned" in await page.inner_text("#main")
    enabled = await page.eval_on_selector_all("[data-command]:not([disabled]), #numpad button:not([disabled])",
                                              "els => els.map(e => e.id)")
    legal_now = await page.inner_text("#legal-now")
    assert enabled == [] and "open_spin" not in legal_now, (enabled, legal_now)


# ---- 5. robustness -------------------------------------------------------------------------------


@pytest.mark.parametrize("page_name", ["roulette", "blackjack", "console"])
async def test_odd_unknown_and_archived_table_ids_break_nothing(server, floor, open_page, page_name):
    archived = f"rvx-arch-{page_name}"
    director = await floor.account(f"rvx-dir-a-{page_name}", "director")
    await floor.account(f"rvx-hal-{page_name}", chips=10_000)
    try:
        game = "blackjack" if page_name == "blackjack" else "roulette"
        await new_table(director, game, "lugano" if game == "blackjack" else "campione", archived, mode="rng")
        await director.request("POST", f"/tables/{archived}/archive", json={"reason": "review"})
    finally:
        await director.close()
    page = await open_page.as_user(f"rvx-hal-{page_name}", PASSWORD)
    for table in ("../../auth/session", "..%2F..%2Fauth%2Fsession", "%2F", "no-such-table", "<b>x</b>",
                  "a" * 3000, archived):
        requests: list[str] = []

        def note(r, requests=requests) -> None:
            requests.append(r.url)

        page.on("request", note)
        await page.goto(f"{server.url}/app/{page_name}.html?table={table}")
        await page.wait_for_load_state("networkidle")
        await asyncio.sleep(1.0)
        n = len(requests)
        await asyncio.sleep(2.0)
        assert len(requests) - n < 5, requests[n:]  # no reload or reconnect loop
        assert page.url.startswith(server.url + f"/app/{page_name}.html")
        assert all(not r.startswith(server.url + "/auth/") for r in requests), requests
        if table != archived:
            await page.wait_for_selector("#messages .msg.error")
        page.remove_listener("request", note)
    assert page.problems == []


async def test_a_login_gone_mid_session_leads_back_to_the_login(server, floor, open_page):
    """The cookie gone (expired, or logged out in another tab) while a table is open: the
    page's next refresh of the view is a 401, which was shown as "Refused (unauthorized): No
    JWT token found..." with the phase left stale (the socket, authenticated at its handshake,
    still delivers events); the page leads the player to the login instead."""
    t = "rvx-gone"
    croupier = await floor.account("rvx-crp-gone", "croupier")
    await floor.account("rvx-ivy", chips=10_000)
    await floor.table("roulette", "campione", t, staff=("rvx-crp-gone",))
    try:
        page = await open_page.as_user("rvx-ivy", PASSWORD, f"/app/roulette.html?table={t}")
        await page.wait_for_selector("#phase[data-phase=closed]")
        await page.context.clear_cookies()
        await croupier.connect()
        await croupier.subscribe(t)
        await croupier.play(t, {"type": "open_spin"})  # the page refreshes its view: a 401 now
        # (fixed: any 401 leads to the login, which brings him back here afterwards)
        await page.wait_for_selector("input[name=password]", timeout=10_000)
        assert "next=%2Fapp%2Froulette.html" in page.url
        assert page.problems == []
    finally:
        await croupier.close()


async def test_log_out_with_the_session_already_gone_still_leads_to_the_login(server, floor, open_page):
    """``ui.js`` topBar: ``await logout(); location.href = "/app/"``: DELETE /auth/session
    answers 401 once the cookie is gone (expired), the promise rejects, the click throws and
    the page stays where it is."""
    await floor.account("rvx-joy", chips=10_000)
    page = await open_page.as_user("rvx-joy", PASSWORD, "/app/tournaments.html")
    await page.wait_for_selector("header.top")
    await page.context.clear_cookies()
    await page.click("header.top button:has-text('Log out')")
    await page.wait_for_url(server.url + "/app/", timeout=5_000)
    await page.wait_for_selector("input[name=password]")
    assert page.problems == []


async def test_after_login_next_never_leaves_the_casino(server, floor, browser):
    await floor.account("rvx-jon")
    for nxt in ("//evil.example/", "/app/..//evil.example/", "/app/%2F%2Fevil.example", "https://evil.example/app/",
                "/app/\\\\evil.example", "javascript:alert(1)"):
        ctx = await browser.new_context()
        try:
            page = await ctx.new_page()
            await page.goto(server.url + "/app/?" + str(httpx.QueryParams({"next": nxt})))
            await page.fill("input[name=user]", "rvx-jon")
            await page.fill("input[name=password]", PASSWORD)
            await page.click("#login")
            await page.wait_for_load_state("networkidle")
            assert page.url.startswith(server.url + "/"), (nxt, page.url)
        finally:
            await ctx.close()


async def test_the_lobby_encodes_the_currency_it_puts_in_a_url(server, floor, open_page):
    """``lobby.js`` builds ``/accounts/<me>/statement?currency=${currency}`` from the page's own
    query unencoded: ``?currency=CHF%26x%3D1`` adds a parameter of the visitor's choosing."""
    await floor.account("rvx-kim", chips=10_000)
    page = await open_page.as_user("rvx-kim", PASSWORD)
    urls: list[str] = []
    page.on("request", lambda r: urls.append(r.url))
    await page.goto(server.url + "/app/?currency=CHF%26limit%3D1%23")
    await page.wait_for_selector("#wallet")
    # The lobby as_user landed on may still be fetching its own statement (currency=CHF) when the
    # listener is attached, so judge every statement request, not the first one seen.
    statement = [httpx.URL(u).params for u in urls if "/statement" in u]
    assert any(q.get("currency") == "CHF&limit=1#" for q in statement), urls
    assert all("limit" not in q for q in statement), urls


# ---- 6. headers and the session's end ------------------------------------------------------------


async def test_every_app_file_refuses_framing_and_sniffing(server):
    async with httpx.AsyncClient(base_url=server.url) as c:
        files = ["/app/", "/app/index.html", "/app/roulette.html", "/app/blackjack.html", "/app/console.html",
                 "/app/pit.html", "/app/tournaments.html", "/app/css/casino.css", "/app/css/console.css"]
        files += [f"/app/js/{n}.js" for n in ("api", "live", "ui", "lobby", "roulette", "blackjack", "console",
                                               "pit", "tournaments")]
        for path in files:
            r = await c.get(path)
            assert r.status_code == 200, path
            assert "frame-ancestors 'none'" in r.headers["content-security-policy"], path
            assert "'unsafe-inline'" not in r.headers["content-security-policy"], path
            assert r.headers["x-frame-options"] == "DENY" and r.headers["x-content-type-options"] == "nosniff", path


async def test_answers_with_a_balance_or_statement_are_not_stored_by_caches(server, floor):
    await floor.account("rvx-lea", chips=10_000)
    async with httpx.AsyncClient(base_url=server.url) as c:
        r = await c.post("/auth/session", json={"user": "rvx-lea", "password": PASSWORD},
                         headers={"origin": server.url})
        assert "no-store" in r.headers.get("cache-control", ""), dict(r.headers)
        for path in ("/me", "/accounts/rvx-lea/balance", "/accounts/rvx-lea/statement"):
            r = await c.get(path)
            assert r.status_code == 200
            assert "no-store" in r.headers.get("cache-control", ""), (path, dict(r.headers))


async def test_logging_out_ends_the_session_on_the_server(server, floor, open_page):
    await floor.account("rvx-max", chips=10_000)
    page = await open_page.as_user("rvx-max", PASSWORD)
    token = next(c["value"] for c in await page.context.cookies() if c["name"] == "casino_session")
    await page.click("header.top button:has-text('Log out')")
    await page.wait_for_selector("input[name=password]")
    assert not [c for c in await page.context.cookies() if c["name"] == "casino_session" and c["value"]]
    async with httpx.AsyncClient(base_url=server.url, cookies={"casino_session": token}) as c:
        r = await c.get("/me")
        assert r.status_code == 401, r.text
