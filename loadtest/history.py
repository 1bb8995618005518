"""A floor's past, written straight into the load run's database before it is measured: does
the bet path's cost stay flat as the casino's history grows (issue 14)? Every bench starts on
a new database; a casino's has millions of bets behind it by its first month.

Each past bet leaves what a live one leaves, in the same shapes and key orders: its hold and
its post (lost) in ``ledger_transfers``, its two events (placed, settled) in ``table_events``,
its command in the table's log (``table_commands``), its answer (``command_results``) and its
player in the round (``round_players``); each player first gets a deposit that covers his
past losses, so his chips for the live run are those the floor gave him. The rows go in
through the ledger's own constraints and balance trigger, so ``casino ledger check`` holds on
them. The past's event seqs and command counters are negative and ascending, the floor's
last event -1 (they come before the live table's, which count up from 1, and each index
grows at one edge as the live floor's do); its rounds are named ``hist-N`` and its wagers
``histN-wG``, its ledger refs the table's id and the wager's, as a live bet's. All of it is
dated now: a player with play limits would find the past in his windows (the bench's players
have none). Afterwards ``VACUUM (ANALYZE)`` and a checkpoint, so that what autovacuum and the
checkpointer owe the past is not paid during the measurement.
"""

from __future__ import annotations

import collections
import time

import asyncpg

from games.ledger import accounts

STAKE = 500  # minor units: the bench's own straight bet
ROUND = 2_000  # past bets a round, across the floor
CURRENCY = "CHF"

# One chunk of past bets, g in [$5, $6) of $7: bet g is placed by seat g % n (player $1[k] at
# table $2[k], his wallet $3[k], the table's bank $4[k]: games.ledger.accounts names them).
_BETS = f"""
CREATE TEMP TABLE past ON COMMIT DROP AS
SELECT g, s.p, s.t, s.wallet, s.bank, 'hist-' || (g / {ROUND}) AS round,
       'hist' || (g / {ROUND}) || '-w' || g AS wager, s.t || '/hist' || (g / {ROUND}) || '-w' || g AS ref,
       2 * (g - $7::bigint) AS seq,  -- the bet's placed event; its settlement's is seq + 1, the last bet's -1
       g - $7::bigint AS n  -- its command in the table's log
FROM generate_series($5::bigint, $6::bigint - 1) AS g,
     LATERAL (SELECT ($1::text[])[k] AS p, ($2::text[])[k] AS t, ($3::text[])[k] AS wallet,
                     ($4::text[])[k] AS bank
              FROM (SELECT 1 + g % cardinality($1::text[]) AS k) AS seat) AS s
"""

# Then each table's rows from it, as a live bet leaves them (server/money.py: the ledger's ids).
_ROWS = (
    f"""INSERT INTO ledger_transfers (id, op, debit, credit, currency, amount, hold, hold_amount, code, ref)
        SELECT ref || '/hold', 'hold', wallet, bank, '{CURRENCY}', {STAKE}, NULL, NULL, 'bet', ref FROM past
        UNION ALL
        SELECT ref || '/post', 'post', wallet, bank, '{CURRENCY}', {STAKE}, ref || '/hold', {STAKE}, 'lost', ref
        FROM past""",
    f"""INSERT INTO table_events (table_id, seq, round, kind, actor, payload)
        SELECT t, seq, round, 'wager_placed', p,
               jsonb_build_object('type', 'wager_placed', 'spot', 'plein ' || (g % 37), 'wager', wager,
                                  'amount', {STAKE}, 'player', p)
        FROM past
        UNION ALL
        SELECT t, seq + 1, round, 'wager_settled', 'bench-croupier',
               jsonb_build_object('type', 'wager_settled', 'won', 0, 'stake', {STAKE}, 'wager', wager,
                                  'player', p, 'reason', 'lost', 'returned', 0)
        FROM past""",
    f"""INSERT INTO table_commands (table_id, n, first_seq, last_seq, actor, role, command)
        SELECT t, n, seq, seq, p, 'player',
               json_build_object('type', 'place_bet', 'player', NULL, 'spot', 'plein ' || (g % 37), 'amount', {STAKE})
        FROM past""",
    """INSERT INTO command_results (user_id, cid, table_id, result)
       SELECT p, 'h' || g, t, jsonb_build_object('cid', 'h' || g, 'seq', seq, 'type', 'accepted', 'table', t)
       FROM past""",
    """INSERT INTO round_players (table_id, round, user_id)
       SELECT DISTINCT t, round, p FROM past ON CONFLICT DO NOTHING""",
)


async def fill(db_url: str, seats: list[tuple[str, str]], bets: int, chunk: int = 20_000) -> dict[str, float]:
    """``bets`` past straight bets, lost, by the ``(player, table)`` seats in turn (bet g by
    seat g mod the seats); the seconds it took and the database's size after."""
    players, tables = [p for p, _ in seats], [t for _, t in seats]
    wallets = [accounts.wallet(p, CURRENCY) for p in players]
    banks = [accounts.bank(t, CURRENCY) for t in tables]
    lost: collections.Counter[str] = collections.Counter()
    for k, p in enumerate(players):  # seat k places the bets k, k + n, ...
        lost[p] += (bets // len(seats) + (k < bets % len(seats))) * STAKE
    t0 = time.monotonic()
    conn = await asyncpg.connect(db_url)
    try:
        async with conn.transaction():  # what each player brought to lose
            await conn.execute(
                """INSERT INTO ledger_transfers (id, op, debit, credit, currency, amount, code)
                   SELECT 'hist-dep-' || p, 'transfer', $4, w, $5, n, 'deposit'
                   FROM unnest($1::text[], $2::text[], $3::bigint[]) AS u(p, w, n) WHERE n > 0""",
                list(lost), [accounts.wallet(p, CURRENCY) for p in lost], list(lost.values()),
                accounts.cashier(CURRENCY), CURRENCY)
        for start in range(0, bets, chunk):
            async with conn.transaction():
                await conn.execute(_BETS, players, tables, wallets, banks, start, min(bets, start + chunk), bets)
                for sql in _ROWS:
                    await conn.execute(sql)
            # what autovacuum would do as they grow: the foreign-key checks' plans (a post's
            # hold) made on the first chunk's few rows would scan the whole table for each
            await conn.execute("ANALYZE ledger_transfers, table_events, table_commands, command_results")
        await conn.execute("VACUUM (ANALYZE)")  # what autovacuum would owe the past's rows
        await conn.execute("CHECKPOINT")  # and the checkpointer its pages
        size = await conn.fetchval("SELECT pg_database_size(current_database())")
    finally:
        await conn.close()
    return {"bets": bets, "seconds": time.monotonic() - t0, "database_bytes": size}
