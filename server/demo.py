"""Demo floor: on a fresh database, a few RNG tables and demo accounts (printed at start);
with ``casino demo``, bots that play at them so a newcomer sees live tables at once."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import random
from typing import Any

from games.errors import GameError
from games.ledger import accounts
from games.ledger.accounts import Kind
from server import store
from server.auth import Principal

log = logging.getLogger("casino.demo")

# (user, password, role)
STAFF = [
    ("director", "director-pass", "director"),
    ("inspector", "inspector-pass", "inspector"),
    ("cashier", "cashier-pass", "cashier"),
    ("croupier", "croupier-pass", "croupier"),
    ("chef", "chef-pass", "chef"),
]
PLAYERS = ["alice", "bob", "carol", "dave"]
BOTS = ["bot-roulette", "bot-campione", "bot-titano", "bot-lugano"]
# They play one Sit&Go after another (Titano Appendix 1), so the tournament channel has news.
SIT_AND_GO_BOTS = [f"bot-sng-{i}" for i in range(1, 6)]
SIT_AND_GO = {"format": "sit_and_go", "buy_in": 1_000, "decks": 1, "shoes": 2, "min_bet": 10, "max_bet": 50}
CHIPS = 100_000  # CHF/EUR 1,000.00 each
# (table id, game, profile, currency, settings)
TABLES = [
    ("campione-roulette-1", "roulette", "campione", "CHF", {}),
    ("campione-blackjack-1", "blackjack", "campione", "CHF", {"min_bet": 1_000, "max_bet": 10_000}),
    ("titano-blackjack-1", "blackjack", "titano", "EUR", {"min_bet": 1_000, "max_bet": 20_000}),
    ("lugano-blackjack-1", "blackjack", "lugano", "CHF", {"min_bet": 1_000, "max_bet": 20_000}),
]


def password_of(user: str) -> str:
    return f"{user}-pass"


async def seed(ctx: Any) -> None:
    """Create the demo floor once (a database that already has tables is left alone)."""
    from server.kinds import KINDS
    from server.tables import TableService

    async with ctx.pool.acquire() as conn:
        if await store.any_table(conn):
            return
        admin = Principal("admin", "admin")
        for user, password, role in STAFF:
            with contextlib.suppress(GameError):
                await store.create_user(conn, await store.new_user(user, password), role)
        for user in PLAYERS + BOTS + SIT_AND_GO_BOTS:
            with contextlib.suppress(GameError):
                await store.create_user(conn, await store.new_user(user, password_of(user)), "player")
    for user in PLAYERS + BOTS + SIT_AND_GO_BOTS:
        for cur in ("CHF", "EUR"):
            await ctx.ledger.open_account(accounts.wallet(user, cur), cur, Kind.WALLET)
            await ctx.ledger.deposit(user, cur, CHIPS, f"demo-{user}-{cur}")
    for tid, game, profile, cur, settings in TABLES:
        if game not in KINDS:
            continue
        await TableService.of(ctx).create(admin, game, profile, "rng", cur, tid, settings, tid)
        async with ctx.pool.acquire() as conn:
            await store.assign_staff(conn, tid, "croupier")
            await store.assign_staff(conn, tid, "chef")
    lines = ["casino demo floor:"]
    lines += [f"  {role:<9} {user:<10} password {password}" for user, password, role in STAFF]
    lines += [f"  player    {u:<10} password {password_of(u)}  (CHF and EUR 1,000.00)" for u in PLAYERS]
    lines += [f"  table     {t[0]} ({t[1]}, {t[2]} rules, {t[3]}, RNG)" for t in TABLES if t[1] in KINDS]
    lines += ["  Sit&Go    demo-sng-1, -2, ... (EUR 10; five bots enter each; GET /tournaments)"]
    print("\n".join(lines), flush=True)


# ---- bots ------------------------------------------------------------------------------

ROULETTE_BETS = ["rouge", "noir", "pair", "impair", "manque", "passe", "plein 17", "cheval 0/3",
                 "douzaine 2", "colonne 1", "carré 1-2-4-5", "sixain 31-36", "transversale 13-15"]
ANNOUNCED = ["voisins du zéro", "tiers du cylindre", "orphelins", "17 et 2 voisins"]


async def run_bots(url: str) -> None:
    """Each bot plays one table for ever over the real websocket protocol (server.client)."""
    await asyncio.gather(
        _bot(url, "bot-roulette", "campione-roulette-1", _roulette),
        _bot(url, "bot-campione", "campione-blackjack-1", _blackjack),
        _bot(url, "bot-titano", "titano-blackjack-1", _blackjack),
        _bot(url, "bot-lugano", "lugano-blackjack-1", _blackjack),
        _sit_and_gos(url),
    )


async def _sit_and_gos(url: str) -> None:
    """The director opens a Sit&Go; five bots enter it, which starts it (Appendix 1); they
    play it to its winner; then the next one."""
    from loadtest.tournament_bots import TournamentBot, tournament_command
    from server.client import CasinoClient, HTTPError

    while True:
        clients: list[CasinoClient] = []
        try:
            director = CasinoClient(url)
            clients.append(director)
            await director.login("director", password_of("director"))
            taken = {t["id"] for t in await director.request("GET", "/tournaments")}
            n = next(k for k in range(1, 1_000_000) if f"demo-sng-{k}" not in taken)
            tid = f"demo-sng-{n}"
            await director.request("POST", "/tournaments", json={"id": tid, "spec": {
                **SIT_AND_GO, "name": f"Demo Sit&Go {n}"}})
            await tournament_command(director, tid, {"type": "open_registration"})
            bots = []
            for user in SIT_AND_GO_BOTS:
                c = CasinoClient(url)
                clients.append(c)
                await c.login(user, password_of(user))
                bots.append(TournamentBot(c, tid))
            runs = [asyncio.create_task(b.run(timeout=1800)) for b in bots]
            await asyncio.sleep(1)  # following it before it starts
            for b in bots:
                try:
                    await tournament_command(b.client, tid, {"type": "register"})
                except HTTPError as exc:
                    if exc.code != "insufficient_funds":
                        raise
                    await _top_up(url, str(b.user))  # the fees add up: the cashier sells it more chips
                    await tournament_command(b.client, tid, {"type": "register"})
            await asyncio.gather(*runs)
        except asyncio.CancelledError:
            for c in clients:
                await c.close()
            raise
        except Exception as exc:  # the server restarting: start over a little later
            log.info("demo Sit&Go: %s", exc)
        for c in clients:
            await c.close()
        await asyncio.sleep(5)


async def _top_up(url: str, user: str) -> None:
    from server.client import CasinoClient

    cashier = CasinoClient(url)
    try:
        await cashier.login("cashier", password_of("cashier"))
        await cashier.request("POST", "/cashier/deposit", json={"user": user, "amount": CHIPS, "currency": "EUR"})
    finally:
        await cashier.close()


async def _bot(url: str, user: str, table: str, play) -> None:
    from server.client import CasinoClient

    played = False
    while True:
        client = CasinoClient(url)
        try:
            await client.login(user, password_of(user))
            await client.connect()
            await client.subscribe(table)
            played = True
            await play(client, table, user)
        except asyncio.CancelledError:
            await client.close()
            raise
        except Exception as exc:  # a restart, a refused bet: start over a little later
            # (before the first game the server is still starting: not worth a line)
            log.log(logging.INFO if played else logging.DEBUG, "bot %s: %s", user, exc)
        await client.close()
        await asyncio.sleep(2)


async def _roulette(c: Any, table: str, user: str) -> None:
    rnd = random.Random()
    while True:
        msg = await c.next_event(table, "spin_opened", timeout=300)
        minimum = msg["event"]["settings"]["minimum"]
        for _ in range(rnd.randint(1, 3)):
            if rnd.random() < 0.2:
                await _quiet(c.announce(table, rnd.choice(ANNOUNCED), minimum))
            else:
                await _quiet(c.bet(table, rnd.choice(ROULETTE_BETS), minimum * rnd.randint(1, 4)))


async def _blackjack(c: Any, table: str, user: str) -> None:
    view = c.snapshots[table]["view"]
    seats = view["seats"]  # boxes 1..7
    box = seats.index(user) + 1 if user in seats else next((n for n in range(1, 8) if not seats[n - 1]), 1)
    if user not in seats:
        await _quiet(c.sit(table, box))
    minimum = view["min_bet"]
    if view["phase"] == "betting":
        await _stake(c, table, box, minimum)
    while True:
        msg = await c.next_event(table, timeout=300)
        if msg["type"] != "event":
            continue
        ev = msg["event"]
        if ev["type"] == "round_opened":
            minimum = ev["min_bet"]
            await _stake(c, table, box, minimum)
        elif ev["type"] == "turn" and ev["player"] == user:
            hand = _hand(c, msg, ev["box"], ev["hand"])
            await _quiet(c.act(table, "hit" if _total(hand) < 17 else "stand", ev["box"], ev["hand"]))
        elif ev["type"] == "offers_opened":
            for offer in ev["waiting"]:
                who, _, b = offer.partition("@")
                if who == user:
                    await _quiet(c.act(table, "decline_offer", int(b)))


async def _stake(c: Any, table: str, box: int, minimum: int) -> None:
    await _quiet(c.stake(table, box, minimum))
    # Campione: a player alone at the table plays at least two boxes.
    await _quiet(c.stake(table, box % 7 + 1, minimum))


def _hand(c: Any, msg: dict, box: int, hand: int) -> list[int]:
    """The cards of (box, hand) seen this round (after a split, close enough for a bot)."""
    return [f["event"]["card"] for f in c.frames
            if f.get("type") == "event" and f["table"] == msg["table"] and f["round"] == msg["round"]
            and f["event"]["type"] == "card_dealt" and f["event"]["box"] == box and f["event"]["hand"] == hand]


def _total(cards: list[int]) -> int:
    from blackjack.hands import hand_value

    return hand_value(cards)[0]


async def _quiet(coro) -> None:
    from server.client import Rejected

    with contextlib.suppress(Rejected):
        await coro
