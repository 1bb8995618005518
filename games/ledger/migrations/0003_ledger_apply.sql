-- One round trip per ledger batch: ledger_apply() locks, checks and writes in the server,
-- and balances follow from the transfer rows themselves (a trigger), so the non-negative
-- CHECK on ledger_accounts now guards every transfer row, however it was inserted.

-- The batch's currency and points checks read an account's currency from its id: so must the
-- database ("wallet:anna:CHF" holds CHF; points accounts hold PTS, already checked in 0001).
ALTER TABLE ledger_accounts ADD CONSTRAINT ledger_accounts_currency_in_id
    CHECK (kind IN ('points', 'points_pool') OR currency = split_part(id, ':', -1));

-- Every inserted transfer moves its accounts' totals, in the same statement.
CREATE FUNCTION ledger_transfers_move() RETURNS trigger LANGUAGE plpgsql
-- an index probe per account touched, in id order: never a scan of every account, and
-- writers that did not lock the accounts first still lock them in one order
SET enable_seqscan = off SET enable_hashjoin = off SET enable_mergejoin = off
AS $$
BEGIN
    UPDATE ledger_accounts a
       SET debits_posted = a.debits_posted + d.dp, credits_posted = a.credits_posted + d.cp,
           debits_pending = a.debits_pending + d.dpe, credits_pending = a.credits_pending + d.cpe
      FROM (SELECT e.account, sum(e.dp) AS dp, sum(e.cp) AS cp, sum(e.dpe) AS dpe, sum(e.cpe) AS cpe
              FROM (SELECT n.debit AS account,
                           CASE WHEN n.op IN ('transfer', 'post') THEN n.amount ELSE 0 END AS dp, 0 AS cp,
                           CASE n.op WHEN 'hold' THEN n.amount WHEN 'transfer' THEN 0 ELSE -n.hold_amount END AS dpe,
                           0 AS cpe
                      FROM ledger_new_rows n
                    UNION ALL
                    SELECT n.credit, 0, CASE WHEN n.op IN ('transfer', 'post') THEN n.amount ELSE 0 END, 0,
                           CASE n.op WHEN 'hold' THEN n.amount WHEN 'transfer' THEN 0 ELSE -n.hold_amount END
                      FROM ledger_new_rows n) e
             GROUP BY e.account
             ORDER BY e.account) d
     WHERE a.id = d.account;
    RETURN NULL;
END $$;

CREATE TRIGGER ledger_transfers_move AFTER INSERT ON ledger_transfers
    REFERENCING NEW TABLE AS ledger_new_rows
    FOR EACH STATEMENT EXECUTE FUNCTION ledger_transfers_move();

-- Apply a batch of operations in order, all or nothing, with the rules of games/ledger/model.py
-- (the Python side checks the form of each operation and the currency/points pairing, which
-- follow from the account ids, and passes where ids and holds repeat inside the batch).
-- Returns one row per operation, or a single row whose err names the refusal (nothing is
-- written then), or err = 'retry' when a concurrent batch took one of the ids first.
CREATE FUNCTION ledger_apply(
    p_kind text[], p_id text[], p_debit text[], p_credit text[], p_amount bigint[],
    p_code text[], p_ref text[], p_hold text[],
    p_dup int[],               -- earlier index in the batch with the same id, else NULL
    p_hold_idx int[],          -- earlier index in the batch whose id is this op's hold, else NULL
    p_settled_before boolean[],-- an earlier op in the batch settles the same hold
    p_pair_err text[])         -- the currency/points refusal of a transfer or hold, if any
RETURNS TABLE (err text, idx int, id text, op text, debit text, credit text, currency text,
               amount bigint, code text, ref text, hold text, released bigint, info bigint)
