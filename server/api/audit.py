"""Oversight: the ledger's self-check and the audit log."""

from __future__ import annotations

import asyncpg
from litestar import Controller, get
from litestar.params import Parameter

from games.ledger import CheckReport
from games.ledger.store import Ledger
from server.policy import OVERSIGHT, require_roles
from server.store import audit


class AuditController(Controller):
    path = "/"
    tags = ["audit"]

    # Guards per route, not on the controller: there they would also guard Litestar's own
    # OPTIONS answers, which pass no authentication.
    @get("/ledger/check", operation_id="CheckLedger", guards=[require_roles(*OVERSIGHT)],
         summary="Verify the ledger; a pending hold must be a wager some table still has in play")
    async def ledger_check(self, ledger: Ledger) -> CheckReport:
        # Open rounds come from the view ledger_open_refs (migrations 0103, 0116), as for `casino ledger check`.
        return await ledger.check_report()

    @get("/audit", operation_id="ListAuditEntries", guards=[require_roles(*OVERSIGHT)],
         summary="The audit log, newest first")
    async def audit_log(self, pool: asyncpg.Pool, target: str | None = None,
                        limit: int = Parameter(default=200, ge=1, le=5000)) -> list[audit.AuditEntry]:
        return await audit.entries(pool, target=target, limit=limit)
