"""The floor a load run plays on, set up through the real HTTP API as an admin would:
player accounts with chips, croupiers assigned to live tables, RNG and live tables.

The result is a plain dict (saved as JSON for locust's process) that says who logs in
with which password and which tables exist.
"""

from __future__ import annotations

import asyncio
from typing import Any

import httpx

PASSWORD = "load-pass-123"
CHIPS = 10_000_000  # CHF 100,000.00 per player: no run of minutes runs out of chips


async def _login(url: str, user: str, password: str) -> httpx.AsyncClient:
    http = httpx.AsyncClient(base_url=url, timeout=60)
    r = await http.post("/auth/login", json={"user": user, "password": password})
    r.raise_for_status()
    http.headers["Authorization"] = f"Bearer {r.json()['token']}"
    return http


async def _account(http: httpx.AsyncClient, cashier: httpx.AsyncClient, user: str, role: str, chips: int) -> None:
    r = await http.post("/accounts", json={"user": user, "password": PASSWORD, "role": role})
    r.raise_for_status()
    if chips:  # CHF and EUR: Titano's tables play in euros
        for cur in ("CHF", "EUR"):
            r = await cashier.post("/cashier/deposit", json={"user": user, "amount": chips, "currency": cur,
                                                             "id": f"load-dep-{user}-{cur}"})
            r.raise_for_status()


async def _table(http: httpx.AsyncClient, table_id: str, game: str, profile: str, mode: str,
                 staff: list[str], settings: dict[str, Any]) -> None:
    r = await http.post("/tables", json={"game": game, "profile": profile, "mode": mode, "id": table_id,
                                         "settings": settings})
    r.raise_for_status()
    for user in staff:
        r = await http.post(f"/tables/{table_id}/staff", json={"user": user})
        r.raise_for_status()


async def _admin_and_cage(url: str, admin_password: str, cashier: str) -> tuple[httpx.AsyncClient, httpx.AsyncClient]:
    """An admin's session and a cashier's (chips come from the cage: only a cashier deposits)."""
    http = await _login(url, "admin", admin_password)
    (await http.post("/accounts", json={"user": cashier, "password": PASSWORD, "role": "cashier"})
     ).raise_for_status()
    return http, await _login(url, cashier, PASSWORD)


async def build_floor(url: str, admin_password: str, *, players: int = 40, roulette_live: int = 1,
                      roulette_rng: int = 1, blackjack_rng: tuple[str, ...] = ("campione", "titano", "lugano"),
                      blackjack_live: tuple[str, ...] = ("lugano", "titano"), parallel: int = 8) -> dict[str, Any]:
    """Create the accounts and tables; return the floor description."""
    http, cashier = await _admin_and_cage(url, admin_password, "load-cashier")
    try:
        gate = asyncio.Semaphore(parallel)

        async def limited(coro):
            async with gate:
                await coro

        names = [f"lp{i:05d}" for i in range(players)]
        croupiers = [f"lc-roulette-{i}" for i in range(roulette_live)]
        croupiers += [f"lc-bj-{p}-{i}" for i, p in enumerate(blackjack_live)]
        await asyncio.gather(*(limited(_account(http, cashier, n, "player", CHIPS)) for n in names),
                             *(limited(_account(http, cashier, c, "croupier", 0)) for c in croupiers))
        floor: dict[str, Any] = {"url": url, "password": PASSWORD, "players": names,
                                 "roulette_live": {}, "roulette_rng": [], "blackjack_rng": {},
                                 "blackjack_live": {}}
        for i in range(roulette_live):
            tid, croupier = f"load-roulette-live-{i}", f"lc-roulette-{i}"
            await _table(http, tid, "roulette", "campione", "live", [croupier], {})
            floor["roulette_live"][tid] = croupier
        for i in range(roulette_rng):
            tid = f"load-roulette-rng-{i}"
            await _table(http, tid, "roulette", "campione", "rng", [], {})
            floor["roulette_rng"].append(tid)
        for profile in blackjack_rng:
            tid = f"load-bj-rng-{profile}"
            await _table(http, tid, "blackjack", profile, "rng", [], {"min_bet": 1_000, "max_bet": 10_000})
            floor["blackjack_rng"][tid] = profile
        for i, profile in enumerate(blackjack_live):
            tid, croupier = f"load-bj-live-{profile}", f"lc-bj-{profile}-{i}"
            await _table(http, tid, "blackjack", profile, "live", [croupier], {"min_bet": 1_000, "max_bet": 10_000})
            floor["blackjack_live"][tid] = {"profile": profile, "croupier": croupier}
        return floor
    finally:
        await http.aclose()
        await cashier.aclose()


