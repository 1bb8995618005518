"""``casino ledger check`` / ``statement`` against a real database."""

from __future__ import annotations

import asyncio

import asyncpg

from games.ledger import Hold, Post, accounts
from server.cli import main


async def _run(monkeypatch, url, argv):
    monkeypatch.setenv("DATABASE_URL", url)
    # the CLI runs its own event loop: give it a thread
    return await asyncio.to_thread(main, argv)


async def test_check_and_statement(ledger, fresh_db, monkeypatch, capsys):
    a, bank = accounts.wallet("anna", "CHF"), accounts.bank("r1", "CHF")
    await ledger.open_account(bank)
    await ledger.deposit("anna", "CHF", 10000, "dep-1")
    await ledger.apply([Hold("h1", a, bank, 2500, "bet", "s1"), Post("p1", "h1", 2500)])
    assert await _run(monkeypatch, fresh_db, ["ledger", "check"]) == 0
    assert "ledger ok: 3 accounts, 3 transfers, 0 pending holds; rounds not checked" in capsys.readouterr().out

    assert await _run(monkeypatch, fresh_db, ["ledger", "statement", a]) == 0
    out = capsys.readouterr().out
    assert "balance 75.00 CHF" in out and "-25.00 CHF" in out and "dep-1" in out

    assert await _run(monkeypatch, fresh_db, ["ledger", "statement", "wallet:ghost:CHF"]) == 1
    assert "unknown_account" in capsys.readouterr().err

    conn = await asyncpg.connect(fresh_db)
    try:
        await conn.execute("UPDATE ledger_accounts SET credits_posted = credits_posted + 5 WHERE id = $1", a)
    finally:
        await conn.close()
    assert await _run(monkeypatch, fresh_db, ["ledger", "check"]) == 1
    captured = capsys.readouterr()
    assert f"balance_mismatch: {a}" in captured.out and "currency_not_zero: CHF" in captured.out
