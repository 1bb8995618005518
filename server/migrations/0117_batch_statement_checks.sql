-- A table's batch is one statement with no transaction of its own (server/store/state.py,
-- issue 14). What would once have made its caller roll back now stops the statement itself,
-- so that nothing is written:
--
-- * the lease fence finds that another process owns the table: SQLSTATE TF001;
-- * (a batch sent without the replay check first) one of its commands was already answered
--   at this table, a client's retry: RP001; or one of its players has stake or loss limits
--   (server/play_limits.py checks them): LM001. The server then runs the check and the batch
--   again, the checked way.

-- The fence's count (1), or TF001.
CREATE FUNCTION table_batch_fenced(owned bigint) RETURNS bigint LANGUAGE plpgsql AS $$
BEGIN
    IF owned = 0 THEN
        RAISE EXCEPTION USING ERRCODE = 'TF001', MESSAGE = 'another process owns the table';
    END IF;
    RETURN owned;
END $$;

-- 0 when the batch may go on unchecked, else RP001 or LM001.
CREATE FUNCTION table_batch_unchecked(replayed boolean, limited boolean) RETURNS int LANGUAGE plpgsql AS $$
BEGIN
    IF replayed THEN
        RAISE EXCEPTION USING ERRCODE = 'RP001', MESSAGE = 'a command of the batch was answered before';
    END IF;
    IF limited THEN
        RAISE EXCEPTION USING ERRCODE = 'LM001', MESSAGE = 'a player of the batch has play limits';
    END IF;
    RETURN 0;
END $$;
