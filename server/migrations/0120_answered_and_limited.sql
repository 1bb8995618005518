-- Two rules the server asks about before it applies a batch, written once here (they were
-- written twice: the replay check, server/store/commands.py, and the statement of a batch
-- sent without it, server/store/state.py):
-- * a command answered before: the table's answer to that user's command id is stored
--   (command_results), so a client's retry gets it again and is never applied twice;
-- * a player with play limits: stake or loss limits in the table's currency
--   (server/play_limits.py checks his bets against them).
-- Plain SQL functions, inlined into the query that calls them.
CREATE FUNCTION commands_answered(p_table text, p_users text[], p_cids text[])
RETURNS TABLE (user_id text, cid text, result jsonb) LANGUAGE sql STABLE AS $$
    SELECT c.user_id, c.cid, c.result FROM command_results c
    WHERE c.table_id = p_table AND (c.user_id, c.cid) IN (SELECT * FROM unnest(p_users, p_cids))
$$;

CREATE FUNCTION players_with_limits(p_users text[], p_currency text)
RETURNS TABLE (user_id text) LANGUAGE sql STABLE AS $$
    SELECT DISTINCT l.user_id FROM play_limits l WHERE l.user_id = ANY(p_users) AND l.currency = p_currency
$$;
