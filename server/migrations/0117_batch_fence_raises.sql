-- A table's batch is one statement with no transaction of its own (server/store/state.py,
-- issue 14): when the lease fence finds that another process owns the table, the statement
-- must write nothing, so the fence raises (SQLSTATE TF001) rather than reporting a count that
-- a caller would have to roll back on. Returns the fence's count (1) otherwise.
CREATE FUNCTION table_batch_fenced(owned bigint) RETURNS bigint LANGUAGE plpgsql AS $$
BEGIN
    IF owned = 0 THEN
        RAISE EXCEPTION USING ERRCODE = 'TF001', MESSAGE = 'another process owns the table';
    END IF;
    RETURN owned;
END $$;