LANGUAGE plpgsql
-- Plans are cached per connection. Generic ones: custom plans, which see the array sizes,
-- would be re-planned at every call (half its cost for one bet). No sequential scans: a plan
-- first made while the tables were small would keep scanning them once they have grown
-- (every lookup here is by key).
SET plan_cache_mode = force_generic_plan
SET enable_seqscan = off
AS $$
#variable_conflict use_column
DECLARE
    n int := coalesce(cardinality(p_id), 0);
    names text[];
    a_id text[]; a_cur text[]; a_kind text[]; a_used bigint[]; a_room bigint[];
    r_op text[] := array_fill(NULL::text, ARRAY[n]);
    r_debit text[] := array_fill(NULL::text, ARRAY[n]);
    r_credit text[] := array_fill(NULL::text, ARRAY[n]);
    r_cur text[] := array_fill(NULL::text, ARRAY[n]);
    r_amount bigint[] := array_fill(NULL::bigint, ARRAY[n]);
    r_code text[] := array_fill(NULL::text, ARRAY[n]);
    r_ref text[] := array_fill(NULL::text, ARRAY[n]);
    r_hold text[] := array_fill(NULL::text, ARRAY[n]);
    r_rel bigint[] := array_fill(NULL::bigint, ARRAY[n]);
    r_new boolean[] := array_fill(false, ARRAY[n]);
    r_dpos int[] := array_fill(NULL::int, ARRAY[n]);
    r_cpos int[] := array_fill(NULL::int, ARRAY[n]);
    x record;
    i int; j int; dpos int; cpos int; amt bigint; any_new boolean := false;
    h_op text; h_debit text; h_credit text; h_cur text; h_amount bigint; h_code text; h_ref text;
    s_op text; s_debit text; s_credit text; s_amount bigint; s_code text; s_ref text; s_hold text; s_rel bigint;
    same boolean;
