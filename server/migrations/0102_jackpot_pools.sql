-- Linked jackpot pools (Lugano's Blazing 7s): one engine state per pool, shared by every
-- table whose profile names it. A table's commit locks the row (FOR UPDATE), so rounds of
-- linked tables reach the pool one at a time, in the same transaction as their ledger ops.
CREATE TABLE jackpot_pools (
    name       text PRIMARY KEY,
    state      bytea NOT NULL,
    updated_at timestamptz NOT NULL DEFAULT now()
);
