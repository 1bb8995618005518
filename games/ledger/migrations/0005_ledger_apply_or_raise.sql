-- ledger_apply() (0003) inside a larger statement: a table commits its batch, the ledger's
-- operations with the batch's events, results and log, in one statement and so one round
-- trip, with no BEGIN and COMMIT of its own (server/store/state.py, issue 14). A refusal
-- must then stop the whole statement: this raises it instead of returning it, so nothing
-- around it is written either.
--
-- SQLSTATE LR001: the refusal's row (0003's columns) as JSON in DETAIL, read back into the
-- same LedgerError that Ledger.apply gives (games/ledger/store.py). A lost race ('retry':
-- a concurrent batch committed one of our ids, or a hold, first) is asked again here: each
-- call reads afresh and the winner has committed (READ COMMITTED, the default and the
-- server's; one snapshot for the whole transaction would give the same answer each time).
-- Twelve lost races in a row give ledger_busy, as Ledger.apply does.
-- Returns how many operations were applied (0 for none: the call costs nothing then).
CREATE FUNCTION ledger_apply_or_raise(
    p_kind text[], p_id text[], p_debit text[], p_credit text[], p_amount bigint[],
    p_code text[], p_ref text[], p_hold text[], p_dup int[], p_hold_idx int[],
    p_settled_before boolean[], p_pair_err text[])
RETURNS int LANGUAGE plpgsql AS $$
DECLARE
    r record;
BEGIN
    IF coalesce(cardinality(p_id), 0) = 0 THEN
        RETURN 0;
    END IF;
    FOR attempt IN 1..12 LOOP
        -- one row per operation, or one row naming the refusal: the first says which
        SELECT * INTO r FROM ledger_apply(p_kind, p_id, p_debit, p_credit, p_amount, p_code, p_ref,
                                          p_hold, p_dup, p_hold_idx, p_settled_before, p_pair_err) LIMIT 1;
        IF r.err IS NULL THEN
            RETURN cardinality(p_id);
        ELSIF r.err <> 'retry' THEN
            RAISE EXCEPTION USING ERRCODE = 'LR001', MESSAGE = 'ledger refused: ' || r.err,
                                  DETAIL = row_to_json(r)::text;
        END IF;
    END LOOP;
    RAISE EXCEPTION USING ERRCODE = 'LR001', MESSAGE = 'ledger refused: ledger_busy',
                          DETAIL = json_build_object('err', 'ledger_busy')::text;
END $$;
