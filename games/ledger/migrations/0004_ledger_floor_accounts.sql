-- Floor accounts (games.ledger.accounts.floor): the chips of a live table's floor players,
-- people at the felt with cash chips and no wallet here. Like the cashier, whose chips they
-- are, the account may go below zero.
--
-- Which kinds may go below zero is now said once, by ledger_may_go_negative(): the accounts'
-- CHECK and ledger_apply() (migration 0003) ask it instead of each spelling out the list.

CREATE FUNCTION ledger_may_go_negative(kind text) RETURNS boolean
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
    AS $$ SELECT kind IN ('cashier', 'bank', 'jackpot', 'points_pool', 'floor') $$;

ALTER TABLE ledger_accounts DROP CONSTRAINT ledger_accounts_kind_check;
ALTER TABLE ledger_accounts ADD CONSTRAINT ledger_accounts_kind_check
    CHECK (kind IN ('wallet', 'bank', 'cashier', 'unclaimed', 'jackpot', 'prize_pool', 'fees',
                    'points', 'points_pool', 'floor'));

-- debits never exceed credits, except for the issuers and house money
ALTER TABLE ledger_accounts DROP CONSTRAINT ledger_accounts_check3;
ALTER TABLE ledger_accounts ADD CONSTRAINT ledger_accounts_within_funds
    CHECK (ledger_may_go_negative(kind) OR debits_posted + debits_pending <= credits_posted + credit_limit);

-- ledger_apply() tests the same rule on its locked rows: swap its literal list for the
-- function, in place (its body stays in 0003; a migration never restates a function whole).
DO $$
DECLARE
    old text := pg_get_functiondef('ledger_apply'::regproc);
    new text := replace(old, $q$a_kind[dpos] NOT IN ('cashier', 'bank', 'jackpot', 'points_pool')$q$,
                             $q$NOT ledger_may_go_negative(a_kind[dpos])$q$);
BEGIN
    IF new = old THEN
        RAISE EXCEPTION 'ledger_apply() does not hold the expected kind list';
    END IF;
    EXECUTE new;
END $$;
