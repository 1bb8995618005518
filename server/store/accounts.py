"""Rows behind the accounts and cashier API that the ledger does not answer for: whether
the floor has an admin yet, and whether a cashier receipt or credit grant id is new."""

from __future__ import annotations

import asyncpg

# One fixed statement per table: the id never chooses which table is read.
_RECEIPT_KNOWN = "SELECT EXISTS (SELECT 1 FROM ledger_receipts WHERE id = $1)"
_CREDIT_GRANT_KNOWN = "SELECT EXISTS (SELECT 1 FROM ledger_credit_grants WHERE id = $1)"
_LOCK = "SELECT pg_advisory_xact_lock(hashtextextended($1, 0))"


async def has_admin(conn: asyncpg.Connection) -> bool:
    return bool(await conn.fetchval("SELECT 1 FROM users WHERE role = 'admin' LIMIT 1"))


async def first_receipt(conn: asyncpg.Connection, receipt_id: str) -> bool:
    """Whether ``receipt_id`` is new (else the ledger answers with the stored receipt and
    nothing may be written). Inside the transaction that writes the receipt: its lock on
    the id makes a concurrent try with the same id wait for this one, so exactly one of
    them writes the audit record."""
    await conn.execute(_LOCK, f"ledger_receipts:{receipt_id}")
    return not await conn.fetchval(_RECEIPT_KNOWN, receipt_id)


async def first_credit_grant(conn: asyncpg.Connection, grant_id: str) -> bool:
    """Whether ``grant_id`` is new, as ``first_receipt``."""
    await conn.execute(_LOCK, f"ledger_credit_grants:{grant_id}")
    return not await conn.fetchval(_CREDIT_GRANT_KNOWN, grant_id)
