"""Ledger fixtures: a Ledger on a fresh PostgreSQL database per test, with the ledger's schema alone."""

from __future__ import annotations

import pytest

from games.ledger import Ledger, accounts


@pytest.fixture
def schema_packages() -> tuple[str, ...]:
    """The ledger on its own: no server table, so no view of open rounds either (a hold's
    round is only checked where a test says which are open)."""
    return ("games.ledger",)



@pytest.fixture
async def ledger(pool):
    return Ledger(pool)


@pytest.fixture
async def table(ledger):
    """A CHF roulette table's bank and two players with CHF 100.00 each."""
    await ledger.open_account(accounts.bank("r1", "CHF"))
    for user in ("anna", "bruno"):
        await ledger.deposit(user, "CHF", 10000, f"dep-{user}")
    return accounts.bank("r1", "CHF")
