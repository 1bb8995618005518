"""Every HTTP route x every role, against a real server (issue 12): who may call what is
written out here by hand, from the house's separation of duties (server/policy.py), and
the server must agree on every cell. No call here by anyone but the cashier changes a wallet (a
player entering a tournament pays from his own: tests/server/test_tournament_e2e.py).

A cell is "allowed" when the answer is neither 401 nor 403 (the request may still be
refused on its merits, e.g. 404 or 422); "refused" cells must answer exactly 403 (401 for
no token). The route list comes from the server's own OpenAPI document, so a new route
without a row here fails the test."""

from __future__ import annotations

import itertools

import asyncpg
import pytest

from server.client import CasinoClient, HTTPError

from .conftest import PASSWORD

pytestmark = pytest.mark.slow

ROLES = ("player", "other_player", "croupier", "stranger_croupier", "chef", "inspector", "cashier",
         "director", "admin")
USERS = {"player": "mh-ann", "other_player": "mh-bob", "croupier": "mh-croupier",
         "stranger_croupier": "mh-stranger", "chef": "mh-chef", "inspector": "mh-inspector",
         "cashier": "mh-cashier", "director": "mh-director", "admin": "admin"}
TABLE, BJ, SPARE, CUP_ID = "mh-roul", "mh-bj", "mh-spare", "mh-cup"
ALL = set(ROLES)
OVERSIGHT = {"inspector", "director", "admin"}
SEE_WALLETS = {"inspector", "cashier", "director", "admin"}
DESK = {"cashier", "inspector", "director"}
PLAYERS = {"player", "other_player"}  # a player's own settings (/me/...)

_n = itertools.count()


def _unique() -> str:
    return f"mh{next(_n)}"


# (method, path template, body factory, roles allowed)
ROUTES = [
    ("GET", "/me", None, ALL),
    ("POST", "/accounts", lambda: {"user": _unique(), "password": PASSWORD, "role": "player"},
     {"director", "admin"}),
    ("GET", "/accounts", None, SEE_WALLETS),
    ("GET", "/accounts/{user}/balance", None, {"player"} | SEE_WALLETS),
    ("GET", "/accounts/{user}/statement", None, {"player"} | SEE_WALLETS),
    ("POST", "/cashier/deposit", lambda: {"user": "mh-ann", "amount": 100, "id": _unique()}, {"cashier"}),
    ("POST", "/cashier/cash-out", lambda: {"user": "mh-ann", "amount": 100, "id": _unique()}, {"cashier"}),
    ("POST", "/credit", lambda: {"user": "mh-ann", "limit": 0, "id": _unique()}, {"inspector"}),
    ("GET", "/ledger/check", None, OVERSIGHT),
    ("GET", "/audit", None, OVERSIGHT),
    ("GET", "/reports/daily?date=2026-11-24", None, OVERSIGHT),  # the regulator's daily report
    ("GET", "/tables", None, ALL),
    ("GET", "/tables/games", None, ALL),
    ("POST", "/tables", lambda: {"game": "roulette", "profile": "campione", "id": _unique()}, {"director", "admin"}),
    ("GET", "/tables/{table_id}", None, ALL),
    ("POST", "/tables/{table_id}/staff", lambda: {"user": "mh-croupier"}, {"director", "admin"}),
    ("POST", "/tables/{table_id}/authorisations", lambda: {"chef": "mh-chef", "action": "suspend"}, {"director"}),
    ("POST", "/tables/{table_id}/archive", lambda: {"reason": "matrix"}, {"director"}),
    ("GET", "/tables/{table_id}/limits", None, ALL),
    # Roulette maxima are the director's (Art. 5); at blackjack a chef sets his own table's too.
    ("PUT", "/tables/{table_id}/limits", lambda: {"minimum": 500}, {"director"}),
    ("PUT", "/tables/{bj}/limits", lambda: {"minimum": 1_000, "maximum": 10_000}, {"chef", "director"}),
    ("GET", "/tables/{table_id}/rounds/{round_id}", None, {"player", "croupier", "chef"} | OVERSIGHT),
    ("GET", "/rounds", None, ALL),
    ("GET", "/rounds?user={user}", None, {"player"} | OVERSIGHT),
    # ``?user=`` repeated: the handler reads the last, so every one must be the caller's own
    # (bob naming himself first, then ann, was let through: an outside tester's find).
    ("GET", "/rounds?user=mh-bob&user={user}", None, OVERSIGHT),
    ("GET", "/rounds?user={user}&user=mh-bob", None, OVERSIGHT),
    ("GET", "/accounts/{user}/balance?user=mh-bob", None, SEE_WALLETS),
    # Game recall (issue 17): a player's own rounds, or anyone's for oversight (never the cashier);
    # a dispute's replay for oversight (the roulette table's round, run again through a fresh engine).
    ("GET", "/players/{user}/recall", None, {"player"} | OVERSIGHT),
    ("GET", "/tables/{table_id}/rounds/{round_id}/replay", None, OVERSIGHT),
    ("GET", "/tournaments", None, ALL),
    ("POST", "/tournaments", lambda: {"id": _unique(), "spec": CUP}, {"director"}),
    ("GET", "/tournaments/{tournament_id}", None, ALL),
    # Each command's own roles are the coordinator's (tests/blackjack/tournament: every role x
    # command); here the route's: only the director pauses (refused "not_running" on its merits).
    ("POST", "/tournaments/{tournament_id}/commands", lambda: {"command": {"type": "pause"}}, {"director"}),
    # The unclaimed register (Art. 19): listed for the cashier and oversight; only the cashier
    # pays an item out, only an inspector (the Controllore comunale) countersigns one (here
    # none exists: refused "unknown_unclaimed" on its merits).
    ("GET", "/unclaimed", None, {"cashier"} | OVERSIGHT),
    ("POST", "/unclaimed/{item_id}/claim", lambda: {"player": "floor:nobody"}, {"cashier"}),
    ("POST", "/unclaimed/{item_id}/countersign", None, {"inspector"}),
    # Responsible gaming: a player's own exclusion and limits (an unknown period: refused
    # invalid_period on its merits, so ann stays in play); the desk's self-exclusion for a
    # player who asks, its lifting (ann has none: not_excluded) and the cashier's age/ID check.
    ("POST", "/me/exclusion", lambda: {"kind": "cool_off", "period": "never"}, PLAYERS),
    ("GET", "/me/limits", None, PLAYERS),
    ("PUT", "/me/limits", lambda: {}, PLAYERS),
    ("POST", "/accounts/{user}/exclusion", lambda: {"period": "never"}, DESK),
    ("DELETE", "/accounts/{user}/exclusion", None, DESK),
    ("POST", "/accounts/{user}/verification", lambda: {"checked": "passport (matrix)"}, {"cashier"}),
]
CUP = {"name": "Matrix Cup", "buy_in": 10_000, "starts_at": 2_000_000_000}
# Open to anyone: logging in (a token, or the pages' session cookie: test_pages_session_e2e.py)
# and logging out, of the pages or with a bearer token (each revokes the caller's own token:
# test_logout_e2e.py).
PUBLIC = {("POST", "/auth/login"), ("POST", "/auth/register"), ("POST", "/auth/session"), ("DELETE", "/auth/session"),
          ("POST", "/auth/logout")}


