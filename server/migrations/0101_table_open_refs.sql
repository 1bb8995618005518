-- The wagers each table's committed engine state still has in play, as ledger refs
-- ("<table>/<wager>", the ref of each hold): the ledger check's list of open rounds, so a
-- hold the game no longer knows about is reported. Written with the state, in its transaction.
ALTER TABLE table_state ADD COLUMN open_refs text[] NOT NULL DEFAULT '{}';
