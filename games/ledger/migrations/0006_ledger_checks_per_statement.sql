-- A transfer's accounts and its hold are checked once per INSERT statement, by the trigger
-- that moves the balances (issue 14), instead of by three foreign keys checked row by row.
--
-- Why: a batch of 50 bets paid three foreign-key probes a row, and a five-column unique
-- index kept only as the hold key's target (BENCHMARKS.md "The ledger's checks once a
-- statement"). The trigger already reads every account a statement names, in one ordered
-- pass; it now also proves what the keys proved, for every row however inserted:
--   * each row's debit and credit accounts exist, in the row's currency;
--   * a post or void repeats its hold exactly: a hold, with its amount, debit and credit.
-- A row that fails either raises foreign_key_violation (23503), as the keys did, naming the
-- transfer, and the whole statement is undone. ledger_apply() refuses both long before
-- (unknown_account, unknown_hold): these are the second guard, against writes around it.
--
-- What the keys also did, and stays: an account a transfer names is never deleted nor
-- given another id or currency (a trigger below now says so for every account);
-- transfers are never updated nor deleted (0001); a hold is settled once (UNIQUE (hold)).
-- Unlike the keys, whose row locks were taken in the rows' order, a raw INSERT now locks its
-- accounts in id order only, as ledger_apply() does: within one statement the two no longer
-- deadlock over the accounts' locks.
-- The migration takes the ACCESS EXCLUSIVE locks of ledger_transfers and ledger_accounts
-- for a moment (nothing is rewritten or scanned): it waits for the transactions open on
-- them, and while it waits every new ledger query waits behind it.

ALTER TABLE ledger_transfers
    DROP CONSTRAINT ledger_transfers_debit_currency_fkey,
    DROP CONSTRAINT ledger_transfers_credit_currency_fkey,
    DROP CONSTRAINT ledger_transfers_hold_hold_op_hold_amount_debit_credit_fkey,
    DROP CONSTRAINT ledger_transfers_id_op_amount_debit_credit_key,
    DROP COLUMN hold_op,  -- the hold key's constant 'hold', for its target's op
    -- Only a post or void names a hold. 0001 let a transfer or hold name one with no hold
    -- amount (the key skipped such a row): it took the hold's settled-once slot and left its
    -- chips pending for good. NOT VALID: new rows are checked, the table is not scanned
    -- (ledger_apply never wrote such a row; a later VALIDATE CONSTRAINT would scan for one).
    ADD CONSTRAINT ledger_transfers_only_settlements_name_a_hold
        CHECK (hold IS NULL OR op IN ('post', 'void')) NOT VALID;

CREATE OR REPLACE FUNCTION ledger_transfers_move() RETURNS trigger LANGUAGE plpgsql
-- An index probe per account touched, in id order, not a scan of every account (these
-- settings rule one out as far as the planner lets them): writers that did not lock the
-- accounts first still lock them in one order.
SET enable_seqscan = off SET enable_hashjoin = off SET enable_mergejoin = off
AS $$
DECLARE
    named bigint;
    moved bigint;
    bad record;
