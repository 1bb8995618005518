"""The Litestar app factory: settings, database, ledger, tables, HTTP, websocket.

The lifespan builds the process's ``Resources`` (``server.resources``) and owns the pool;
handlers get what they need by dependency injection (``server.deps``).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

from litestar import Litestar
from litestar.channels.backends.memory import MemoryChannelsBackend
from litestar.connection import ASGIConnection
from litestar.openapi import OpenAPIConfig
from litestar.openapi.plugins import SwaggerRenderPlugin

from games.db import create_pool, database_url, migrate
from games.ledger.store import Ledger
from server import logs, metrics, store, unclaimed
from server.accounts import ensure_admin
from server.api import ROUTES
from server.asyncapi import asyncapi_route
from server.auth import SAFE_METHODS, Principal, Tokens, make_jwt_auth, same_origin, token_key
from server.channels_backend import Channels
from server.config import Settings
from server.deps import DEPENDENCIES
from server.echo import echo_routes
from server.edge import EdgeText, check_body
from server.manager import TableManager
from server.pages import PAGE_ROUTES, no_store
from server.problems import document_refusals, problem_handler
from server.resources import Resources, resources_of
from server.responsible import watch_exclusions
from server.sessions import watch_logouts
from server.store import audit_chain
from server.store.limits import LimitsStore
from server.tables import serve_calls
from server.ws import ws_endpoint

log = logging.getLogger("casino")


async def _retrieve_user(token: Any, connection: ASGIConnection[Any, Any, Any, Any]) -> Principal | None:
    """The JWT middleware's lookup: the token's user, if he still exists and is enabled and
    the token was not logged out (``server.sessions``: the same statement). A request that
    came with the pages' cookie and no ``Authorization`` may change something only from one
    of our own pages (``same_origin``): a cross-site request is unauthorized."""
    if ("authorization" not in connection.headers and connection.scope.get("method", "GET") not in SAFE_METHODS
            and not same_origin(connection.headers)):
        return None
    async with resources_of(connection.app).pool.acquire() as conn:
        # An excluded player, or a token logged out: refused.
        return await store.get_user(conn, token.sub, playing=True, token=token_key(token))


def _channels_backend(settings: Settings) -> Any:
    """Table events: in memory for one process alone; on Redis pub/sub when several share
    the floor (REDIS_URL), so a batch committed by a table's owner reaches every process's
    subscribers. Pub/sub, not streams: a subscriber that missed frames (a dropped broker
    connection) fills the gap from PostgreSQL by seq (``server.ws.connection``)."""
    if not settings.redis_url:
        return MemoryChannelsBackend()
    from redis.asyncio import Redis

    from server.channels_backend import ResilientPubSubBackend

    return ResilientPubSubBackend(redis=Redis.from_url(settings.redis_url), key_prefix="casino")


def create_app(settings: Settings | None = None) -> Litestar:
    settings = settings or Settings.from_env()
    jwt_auth = make_jwt_auth(settings.jwt_secret, settings.token_minutes, _retrieve_user)
    # (``Channels``: a subscribe returns once its channel reaches this process; server.channels_backend)
    channels = Channels(backend=_channels_backend(settings), arbitrary_channels_allowed=True)
    bots: list[asyncio.Task[None]] = []

    @asynccontextmanager
    async def lifespan(app: Litestar) -> AsyncIterator[None]:
        url = settings.database_url or database_url()
        pool = await create_pool(url, min_size=2, max_size=settings.db_pool, owner=settings.owner_id)
        async with pool.acquire() as conn:
            await migrate(conn, store.SCHEMA)
        resources = Resources(settings, url, pool, Ledger(pool), LimitsStore(pool), channels,
                              Tokens(jwt_auth, settings.token_minutes))
        resources.manager = TableManager(resources)
        serve_calls(resources)  # what other processes ask of the tables served here
        app.state.resources = resources
        await ensure_admin(pool)
        if settings.demo:
            from server.demo import seed

            await seed(resources)
        live = metrics.watch(resources)  # GET /metrics: sockets, queues, tables owned, lease age
        collector = metrics.watch_gc()  # ... and the garbage collector's pauses
        # The audit chain's sealer, unclaimed wins going to the house once their time is up,
        # and the event loop's lag timed for /metrics.
        chores = [asyncio.create_task(audit_chain.keep_sealing(pool)),
                  asyncio.create_task(unclaimed.keep_expiring(pool, resources.ledger)),
                  asyncio.create_task(metrics.keep_timing_the_loop())]
        if resources.shared_metrics is not None:  # (several processes: the gauges every scrape reads)
            chores.append(asyncio.create_task(metrics.keep_sharing(resources.shared_metrics)))
        try:
            yield
        finally:
            for chore in chores:
                chore.cancel()
            await asyncio.gather(*chores, return_exceptions=True)
            metrics.unwatch(live)
            metrics.unwatch_gc(collector)
            for task in bots:
                task.cancel()
            if bots:  # (bounded: a watcher's unsubscribe may wait for a broker that is away)
                await asyncio.wait(bots, timeout=2)
            try:
                await resources.manager.stop()
            finally:
                await pool.close()

    async def start_tables(app: Litestar) -> None:
        # After the channels plugin started (its hook runs first): table owners publish at once.
        await resources_of(app).manager.start()
        # Sockets of a player excluded on any process close (server.responsible).
        bots.append(asyncio.create_task(watch_exclusions(resources_of(app))))
        # And those whose token was logged out on any process (server.sessions).
        bots.append(asyncio.create_task(watch_logouts(resources_of(app))))
        if settings.bots:
            from server.demo import run_bots

            bots.append(asyncio.create_task(run_bots(settings.public_url)))

    app = Litestar(
        route_handlers=[*ROUTES, ws_endpoint, asyncapi_route, *echo_routes(), *PAGE_ROUTES],
        dependencies=DEPENDENCIES,
        lifespan=[lifespan],
        plugins=[channels],
        on_app_init=[jwt_auth.on_app_init],
        logging_config=logs.litestar_config(),
        exception_handlers={Exception: problem_handler},
        before_request=check_body,
        after_request=no_store,
        middleware=[EdgeText()],
        openapi_config=OpenAPIConfig(title="casino", version="1", path="/schema",
                                     render_plugins=[SwaggerRenderPlugin()]),
    )
    app.on_startup.append(start_tables)
    document_refusals(app)
    return app
