-- The replay check reads only the answers it asks about (issue 14). 0120 wrote it as a semi
-- join, "(user, cid) IN (the batch's keys)", and left the join to the planner. A plan made
-- while command_results was new and empty (before autovacuum first analysed it) and kept on
-- the connection (the batch's statement is prepared once; asyncpg prepares it again after
-- 300 s) joined the keys against every answer the table had given since: in
-- `bench_server peak`'s warm-up, about a thousand batches read 8,700 rows each. Now each key
-- is one probe of the primary key (user_id, table_id, cid): LIMIT 1 keeps the subquery a
-- lookup per key, never a join the planner may turn round. Left as it is: statistics taken
-- while the table held a page or so (autovacuum's first ANALYZE, after some 50 answers) plan
-- a scan per key until the next ANALYZE; forbidding that (SET enable_seqscan = off) stops
-- the function being inlined, which was measured at about 0.13 ms more a batch. Same
-- answers (a key asked twice is answered twice: callers ask EXISTS or build a dict).
CREATE OR REPLACE FUNCTION commands_answered(p_table text, p_users text[], p_cids text[])
RETURNS TABLE (user_id text, cid text, result jsonb) LANGUAGE sql STABLE AS $$
    SELECT k.user_id, k.cid, a.result
      FROM unnest(p_users, p_cids) AS k(user_id, cid)
      CROSS JOIN LATERAL (SELECT c.result FROM command_results c
                           WHERE c.user_id = k.user_id AND c.table_id = p_table AND c.cid = k.cid
                           LIMIT 1) AS a
$$;