BEGIN
    -- Lock every account the batch may touch, in id order (two batches never deadlock).
    names := p_debit || p_credit;
    IF 'post' = ANY (p_kind) OR 'void' = ANY (p_kind) THEN
        names := names || ARRAY(SELECT unnest(ARRAY[t.debit, t.credit]) FROM ledger_transfers t
                                 WHERE t.id = ANY (p_hold) AND t.op = 'hold');
    END IF;
    SELECT array_agg(s.id ORDER BY s.id), array_agg(s.currency ORDER BY s.id), array_agg(s.kind ORDER BY s.id),
           array_agg(s.debits_posted + s.debits_pending ORDER BY s.id),
           array_agg(s.credits_posted + s.credit_limit ORDER BY s.id)
      INTO a_id, a_cur, a_kind, a_used, a_room
      FROM (SELECT a.id, a.currency, a.kind, a.debits_posted, a.debits_pending, a.credits_posted, a.credit_limit
              FROM ledger_accounts a
             WHERE a.id = ANY (names)
             ORDER BY a.id FOR UPDATE) s;

    -- Read after locking: whoever held these accounts before us has committed.
    FOR x IN
        SELECT o.i::int AS i, o.kind, o.id, o.debit, o.credit, o.amount, o.code, o.ref, o.hold,
               k.op AS k_op, k.currency AS k_cur, k.debit AS k_debit, k.credit AS k_credit, k.amount AS k_amount, k.code AS k_code,
               k.ref AS k_ref, k.hold AS k_hold, k.hold_amount AS k_hold_amount,
               h.op AS h_op, h.debit AS h_debit, h.credit AS h_credit, h.currency AS h_cur, h.amount AS h_amount,
               h.code AS h_code, h.ref AS h_ref, (st.id IS NOT NULL) AS h_settled,
               ad.pos::int AS dpos, ac.pos::int AS cpos
          FROM unnest(p_kind, p_id, p_debit, p_credit, p_amount, p_code, p_ref, p_hold) WITH ORDINALITY
               AS o(kind, id, debit, credit, amount, code, ref, hold, i)
          -- LATERAL: an index probe per operation, whatever the plan cache decides
          LEFT JOIN LATERAL (SELECT t.* FROM ledger_transfers t WHERE t.id = o.id) k ON true
          LEFT JOIN LATERAL (SELECT t.* FROM ledger_transfers t WHERE t.id = o.hold) h ON true
          LEFT JOIN LATERAL (SELECT t.id FROM ledger_transfers t WHERE t.hold = o.hold) st ON true
          LEFT JOIN unnest(a_id) WITH ORDINALITY AS ad(id, pos) ON ad.id = coalesce(o.debit, h.debit)
          LEFT JOIN unnest(a_id) WITH ORDINALITY AS ac(id, pos) ON ac.id = coalesce(o.credit, h.credit)
         ORDER BY o.i
    LOOP
        i := x.i;
        -- the hold a post/void names: stored, else made earlier in this batch
        h_op := NULL;
        IF x.kind IN ('post', 'void') THEN
            IF x.h_op IS NOT NULL THEN
                h_op := x.h_op; h_debit := x.h_debit; h_credit := x.h_credit; h_cur := x.h_cur;
                h_amount := x.h_amount; h_code := x.h_code; h_ref := x.h_ref; dpos := x.dpos; cpos := x.cpos;
            ELSIF p_hold_idx[i] IS NOT NULL THEN
                j := p_hold_idx[i];
                h_op := r_op[j]; h_debit := r_debit[j]; h_credit := r_credit[j]; h_cur := r_cur[j];
                h_amount := r_amount[j]; h_code := r_code[j]; h_ref := r_ref[j]; dpos := r_dpos[j]; cpos := r_cpos[j];
            END IF;
        END IF;

        IF x.k_op IS NOT NULL OR p_dup[i] IS NOT NULL THEN
            -- seen before: the same content is the original result, other content a conflict
            IF x.k_op IS NOT NULL THEN
                s_op := x.k_op; s_debit := x.k_debit; s_credit := x.k_credit; s_amount := x.k_amount;
                s_code := x.k_code; s_ref := x.k_ref; s_hold := x.k_hold;
                s_rel := CASE WHEN x.k_hold IS NULL THEN 0 ELSE x.k_hold_amount - x.k_amount END;
            ELSE
                j := p_dup[i];
                s_op := r_op[j]; s_debit := r_debit[j]; s_credit := r_credit[j]; s_amount := r_amount[j];
                s_code := r_code[j]; s_ref := r_ref[j]; s_hold := r_hold[j]; s_rel := r_rel[j];
            END IF;
            IF x.kind IN ('transfer', 'hold') THEN
                same := s_op = x.kind AND s_debit = x.debit AND s_credit = x.credit AND s_amount = x.amount
                        AND s_code = x.code AND s_ref = x.ref AND s_hold IS NULL;
            ELSE
                amt := CASE WHEN x.kind = 'void' THEN 0 ELSE coalesce(x.amount, h_amount) END;
                same := h_op IS NOT NULL AND s_op = x.kind AND s_hold = x.hold
                        AND s_debit = h_debit AND s_credit = h_credit AND s_amount = amt
                        AND s_rel = h_amount - amt
                        AND s_code = CASE WHEN x.kind = 'post' AND x.code = '' THEN h_code ELSE x.code END
                        AND s_ref = CASE WHEN x.ref = '' THEN h_ref ELSE x.ref END;
            END IF;
            IF NOT coalesce(same, false) THEN
                RETURN QUERY SELECT 'id_conflict'::text, i, x.id, NULL::text, NULL::text, NULL::text, NULL::text,
                                    NULL::bigint, NULL::text, NULL::text, NULL::text, NULL::bigint, NULL::bigint;
                RETURN;
            END IF;
            r_cur[i] := CASE WHEN x.k_op IS NOT NULL THEN x.k_cur ELSE r_cur[p_dup[i]] END;
            r_op[i] := s_op; r_debit[i] := s_debit; r_credit[i] := s_credit; r_amount[i] := s_amount;
            r_code[i] := s_code; r_ref[i] := s_ref; r_hold[i] := s_hold; r_rel[i] := s_rel;
            CONTINUE;
        END IF;

        IF x.kind IN ('transfer', 'hold') THEN
            IF x.dpos IS NULL OR x.cpos IS NULL THEN
                RETURN QUERY SELECT 'unknown_account'::text, i, x.id, NULL::text,
                                    CASE WHEN x.dpos IS NULL THEN x.debit ELSE x.credit END, NULL::text, NULL::text,
                                    NULL::bigint, NULL::text, NULL::text, NULL::text, NULL::bigint, NULL::bigint;
                RETURN;
            END IF;
            IF p_pair_err[i] IS NOT NULL THEN
                RETURN QUERY SELECT p_pair_err[i], i, x.id, NULL::text, NULL::text, NULL::text, NULL::text,
                                    NULL::bigint, NULL::text, NULL::text, NULL::text, NULL::bigint, NULL::bigint;
                RETURN;
            END IF;
            dpos := x.dpos; cpos := x.cpos;
            IF a_kind[dpos] NOT IN ('cashier', 'bank', 'jackpot', 'points_pool')
               AND a_used[dpos] + x.amount > a_room[dpos] THEN
                RETURN QUERY SELECT 'insufficient_funds'::text, i, x.id, NULL::text, x.debit, NULL::text, NULL::text,
                                    x.amount, NULL::text, NULL::text, NULL::text, NULL::bigint,
                                    a_room[dpos] - a_used[dpos];
                RETURN;
            END IF;
            a_used[dpos] := a_used[dpos] + x.amount;
            IF x.kind = 'transfer' THEN
                a_room[cpos] := a_room[cpos] + x.amount;
            END IF;
            r_op[i] := x.kind; r_debit[i] := x.debit; r_credit[i] := x.credit; r_cur[i] := a_cur[dpos];
            r_amount[i] := x.amount; r_code[i] := x.code; r_ref[i] := x.ref; r_rel[i] := 0;
        ELSE
            IF h_op IS DISTINCT FROM 'hold' THEN
                RETURN QUERY SELECT 'unknown_hold'::text, i, x.id, NULL::text, NULL::text, NULL::text, NULL::text,
                                    NULL::bigint, NULL::text, NULL::text, x.hold, NULL::bigint, NULL::bigint;
                RETURN;
            END IF;
            IF x.h_settled OR p_settled_before[i] THEN
                RETURN QUERY SELECT 'hold_not_pending'::text, i, x.id, NULL::text, NULL::text, NULL::text, NULL::text,
                                    NULL::bigint, NULL::text, NULL::text, x.hold, NULL::bigint, NULL::bigint;
                RETURN;
            END IF;
            IF x.kind = 'post' AND x.amount > h_amount THEN
                RETURN QUERY SELECT 'post_exceeds_hold'::text, i, x.id, NULL::text, NULL::text, NULL::text, NULL::text,
                                    x.amount, NULL::text, NULL::text, x.hold, NULL::bigint, h_amount;
                RETURN;
            END IF;
            IF dpos IS NULL OR cpos IS NULL THEN
                -- the hold was committed after this batch chose what to lock: start again
                RETURN QUERY SELECT 'retry'::text, i, x.id, NULL::text, NULL::text, NULL::text, NULL::text,
                                    NULL::bigint, NULL::text, NULL::text, NULL::text, NULL::bigint, NULL::bigint;
                RETURN;
            END IF;
            amt := CASE WHEN x.kind = 'void' THEN 0 ELSE coalesce(x.amount, h_amount) END;
            a_used[dpos] := a_used[dpos] + amt - h_amount;
            a_room[cpos] := a_room[cpos] + amt;
            r_op[i] := x.kind; r_debit[i] := h_debit; r_credit[i] := h_credit; r_cur[i] := h_cur;
            r_amount[i] := amt; r_hold[i] := x.hold; r_rel[i] := h_amount - amt;
            r_code[i] := CASE WHEN x.kind = 'post' AND x.code = '' THEN h_code ELSE x.code END;
            r_ref[i] := CASE WHEN x.ref = '' THEN h_ref ELSE x.ref END;
        END IF;
        r_dpos[i] := dpos; r_cpos[i] := cpos; r_new[i] := true; any_new := true;
    END LOOP;

    IF any_new THEN
        BEGIN
            INSERT INTO ledger_transfers (id, op, debit, credit, currency, amount, hold, hold_amount, code, ref)
            SELECT u.id, u.op, u.debit, u.credit, u.cur, u.amount, u.hold,
                   CASE WHEN u.hold IS NULL THEN NULL ELSE u.amount + u.rel END, u.code, u.ref
              FROM unnest(p_id, r_op, r_debit, r_credit, r_cur, r_amount, r_hold, r_rel, r_code, r_ref, r_new)
                   WITH ORDINALITY AS u(id, op, debit, credit, cur, amount, hold, rel, code, ref, new, i)
             WHERE u.new
             ORDER BY u.i;
        EXCEPTION WHEN unique_violation THEN
            -- a concurrent batch committed one of our ids (or settled our hold) first
            RETURN QUERY SELECT 'retry'::text, 0, NULL::text, NULL::text, NULL::text, NULL::text, NULL::text,
                                NULL::bigint, NULL::text, NULL::text, NULL::text, NULL::bigint, NULL::bigint;
            RETURN;
        END;
    END IF;

    RETURN QUERY
        SELECT NULL::text, u.i::int, u.id, u.op, u.debit, u.credit, u.cur, u.amount, u.code, u.ref, u.hold, u.rel,
               NULL::bigint
          FROM unnest(p_id, r_op, r_debit, r_credit, r_cur, r_amount, r_code, r_ref, r_hold, r_rel)
               WITH ORDINALITY AS u(id, op, debit, credit, cur, amount, code, ref, hold, rel, i)
         ORDER BY u.i;
END $$;
