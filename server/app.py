"""The Litestar app factory: settings, database, ledger, tables, HTTP, websocket."""

from __future__ import annotations

import logging
import secrets
from contextlib import asynccontextmanager
from typing import Any, AsyncIterator

from litestar import Litestar, Request, Response, get
from litestar.channels import ChannelsPlugin
from litestar.channels.backends.memory import MemoryChannelsBackend
from litestar.connection import ASGIConnection
from litestar.openapi import OpenAPIConfig
from litestar.openapi.plugins import SwaggerRenderPlugin
from litestar.datastructures import State

from games.db import create_pool, database_url, migrate
from games.errors import GameError
from games.ledger import accounts
from games.ledger.accounts import Kind
from server import asyncapi, audit, logs, store
from server.auth import Principal, make_jwt_auth
from server.config import Settings
from server.echo import echo_routes
from server.edge import EdgeText, check_body
from server.http import ROUTES, table_id_for
from server.kinds import kind as game_kind
from server.kinds.base import TableInfo
from server.manager import Readiness, TableManager
from server.problems import document_refusals, problem_handler
from server.ws import ws_endpoint

log = logging.getLogger("casino")


class Context:
    """What every handler and table runtime shares (app.state.ctx)."""

    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self.database_url = ""  # resolved at start: DATABASE_URL or the embedded PostgreSQL
        self.pool: Any = None
        self.ledger: Any = None
        self.limits: Any = None
        self.channels: ChannelsPlugin | None = None
        self.manager = TableManager(self)
        self.jwt_auth: Any = None
        self.bots: Any = None

    async def user(self, user_id: str) -> Principal:
        async with self.pool.acquire() as conn:
            who = await store.get_user(conn, user_id)
        if who is None:
            raise GameError("unknown_user", f"There is no user {user_id!r}.")
        return who

    async def open_wallet(self, who: Principal, conn: Any = None) -> None:
        """The player's wallet (``conn``: inside the caller's transaction, with the user)."""
        await self.ledger.open_account(accounts.wallet(who.id, who.currency), who.currency, Kind.WALLET, conn=conn)

    async def create_table(self, by: Principal, game: str, profile: str, mode: str, currency: str,
                           name: str = "", settings: dict | None = None, table_id: str = "") -> TableInfo:
        kind = game_kind(game)
        if profile not in kind.profiles:
            raise GameError("unknown_profile", f"{game} profiles: {', '.join(kind.profiles)}.")
        if mode not in ("rng", "live"):
            raise GameError("unknown_mode", "A table is 'rng' (the server draws) or 'live' (a croupier runs it).")
        from games.money import currency as currency_of

        currency = currency or kind.default_currency(profile)
        currency_of(currency)
        tid = table_id_for(table_id, game, profile, set(self.manager.infos))
        info = TableInfo(tid, game, profile, mode, currency, name or tid, settings or {}, [])
        unknown = sorted(set(info.settings) - set(kind.settings_keys))
        if unknown:
            raise GameError("invalid_settings", f"A {game} table's settings are {', '.join(kind.settings_keys)}; "
                                                f"not {', '.join(unknown)}.")
        kind.new_engine(info)  # refuse bad settings before anything is written
        async with self.pool.acquire() as conn:
            async with conn.transaction():  # the table and its accounts, or nothing
                await store.insert_table(conn, info, by.id)
                for account, account_kind in ((accounts.bank(tid, currency), Kind.BANK),
                                              (accounts.unclaimed(tid, currency), Kind.UNCLAIMED),
                                              (accounts.floor(tid, currency), Kind.FLOOR)):
                    await self.ledger.open_account(account, currency, account_kind, conn=conn)
                await audit.record(conn, by, "table.create", tid,
                                   {"game": game, "profile": profile, "mode": mode, "currency": currency})
                await store.notify_table_changed(conn, tid)  # every process knows it at once
        await self.manager.add(info)
        return info


async def ensure_admin(ctx: Context) -> None:
    """A fresh database gets one admin: password from CASINO_ADMIN_PASSWORD, else printed once."""
    import os

    async with ctx.pool.acquire() as conn:
        if await conn.fetchval("SELECT 1 FROM users WHERE role = 'admin' LIMIT 1"):
            return
        password = os.environ.get("CASINO_ADMIN_PASSWORD") or secrets.token_urlsafe(12)
        try:
            await store.create_user(conn, "admin", password, "admin")
        except GameError:
            return  # another process created it meanwhile
    if not os.environ.get("CASINO_ADMIN_PASSWORD"):
        print(f"casino: created the admin account: user 'admin', password {password!r}", flush=True)


@get("/asyncapi.json", include_in_schema=False)
async def asyncapi_doc() -> Response:
    return Response(asyncapi.document_json(), media_type="application/json")


@get(["/health", "/health/live"], include_in_schema=False)
async def health() -> dict[str, Any]:
    """Liveness: the process answers."""
    return {"ok": True}


@get("/health/ready", include_in_schema=False)
async def ready(request: Request) -> Response[Readiness]:
    """Readiness: every open table is served, here or by a live process; 503 with the tables
    nobody serves yet (e.g. leased by a killed process until its lease runs out)."""
    state = await request.app.state.ctx.manager.readiness()
    return Response(state, status_code=200 if state.ready else 503)


def create_app(settings: Settings | None = None) -> Litestar:
    settings = settings or Settings.from_env()
    ctx = Context(settings)

    async def retrieve_user(token: Any, connection: ASGIConnection) -> Principal | None:
        async with ctx.pool.acquire() as conn:
            return await store.get_user(conn, token.sub)

    ctx.jwt_auth = make_jwt_auth(settings.jwt_secret, settings.token_minutes, retrieve_user)
    channels = ChannelsPlugin(backend=MemoryChannelsBackend(), arbitrary_channels_allowed=True)
    ctx.channels = channels

    @asynccontextmanager
    async def lifespan(app: Litestar) -> AsyncIterator[None]:
        from games.ledger import LimitsStore
        from games.ledger.store import Ledger

        url = ctx.database_url = settings.database_url or database_url()
        ctx.pool = await create_pool(url)
        async with ctx.pool.acquire() as conn:
            await migrate(conn)
        ctx.ledger = Ledger(ctx.pool)
        ctx.limits = LimitsStore(ctx.pool)
        await ensure_admin(ctx)
        if settings.demo:
            from server.demo import seed

            await seed(ctx)
        try:
            yield
        finally:
            if ctx.bots:
                ctx.bots.cancel()
            try:
                await ctx.manager.stop()
            finally:
                await ctx.pool.close()

    async def start_tables(app: Litestar) -> None:
        # After the channels plugin started (its hook runs first): table owners publish at once.
        await ctx.manager.start()
        if settings.bots:
            import asyncio

            from server.demo import run_bots

            ctx.bots = asyncio.create_task(run_bots(settings.public_url))

    app = Litestar(
        route_handlers=[*ROUTES, ws_endpoint, asyncapi_doc, health, ready, *echo_routes()],
        lifespan=[lifespan],
        plugins=[channels],
        on_app_init=[ctx.jwt_auth.on_app_init],
        logging_config=logs.litestar_config(),
        exception_handlers={Exception: problem_handler},
        before_request=check_body,
        middleware=[EdgeText()],
        openapi_config=OpenAPIConfig(title="casino", version="1", path="/schema",
                                     render_plugins=[SwaggerRenderPlugin()]),
        state=State({"ctx": ctx}),
    )
    app.on_startup.append(start_tables)
    document_refusals(app)
    return app
