-- The ledger check's list of open rounds (games/ledger/store.py looks for this view): the
-- refs of the wagers every table's committed state still has in play (0101), so a plain
-- `casino ledger check` on the server's database reports a hold no table knows about.
CREATE VIEW ledger_open_refs AS SELECT unnest(open_refs) AS ref FROM table_state;
