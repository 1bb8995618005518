-- The replay check reads only the answers it asks about (issue 14). 0120 wrote it as a semi
-- join, "(user, cid) IN (the batch's keys)", and left the join to the planner. A plan cached
-- on a connection (the batch's statement is prepared once) joined the keys against every
-- answer the table had ever given: a hash join over a scan of command_results, so each batch
-- paid for the table's whole history (measured in `bench_server peak`: 874 such scans in
-- 40 s, 7,700 rows read a scan, and growing). Now each key is one probe of the primary key
-- (user_id, table_id, cid): LIMIT 1 keeps the subquery a probe per key, never flattened into a
-- join the planner may turn round. Same rows, same columns.
CREATE OR REPLACE FUNCTION commands_answered(p_table text, p_users text[], p_cids text[])
RETURNS TABLE (user_id text, cid text, result jsonb) LANGUAGE sql STABLE AS $$
    SELECT k.user_id, k.cid, a.result
      FROM unnest(p_users, p_cids) AS k(user_id, cid)
      CROSS JOIN LATERAL (SELECT c.result FROM command_results c
                           WHERE c.user_id = k.user_id AND c.table_id = p_table AND c.cid = k.cid
                           LIMIT 1) AS a
$$;
