-- A table's list of the wagers it has in play (0101) is no longer rewritten by every batch:
-- on a crowded wheel it held thousands of refs, written again for each batch of a few bets
-- (issue 14). It is written when a batch releases holds (a settlement, a withdrawal, a void)
-- and at each snapshot; in between a batch only adds bets. ``refs_after`` is the ledger's
-- transfer seq when the list was written: a hold the table made after it is one of those
-- added bets. A wager the game dropped without releasing its hold is still found, at the
-- table's next write (the next snapshot at the latest: every round and every 64 batches).
-- The mark rests on: one writer per table (the lease fences every commit), so the table's
-- own holds so far are numbered at or below the sequence's last value and its later ones
-- above it; and a sequence cache of 1 (the default; server/store/audit_chain.py relies on it
-- too). Seqs other tables' transactions take, committed or not, fall on either side of the
-- mark without changing which of this table's holds it counts as added.
-- pg_sequence_last_value is NULL before the first transfer (0: nothing to hide) and for a
-- role without rights on the sequence; the server's role owns it.
ALTER TABLE table_state ADD COLUMN refs_after bigint NOT NULL
    DEFAULT coalesce(pg_sequence_last_value(pg_get_serial_sequence('ledger_transfers', 'seq')::regclass), 0);

CREATE OR REPLACE VIEW ledger_open_refs AS
SELECT unnest(open_refs) AS ref FROM table_state
UNION ALL
-- (one pass over the holds, joined to their table by the ref's first part: table ids hold no '/')
SELECT h.ref FROM ledger_transfers h
JOIN table_state t ON t.table_id = split_part(h.ref, '/', 1)
WHERE h.op = 'hold' AND h.seq > t.refs_after;
