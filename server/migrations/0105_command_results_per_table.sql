-- A client id names one command at one table: the same cid sent to a second table is a new
-- command there, not a retry of the first table's (it was answered with the first table's
-- result and nothing happened).
ALTER TABLE command_results DROP CONSTRAINT command_results_pkey;
ALTER TABLE command_results ADD PRIMARY KEY (user_id, table_id, cid);