async def _wallets(db_url: str) -> dict[str, tuple]:
    conn = await asyncpg.connect(db_url)
    try:
        rows = await conn.fetch("SELECT id, debits_posted, credits_posted, debits_pending FROM ledger_accounts "
                                "WHERE kind = 'wallet' ORDER BY id")
        return {r["id"]: tuple(r)[1:] for r in rows}
    finally:
        await conn.close()


@pytest.fixture(scope="module")
async def clients(floor):
    out = {}
    for role, user in USERS.items():
        if user == "admin":
            out[role] = await floor.admin()
            continue
        kind = {"other_player": "player", "stranger_croupier": "croupier"}.get(role, role)
        out[role] = await floor.account(user, kind, chips=10_000 if kind == "player" else 0)
    await floor.table("roulette", "campione", TABLE, staff=("mh-croupier", "mh-chef"))
    await floor.table("blackjack", "titano", BJ, staff=("mh-croupier", "mh-chef"), min_bet=1_000, max_bet=10_000)
    await out["director"].request("POST", "/tournaments", json={"id": CUP_ID, "spec": CUP})
    # ann plays spin 1 (she may recall it); the spare table is the one the director archives.
    ann, croupier = out["player"], out["croupier"]
    for c in (ann, croupier):
        await c.connect()
        await c.subscribe(TABLE)
    await croupier.play(TABLE, {"type": "open_spin"})
    await ann.bet(TABLE, "rouge", 500)
    yield out
    for c in out.values():
        await c.close()


async def test_every_route_is_in_the_matrix(clients):
    doc = await clients["admin"].request("GET", "/schema/openapi.json")
    served = {(m.upper(), p) for p, ops in doc["paths"].items() for m in ops}
    covered = {(m, p.split("?")[0].replace("{bj}", "{table_id}")) for m, p, _, _ in ROUTES} | PUBLIC
    assert served == covered


async def test_every_role_on_every_route(clients, floor, db_url):
    cells = []
    for method, template, body, _allowed in ROUTES:
        for role in ROLES:
            table = SPARE if template.endswith("/archive") else TABLE
            if template.endswith("/archive") and role == "director":
                await floor.table("roulette", "campione", SPARE)
            path = template.format(user="mh-ann", table_id=table, bj=BJ, round_id="spin-1", tournament_id=CUP_ID,
                                   item_id="u-none")
            before = await _wallets(db_url)
            status = 200
            try:
                await clients[role].request(method, path, json=body() if body else None)
            except HTTPError as exc:
                status = exc.status
                if status in (401, 403):
                    assert exc.problem["type"] == f"/errors/{exc.code}"
            after = await _wallets(db_url)
            if role != "cashier":  # (a new account's wallet opens empty)
                assert {k: v for k, v in after.items() if k in before} == before, (method, path, role)
                assert all(v == (0, 0, 0) for k, v in after.items() if k not in before)
            cells.append((method, template, role, "allowed" if status not in (401, 403) else status))
    expected = [(m, t, role, "allowed" if role in allowed else 403) for m, t, _, allowed in ROUTES for role in ROLES]
    wrong = [(got, want) for got, want in zip(cells, expected, strict=True) if got != want]
    assert not wrong


async def test_no_token_no_access(floor):
    anonymous = CasinoClient(floor.server.url)
    try:
        for method, template, body, _ in ROUTES:
            path = template.format(user="mh-ann", table_id=TABLE, bj=BJ, round_id="spin-1", tournament_id=CUP_ID,
                                   item_id="u-none")
            with pytest.raises(HTTPError) as e:
                await anonymous.request(method, path, json=body() if body else None)
            assert e.value.status == 401, path
    finally:
        await anonymous.close()
