-- The unclaimed register's second signature (roulette Art. 19, blackjack Campione Art. 37):
-- an item goes to the table's float only "dopo essere state registrate sia dal capo che dal
-- Controllore comunale". The chef's record is the table's unclaimed_recorded event; the
-- controller's (an inspector here) is one row per item, written once, with its audit record
-- (server/unclaimed.py ``countersign``). Append-only: a countersignature is never changed
-- or withdrawn (append_only() is 0109's).
CREATE TABLE unclaimed_countersignatures (
    item      text PRIMARY KEY,              -- server.unclaimed.item_id(ledger_id)
    ledger_id text NOT NULL UNIQUE,          -- the transfer that put the item in the register
    signed_by text NOT NULL REFERENCES users (id),
    signed_at timestamptz NOT NULL DEFAULT now()
);

CREATE TRIGGER unclaimed_countersignatures_no_change
    BEFORE UPDATE OR DELETE OR TRUNCATE ON unclaimed_countersignatures
    FOR EACH STATEMENT EXECUTE FUNCTION append_only();
