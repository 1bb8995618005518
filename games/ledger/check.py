"""The ledger check: the invariants a regulator or an operator asks the ledger to prove,
read on one snapshot. Every currency sums to zero; every balance is the sum of its
transfers; nothing is overdrawn beyond its credit line; every pending hold belongs to a
round still open (the open rounds come from the caller, or from the server's view
``ledger_open_refs``: the ledger itself knows no rounds)."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from contextlib import AbstractAsyncContextManager, nullcontext

import asyncpg
import msgspec

from games.ledger.model import Problem

__all__ = ["CheckReport", "OpenRefs", "check_report", "snapshot"]

# The refs of the rounds still open (``Ledger.check``): given, or a function that reads them.
OpenRefs = Callable[[], Iterable[str]] | Iterable[str]


class CheckReport(msgspec.Struct, frozen=True):
    problems: list[Problem]
    accounts: int
    transfers: int
    pending_holds: int
    rounds_checked: bool  # False when no source of open rounds was found



def snapshot(conn: asyncpg.Connection) -> AbstractAsyncContextManager[object]:
    """Several reads that must agree: one snapshot, or the caller's transaction."""
    if conn.is_in_transaction():
        return nullcontext()
    tx: AbstractAsyncContextManager[object] = conn.transaction(isolation="repeatable_read", readonly=True)
    return tx



async def check_report(c: asyncpg.Connection, open_refs: OpenRefs | None = None) -> CheckReport:
    """Every currency sums to zero; every balance is the sum of its transfers; nothing
    is overdrawn; every pending hold's ``ref`` is an open round. Open rounds come from
    ``open_refs`` if given, else from the view ``ledger_open_refs(ref)`` where the
    database has one (the server's migrations create it: the ledger itself knows no
    rounds); with neither the hold check is skipped (``rounds_checked`` False)."""
    problems: list[Problem] = []
    async with snapshot(c):
        for r in await c.fetch(
            "SELECT currency, sum(credits_posted - debits_posted) AS posted,"
            " sum(credits_pending - debits_pending) AS pending FROM ledger_accounts"
            " GROUP BY currency HAVING sum(credits_posted - debits_posted) <> 0"
            " OR sum(credits_pending - debits_pending) <> 0 ORDER BY currency"
        ):
            problems.append(Problem("currency_not_zero", r["currency"],
                                    f"posted sums to {r['posted']}, pending to {r['pending']}"))
        for r in await c.fetch(_RECOMPUTE):
            problems.append(Problem(
                "balance_mismatch", r["id"],
                "stored debits/credits posted {}/{} pending {}/{}; transfers say {}/{} pending {}/{}".format(
                    *(r[k] for k in ("a_dp", "a_cp", "a_dpe", "a_cpe", "dp", "cp", "dpe", "cpe"))),
            ))
        for r in await c.fetch(
            "SELECT id FROM ledger_accounts WHERE NOT ledger_may_go_negative(kind)"
            " AND debits_posted + debits_pending > credits_posted + credit_limit ORDER BY id"
        ):
            problems.append(Problem("overdrawn", r["id"], "debits exceed credits and credit line"))
        pending = await c.fetch(
            "SELECT h.id, h.debit, h.ref FROM ledger_transfers h WHERE h.op = 'hold'"
            " AND NOT EXISTS (SELECT 1 FROM ledger_transfers s WHERE s.hold = h.id) ORDER BY h.seq"
        )
        refs = await _open_refs(c, open_refs)
        if refs is not None:
            for r in pending:
                if r["ref"] not in refs:
                    problems.append(Problem("hold_round_closed", r["id"],
                                            f"pending on {r['debit']}, round {r['ref']!r} is not open"))
        n_accounts = await c.fetchval("SELECT count(*) FROM ledger_accounts")
        n_transfers = await c.fetchval("SELECT count(*) FROM ledger_transfers")
    return CheckReport(problems, n_accounts, n_transfers, len(pending), refs is not None)



async def _open_refs(c: asyncpg.Connection, given: OpenRefs | None) -> set[str] | None:
    if given is not None:
        return set(given() if callable(given) else given)
    if await c.fetchval("SELECT to_regclass('ledger_open_refs') IS NOT NULL"):
        return {r[0] for r in await c.fetch("SELECT ref FROM ledger_open_refs")}
    return None



_RECOMPUTE = """
WITH eff AS (
    SELECT debit AS account,
           CASE WHEN op IN ('transfer', 'post') THEN amount ELSE 0 END AS dp, 0::bigint AS cp,
           CASE op WHEN 'hold' THEN amount WHEN 'transfer' THEN 0 ELSE -hold_amount END AS dpe, 0::bigint AS cpe
      FROM ledger_transfers
    UNION ALL
    SELECT credit, 0, CASE WHEN op IN ('transfer', 'post') THEN amount ELSE 0 END,
           0, CASE op WHEN 'hold' THEN amount WHEN 'transfer' THEN 0 ELSE -hold_amount END
      FROM ledger_transfers
), sums AS (
    SELECT account, sum(dp) AS dp, sum(cp) AS cp, sum(dpe) AS dpe, sum(cpe) AS cpe FROM eff GROUP BY account
)
SELECT coalesce(a.id, s.account) AS id,
       a.debits_posted AS a_dp, a.credits_posted AS a_cp, a.debits_pending AS a_dpe, a.credits_pending AS a_cpe,
       coalesce(s.dp, 0) AS dp, coalesce(s.cp, 0) AS cp, coalesce(s.dpe, 0) AS dpe, coalesce(s.cpe, 0) AS cpe
  FROM ledger_accounts a FULL JOIN sums s ON s.account = a.id
 WHERE a.id IS NULL
    OR a.debits_posted <> coalesce(s.dp, 0) OR a.credits_posted <> coalesce(s.cp, 0)
    OR a.debits_pending <> coalesce(s.dpe, 0) OR a.credits_pending <> coalesce(s.cpe, 0)
 ORDER BY 1
"""