BEGIN
    -- A post or void repeats the hold it settles: its op, amount and accounts. First, so
    -- that a settlement of the wrong hold is named as such, not as a pending total below zero.
    -- The hold is looked up by its id alone, then compared: a plan cached while the table
    -- was small could otherwise probe the debit or credit index, every row of a bank's.
    SELECT n.id, n.hold INTO bad
      FROM ledger_new_rows n
      LEFT JOIN LATERAL (SELECT h.op, h.amount, h.debit, h.credit FROM ledger_transfers h WHERE h.id = n.hold) h
        ON true
     WHERE n.hold IS NOT NULL
       AND (h.op IS DISTINCT FROM 'hold' OR h.amount <> n.hold_amount
            OR h.debit <> n.debit OR h.credit <> n.credit)
     ORDER BY n.seq
     LIMIT 1;
    IF FOUND THEN
        RAISE EXCEPTION USING ERRCODE = 'foreign_key_violation',
            MESSAGE = format('ledger transfer %s does not repeat hold %s (a hold with its amount, debit and credit)',
                             bad.id, bad.hold);
    END IF;
    -- Each (account, currency) the rows name, with what it moves; an account named in
    -- another currency than its own finds no row to update, so is counted as missing.
    WITH d AS MATERIALIZED (
        SELECT e.account, e.currency, sum(e.dp) AS dp, sum(e.cp) AS cp, sum(e.dpe) AS dpe, sum(e.cpe) AS cpe
          FROM (SELECT n.debit AS account, n.currency,
                       CASE WHEN n.op IN ('transfer', 'post') THEN n.amount ELSE 0 END AS dp, 0 AS cp,
                       CASE n.op WHEN 'hold' THEN n.amount WHEN 'transfer' THEN 0 ELSE -n.hold_amount END AS dpe,
                       0 AS cpe
                  FROM ledger_new_rows n
                UNION ALL
                SELECT n.credit, n.currency, 0, CASE WHEN n.op IN ('transfer', 'post') THEN n.amount ELSE 0 END, 0,
                       CASE n.op WHEN 'hold' THEN n.amount WHEN 'transfer' THEN 0 ELSE -n.hold_amount END
                  FROM ledger_new_rows n) e
         GROUP BY e.account, e.currency
         ORDER BY e.account, e.currency),
    u AS (
        UPDATE ledger_accounts a
           SET debits_posted = a.debits_posted + d.dp, credits_posted = a.credits_posted + d.cp,
               debits_pending = a.debits_pending + d.dpe, credits_pending = a.credits_pending + d.cpe
          FROM d
         WHERE a.id = d.account AND a.currency = d.currency
        RETURNING 1)
    SELECT (SELECT count(*) FROM d), (SELECT count(*) FROM u) INTO named, moved;
    IF moved <> named THEN
        SELECT n.id, e.account, e.currency INTO bad
          FROM ledger_new_rows n
         CROSS JOIN LATERAL (VALUES (n.debit, n.currency), (n.credit, n.currency)) AS e(account, currency)
         WHERE NOT EXISTS (SELECT FROM ledger_accounts a WHERE a.id = e.account AND a.currency = e.currency)
         ORDER BY n.seq
         LIMIT 1;
        IF NOT FOUND THEN
            -- Every account is there now: one was committed after the UPDATE's snapshot, while
            -- it waited for another account's lock, so its balance did not move. Only a writer
            -- that did not lock the accounts first (ledger_apply does) meets this.
            RAISE EXCEPTION USING ERRCODE = 'serialization_failure',
                MESSAGE = 'ledger_transfers: an account this statement names was opened while it waited: try again';
        END IF;
        RAISE EXCEPTION USING ERRCODE = 'foreign_key_violation',
            MESSAGE = format('ledger transfer %s names account %s in %s: there is no such account',
                             bad.id, bad.account, bad.currency);
    END IF;

    RETURN NULL;
END $$;

-- The keys kept an account that transfers name from going or changing its id or currency.
-- An account is the audit trail's anchor: none is ever deleted or renamed.
CREATE FUNCTION ledger_accounts_kept() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    RAISE EXCEPTION USING ERRCODE = 'restrict_violation',
        MESSAGE = format('ledger_accounts: %s refused: an account is never deleted, nor given another id or currency',
                         TG_OP);
END $$;

CREATE TRIGGER ledger_accounts_kept BEFORE DELETE OR TRUNCATE ON ledger_accounts
    FOR EACH STATEMENT EXECUTE FUNCTION ledger_accounts_kept();
CREATE TRIGGER ledger_accounts_kept_keys BEFORE UPDATE OF id, currency ON ledger_accounts
    FOR EACH ROW WHEN (OLD.id IS DISTINCT FROM NEW.id OR OLD.currency IS DISTINCT FROM NEW.currency)
    EXECUTE FUNCTION ledger_accounts_kept();
