-- The bet path without a full state rewrite per batch (issue 14): a table's engine state is
-- a snapshot, written at round boundaries and every few batches, and the commands applied
-- since it are logged; a restart loads the snapshot and replays them (engines are
-- deterministic: every draw is in the command), checked against table_events.

-- The snapshot in ``state`` was taken after event ``state_seq`` and logged command
-- ``state_command``; ``seq``, ``round`` and ``open_refs`` still follow every batch.
-- A row written before this migration holds the full state at its seq.
ALTER TABLE table_state
    ADD COLUMN state_seq bigint NOT NULL DEFAULT 0,
    ADD COLUMN state_command bigint NOT NULL DEFAULT 0;
UPDATE table_state SET state_seq = seq;

-- Each command a table applied after its snapshot, in order (``n``: the table's command
-- counter; a command may produce no event, so the event seq cannot key it), as applied:
-- after ``authorize`` and with the server's draws in it (an RNG shoe's order and salt), so
-- it holds what the state holds and is as confidential. Its events are seqs
-- ``first_seq``..``last_seq`` of table_events (none when last_seq < first_seq). Rows the
-- snapshot covers are deleted when it is written: this is a recovery log, not a history
-- (the history is table_events; console actions are in audit_log). ``command`` is json, not
-- jsonb: the text as written, key order kept (a replayed dict must come back in the same
-- order for the replayed state to be byte-identical).
CREATE TABLE table_commands (
    table_id  text NOT NULL REFERENCES casino_tables(id),
    n         bigint NOT NULL,
    first_seq bigint NOT NULL,
    last_seq  bigint NOT NULL,
    actor     text NOT NULL,
    role      text NOT NULL,
    command   json NOT NULL,
    PRIMARY KEY (table_id, n)
);
