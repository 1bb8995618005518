-- A fencing token per lease (issue 14): every take of a table's lease, by another process or
-- by the same one again, counts ``epoch`` up, and a batch's statement writes only under the
-- epoch its runtime started with (server/store/state.py). A statement left running by a
-- runtime that gave the table up (its connection lost under it, outcome_unknown) and that
-- reaches its fence after the table was taken again, by the same owner as often as not,
-- then writes nothing instead of events and holds the new runtime knows nothing of.
ALTER TABLE table_owners ADD COLUMN epoch bigint NOT NULL DEFAULT 0;
