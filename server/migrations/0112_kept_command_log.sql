-- A dispute replays a past round through a fresh engine (issue 17): the commands a table
-- applied are kept (no longer deleted when a snapshot covers them), and the snapshots taken
-- as a round opens (and after a start) are kept beside the current one. A round is replayed
-- from the last kept snapshot before its first event, with the commands logged after it.
-- Both hold what the state holds (an RNG shoe's order, a fair spin's seed): as confidential
-- as table_state, read only by the server. Rounds played before this migration cannot be
-- replayed (their commands were deleted): the current snapshot is kept as the first.
CREATE TABLE table_snapshots (
    table_id      text NOT NULL REFERENCES casino_tables(id),
    state_seq     bigint NOT NULL,     -- taken after this event ...
    state_command bigint NOT NULL,     -- ... and after this logged command
    state         bytea NOT NULL,      -- the engine state, as in table_state
    taken_at      timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (table_id, state_seq, state_command)
);

INSERT INTO table_snapshots (table_id, state_seq, state_command, state)
SELECT table_id, state_seq, state_command, state FROM table_state;
