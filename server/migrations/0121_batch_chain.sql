-- A table's next batch may go to PostgreSQL while the one before it commits (server/runtime.py,
-- the pipeline; issue 14). Each batch's statement names the batch the table must be at when
-- it runs: ``table_state.batches``, counted up by every batch statement. Its first act is to
-- lock the table's row and read that count (server/store/state.py), so it waits until the
-- batch before it has committed or rolled back, and then sees what that one wrote (READ
-- COMMITTED: the locked row as last committed). If that one wrote nothing, the count is not
-- the one named and this one writes nothing either (SQLSTATE CH001): no batch is ever written
-- on top of one that was not. A count of batches rather than the seq: a batch may hold no event.
ALTER TABLE table_state ADD COLUMN batches bigint NOT NULL DEFAULT 0;

CREATE FUNCTION table_batch_chained(at_batch boolean) RETURNS int LANGUAGE plpgsql AS $$
BEGIN
    IF at_batch IS NOT TRUE THEN  -- (false, or NULL: no row)
        RAISE EXCEPTION USING ERRCODE = 'CH001', MESSAGE = 'the batch before this one was not written';
    END IF;
    RETURN 0;
END $$;
