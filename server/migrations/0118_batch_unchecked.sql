-- A batch sent without the replay check first (server/runtime.py, issue 14): its statement
-- (server/store/state.py) checks itself that none of its command ids was answered at the
-- table before, a client's retry (SQLSTATE RP001), and that none of its players has stake or
-- loss limits (server/play_limits.py checks them; LM001). Either stops the statement, so that
-- nothing is written, and the server runs the check and the batch again, the checked way.
-- Returns 0 when the batch may go on unchecked.
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
