"""What one server process holds for its lifetime, typed: built by the app's lifespan, handed
to the table manager and its runtimes, and to HTTP handlers through ``server.deps``.

It holds no business logic (that is in ``server.accounts``, ``server.cashier`` and
``server.tables``). It is a plain class, not a dataclass: Litestar validates dependencies
with msgspec, which would otherwise read every field's type, the manager's included.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, cast

from server.commit_group import CommitGroup

if TYPE_CHECKING:  # (the manager imports the kinds, which import server.policy, which uses this)
    import asyncpg
    from litestar import Litestar
    from litestar.channels import ChannelsPlugin

    from games.ledger.store import Ledger
    from server.auth import Tokens
    from server.config import Settings
    from server.manager import TableManager
    from server.metrics import SharedGauges
    from server.store.limits import LimitsStore


class Resources:
    """The settings, the database pool, the ledger and limits stores, the channels plugin,
    the token issuer, the table manager and the open websockets of this process."""

    manager: TableManager  # set by the lifespan right after: the manager holds these resources too

    def __init__(self, settings: Settings, database_url: str, pool: asyncpg.Pool, ledger: Ledger,
                 limits: LimitsStore, channels: ChannelsPlugin, tokens: Tokens) -> None:
        self.settings = settings
        self.database_url = database_url  # DATABASE_URL or the embedded PostgreSQL's
        self.pool = pool
        self.ledger = ledger
        self.limits = limits
        self.channels = channels
        self.tokens = tokens
        # The websockets open on this process (``server.ws``): the metrics read them at a scrape.
        self.sockets: set[Any] = set()
        # The crowd tables' shared subscriptions in this process (``server.ws.hub``).
        self.hubs: dict[str, Any] = {}
        # The tables' batch statements, several tables' batches in one (``server.commit_group``).
        self.commits = CommitGroup(settings, settings.commit_flights)
        # With several processes, this worker's gauges in the files every worker's scrape reads
        # (``server.metrics.SharedGauges``; None for a single process).
        self.shared_metrics: SharedGauges | None = None


def resources_of(app: Litestar) -> Resources:
    """For what Litestar calls without dependency injection: guards and the JWT user lookup."""
    return cast("Resources", app.state.resources)
