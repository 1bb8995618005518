-- The chip ledger: accounts, immutable transfers (holds, posts, voids), credit lines, receipts.
-- The code checks every rule first; these constraints guard the invariants again.

CREATE TABLE ledger_currencies (
    code         text PRIMARY KEY,
    minor_digits int NOT NULL,
    cash         boolean NOT NULL
);
INSERT INTO ledger_currencies VALUES ('CHF', 2, true), ('EUR', 2, true), ('PTS', 0, false);

CREATE TABLE ledger_accounts (
    id              text PRIMARY KEY,
    currency        text NOT NULL REFERENCES ledger_currencies(code),
    kind            text NOT NULL CHECK (kind IN ('wallet', 'bank', 'cashier', 'unclaimed', 'jackpot',
                                                  'prize_pool', 'fees', 'points', 'points_pool')),
    debits_posted   bigint NOT NULL DEFAULT 0 CHECK (debits_posted >= 0),
    credits_posted  bigint NOT NULL DEFAULT 0 CHECK (credits_posted >= 0),
    debits_pending  bigint NOT NULL DEFAULT 0 CHECK (debits_pending >= 0),
    credits_pending bigint NOT NULL DEFAULT 0 CHECK (credits_pending >= 0),
    credit_limit    bigint NOT NULL DEFAULT 0 CHECK (credit_limit >= 0),
    opened_at       timestamptz NOT NULL DEFAULT now(),
    UNIQUE (id, currency),
    -- the id names its kind: "wallet:anna:CHF" is a wallet
    CHECK (split_part(id, ':', 1) = kind),
    -- points live only in points accounts, points accounts hold only points
    CHECK ((kind IN ('points', 'points_pool')) = (currency = 'PTS')),
    -- only wallets get credit lines (Art. 16)
    CHECK (credit_limit = 0 OR kind = 'wallet'),
    -- debits never exceed credits, except for the issuer and house money
    CHECK (kind IN ('cashier', 'bank', 'jackpot', 'points_pool')
           OR debits_posted + debits_pending <= credits_posted + credit_limit)
);

-- One row per operation, never changed. op: transfer | hold | post | void.
-- A post/void names the hold it settles and repeats its accounts and amount, which the
-- foreign key checks against the hold itself.
CREATE TABLE ledger_transfers (
    seq         bigserial NOT NULL,        -- insertion order; per account it follows the row lock
    id          text PRIMARY KEY,
    op          text NOT NULL CHECK (op IN ('transfer', 'hold', 'post', 'void')),
    debit       text NOT NULL,
    credit      text NOT NULL,
    currency    text NOT NULL,
    amount      bigint NOT NULL,
    hold        text UNIQUE,             -- a hold is settled once
    hold_amount bigint,
    hold_op     text GENERATED ALWAYS AS (CASE WHEN hold IS NULL THEN NULL ELSE 'hold' END) STORED,
    code        text NOT NULL,
    ref         text NOT NULL DEFAULT '',
    at          timestamptz NOT NULL DEFAULT now(),
    CHECK (debit <> credit),
    FOREIGN KEY (debit, currency) REFERENCES ledger_accounts (id, currency),
    FOREIGN KEY (credit, currency) REFERENCES ledger_accounts (id, currency),
    UNIQUE (id, op, amount, debit, credit),
    FOREIGN KEY (hold, hold_op, hold_amount, debit, credit)
        REFERENCES ledger_transfers (id, op, amount, debit, credit),
    CHECK ((op IN ('post', 'void')) = (hold IS NOT NULL AND hold_amount IS NOT NULL)),
    CHECK (CASE op
               WHEN 'post' THEN amount > 0 AND amount <= hold_amount
               WHEN 'void' THEN amount = 0
               ELSE amount > 0 END),
    -- points move only between one tournament's player and its pool, never player to player
    CHECK (currency <> 'PTS' OR (split_part(debit, ':', 2) = split_part(credit, ':', 2)
                                 AND NOT (split_part(debit, ':', 1) = 'points'
                                          AND split_part(credit, ':', 1) = 'points')))
);
CREATE INDEX ledger_transfers_debit ON ledger_transfers (debit, seq);
CREATE INDEX ledger_transfers_credit ON ledger_transfers (credit, seq);

-- Credit lines granted by an inspector: who, how much, when.
CREATE TABLE ledger_credit_grants (
    id           text PRIMARY KEY,
    account      text NOT NULL REFERENCES ledger_accounts(id),
    credit_limit bigint NOT NULL CHECK (credit_limit >= 0),
    approved_by  text NOT NULL CHECK (approved_by <> ''),
    at           timestamptz NOT NULL DEFAULT now()
);

-- What the cashier handed over, so a repeated request gets the same receipt.
CREATE TABLE ledger_receipts (
    id            text PRIMARY KEY REFERENCES ledger_transfers(id),
    kind          text NOT NULL CHECK (kind IN ('deposit', 'cash_out')),
    account       text NOT NULL REFERENCES ledger_accounts(id),
    currency      text NOT NULL,
    amount        bigint NOT NULL CHECK (amount > 0),
    balance_after bigint NOT NULL,
    at            timestamptz NOT NULL DEFAULT now()
);

CREATE FUNCTION ledger_immutable() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    RAISE EXCEPTION '% is append-only: correct with a new entry', TG_TABLE_NAME;
END $$;

CREATE TRIGGER ledger_transfers_immutable BEFORE UPDATE OR DELETE OR TRUNCATE ON ledger_transfers
    FOR EACH STATEMENT EXECUTE FUNCTION ledger_immutable();
CREATE TRIGGER ledger_credit_grants_immutable BEFORE UPDATE OR DELETE OR TRUNCATE ON ledger_credit_grants
    FOR EACH STATEMENT EXECUTE FUNCTION ledger_immutable();
CREATE TRIGGER ledger_receipts_immutable BEFORE UPDATE OR DELETE OR TRUNCATE ON ledger_receipts
    FOR EACH STATEMENT EXECUTE FUNCTION ledger_immutable();