async def bench_floor(url: str, admin_password: str, players: int, tables: int,
                      croupier: str = "bench-croupier", parallel: int = 8, db_url: str | None = None,
                      settings: dict | None = None) -> list[str]:
    """The benchmarks' floor: players ``bp00000``... with chips, one croupier assigned to
    ``tables`` live roulette tables (with ``settings``); the table ids. With ``db_url`` the
    players are made in bulk (``_bulk_players``); the tables, the croupier and every chip still
    go through HTTP."""
    http, cashier = await _admin_and_cage(url, admin_password, "bench-cashier")
    try:
        gate = asyncio.Semaphore(parallel)

        async def account(user: str, role: str, chips: int) -> None:
            async with gate:
                await _account(http, cashier, user, role, chips)

        async def chips(user: str) -> None:
            async with gate:
                r = await cashier.post("/cashier/deposit", json={"user": user, "amount": CHIPS, "currency": "CHF",
                                                                 "id": f"load-dep-{user}-CHF"})
                r.raise_for_status()

        names = [f"bp{i:05d}" for i in range(players)]
        if db_url:
            await account(croupier, "croupier", 0)
            await _bulk_players(db_url, names)
            await asyncio.gather(*(chips(n) for n in names))
        else:
            await asyncio.gather(account(croupier, "croupier", 0), *(account(n, "player", CHIPS) for n in names))
        ids = [f"bench-roulette-{i}" for i in range(tables)]
        for tid in ids:
            await _table(http, tid, "roulette", "campione", "live", [croupier], settings or {})
        return ids
    finally:
        await http.aclose()
        await cashier.aclose()


async def _bulk_players(db_url: str, names: list[str]) -> None:
    """Player accounts made by the server's own ``AccountService`` (the user, his wallet, the
    audit record) on the load run's database, all with one argon2 hash of ``PASSWORD``
    computed once. Over HTTP each account costs an argon2 hash, ≈ 0.2 s on 2 cores: 2,000
    players would take 7 minutes before a benchmark that logs nobody in (it mints tokens)."""
    from argon2 import PasswordHasher

    import server.store.users as users
    from games.db import create_pool
    from games.ledger import Ledger
    from server.accounts import AccountService
    from server.auth import Principal

    hashed = PasswordHasher().hash(PASSWORD)

    async def same_hash(password: str) -> str:
        assert password == PASSWORD
        return hashed

    real, users.hash_password = users.hash_password, same_hash
    pool = await create_pool(db_url, min_size=1, max_size=8)
    try:
        service = AccountService(pool, Ledger(pool))
        admin = Principal("admin", "admin", "CHF")
        gate = asyncio.Semaphore(8)

        async def one(name: str) -> None:
            async with gate:
                await service.create(admin, name, PASSWORD, "player", "CHF")

        await asyncio.gather(*(one(n) for n in names))
    finally:
        users.hash_password = real
        await pool.close()


async def login_tokens(url: str, users: list[str], password: str = PASSWORD, parallel: int = 8) -> dict[str, str]:
    """A bearer token for each user (logins in parallel, bounded)."""
    gate = asyncio.Semaphore(parallel)
    out: dict[str, str] = {}
    async with httpx.AsyncClient(base_url=url, timeout=60) as http:
        async def one(user: str) -> None:
            async with gate:
                r = await http.post("/auth/login", json={"user": user, "password": password})
                r.raise_for_status()
                out[user] = r.json()["token"]

        await asyncio.gather(*(one(u) for u in users))
    return out
