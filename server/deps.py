"""Dependency injection: what an HTTP handler or the websocket asks for by parameter name.

Everything comes from the process's ``Resources`` (built by the lifespan, on
``app.state.resources``); the domain services are built per request from them (they
hold nothing else, so building one costs a few attribute writes).
"""

from __future__ import annotations

from typing import Any, cast

import asyncpg
from litestar import Request
from litestar.datastructures import State
from litestar.di import Provide

from games.ledger.store import Ledger
from server.accounts import AccountService
from server.auth import Principal, Tokens
from server.cashier import Cashier
from server.manager import TableManager
from server.resources import Resources
from server.responsible import ResponsibleGaming
from server.tables import TableService


def provide_resources(state: State) -> Resources:
    return cast(Resources, state.resources)


def provide_caller(request: Request[Principal, Any, Any]) -> Principal:
    """The authenticated caller (routes outside the JWT middleware do not ask for it)."""
    return request.user


def provide_pool(resources: Resources) -> asyncpg.Pool:
    return resources.pool


def provide_ledger(resources: Resources) -> Ledger:
    return resources.ledger


def provide_manager(resources: Resources) -> TableManager:
    return resources.manager


def provide_tokens(resources: Resources) -> Tokens:
    return resources.tokens


def provide_account_service(pool: asyncpg.Pool, ledger: Ledger) -> AccountService:
    return AccountService(pool, ledger)


def provide_cashier(pool: asyncpg.Pool, ledger: Ledger) -> Cashier:
    return Cashier(pool, ledger)


def provide_table_service(resources: Resources) -> TableService:
    return TableService.of(resources)


def provide_responsible_gaming(resources: Resources) -> ResponsibleGaming:
    return ResponsibleGaming(resources.pool, resources.settings.limit_raise_hours, resources.channels)


def _sync(fn: Any) -> Provide:
    return Provide(fn, sync_to_thread=False)  # attribute reads: never worth a thread


# A key is never a request field's or parameter's name: Litestar names a body field's
# validation error by the bare field name, and an error on a dependency's name is a 500.
DEPENDENCIES: dict[str, Provide] = {
    "resources": _sync(provide_resources),
    "caller": _sync(provide_caller),
    "pool": _sync(provide_pool),
    "ledger": _sync(provide_ledger),
    "manager": _sync(provide_manager),
    "tokens": _sync(provide_tokens),
    "account_service": _sync(provide_account_service),
    "cashier": _sync(provide_cashier),
    "table_service": _sync(provide_table_service),
    "responsible_gaming": _sync(provide_responsible_gaming),
}
