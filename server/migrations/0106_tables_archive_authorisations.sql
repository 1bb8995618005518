-- Tables are closed and archived, never deleted: their rounds, events and ledger history stay.
ALTER TABLE casino_tables ADD COLUMN archived_at timestamptz;
ALTER TABLE casino_tables ADD COLUMN archived_by text;

-- Art. 15: suspending or closing a table is the Direzione Giochi's; a chef de table may do it
-- only with a director's authorisation, recorded here (and in the audit log) before he acts.
CREATE TABLE table_authorisations (
    id          bigserial PRIMARY KEY,
    table_id    text NOT NULL REFERENCES casino_tables(id),
    action      text NOT NULL CHECK (action IN ('suspend', 'close')),
    chef        text NOT NULL REFERENCES users(id),
    director    text NOT NULL REFERENCES users(id),
    reason      text NOT NULL DEFAULT '',
    granted_at  timestamptz NOT NULL DEFAULT now(),
    valid_until timestamptz NOT NULL
);
CREATE INDEX table_authorisations_table ON table_authorisations (table_id, valid_until);

-- Every serving process says it is alive (the lease loop beats): a table leased by a process
-- that stopped beating is not being served, which /health/ready reports until the lease runs out.
CREATE TABLE casino_processes (
    owner        text PRIMARY KEY,
    started_at   timestamptz NOT NULL DEFAULT now(),
    heartbeat_at timestamptz NOT NULL DEFAULT now()
);
