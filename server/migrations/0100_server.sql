-- The server's own tables: people, casino tables and their runtime, the audit log.

CREATE TABLE users (
    id            text PRIMARY KEY,            -- the login name; also the player id engines see
    password_hash text NOT NULL,               -- argon2id
    role          text NOT NULL CHECK (role IN ('player', 'croupier', 'chef', 'inspector', 'director', 'admin')),
    currency      text NOT NULL DEFAULT 'CHF',
    disabled      boolean NOT NULL DEFAULT false,
    created_at    timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE casino_tables (
    id         text PRIMARY KEY,
    game       text NOT NULL,                  -- a registered game kind: 'roulette', 'blackjack'
    profile    text NOT NULL,                  -- house rules: 'campione', 'titano', 'lugano'
    mode       text NOT NULL CHECK (mode IN ('rng', 'live')),
    currency   text NOT NULL,
    name       text NOT NULL,
    settings   jsonb NOT NULL DEFAULT '{}',
    created_by text NOT NULL,
    created_at timestamptz NOT NULL DEFAULT now()
);

-- Croupiers and chefs de table work only at the tables they are assigned to.
CREATE TABLE table_staff (
    table_id text NOT NULL REFERENCES casino_tables(id),
    user_id  text NOT NULL REFERENCES users(id),
    PRIMARY KEY (table_id, user_id)
);

-- The committed engine state: written in the same transaction as the ledger ops and the events.
CREATE TABLE table_state (
    table_id   text PRIMARY KEY REFERENCES casino_tables(id),
    seq        bigint NOT NULL,
    round      text NOT NULL DEFAULT '',
    state      bytea NOT NULL,                 -- msgspec JSON of the engine state
    updated_at timestamptz NOT NULL DEFAULT now()
);

-- Every table event with the table's sequence number: resume, round recall, history.
CREATE TABLE table_events (
    table_id text NOT NULL REFERENCES casino_tables(id),
    seq      bigint NOT NULL,
    round    text NOT NULL DEFAULT '',
    kind     text NOT NULL,
    actor    text NOT NULL DEFAULT '',
    payload  jsonb NOT NULL,
    at       timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (table_id, seq)
);
CREATE INDEX table_events_round ON table_events (table_id, round, seq);

-- Who played which round, for a player's history.
CREATE TABLE round_players (
    table_id text NOT NULL,
    round    text NOT NULL,
    user_id  text NOT NULL,
    first_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (user_id, table_id, round)
);

-- The answer given to each accepted command id, so a retry is answered again, never applied twice.
CREATE TABLE command_results (
    user_id  text NOT NULL,
    cid      text NOT NULL,
    table_id text NOT NULL,
    result   jsonb NOT NULL,
    at       timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (user_id, cid)
);

-- One owner per table, chosen through a lease: a second process (or a failover) takes a
-- table only when the lease has run out.
CREATE TABLE table_owners (
    table_id    text PRIMARY KEY REFERENCES casino_tables(id),
    owner       text NOT NULL,
    lease_until timestamptz NOT NULL
);

-- Append-only: who did what, when, on which console.
CREATE TABLE audit_log (
    id     bigserial PRIMARY KEY,
    at     timestamptz NOT NULL DEFAULT now(),
    actor  text NOT NULL,
    role   text NOT NULL,
    action text NOT NULL,
    target text NOT NULL DEFAULT '',
    detail jsonb NOT NULL DEFAULT '{}'
);

CREATE FUNCTION audit_log_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    RAISE EXCEPTION 'audit_log is append-only';
END $$;

CREATE TRIGGER audit_log_no_change BEFORE UPDATE OR DELETE OR TRUNCATE ON audit_log
    FOR EACH STATEMENT EXECUTE FUNCTION audit_log_append_only();
