-- Table limits shared by both games: one immutable row per version, each with who changed
-- it, why, and the table round from which it applies.

CREATE TABLE table_limits (
    table_id   text NOT NULL,
    version    int NOT NULL CHECK (version > 0),
    from_round bigint NOT NULL CHECK (from_round >= 0),
    limits     jsonb NOT NULL,          -- msgspec JSON of games.ledger.limits.TableLimits
    changed_by text NOT NULL CHECK (changed_by <> ''),
    reason     text NOT NULL DEFAULT '',
    changed_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (table_id, version)
);
CREATE INDEX table_limits_from_round ON table_limits (table_id, from_round, version);

CREATE TRIGGER table_limits_immutable BEFORE UPDATE OR DELETE OR TRUNCATE ON table_limits
    FOR EACH STATEMENT EXECUTE FUNCTION ledger_immutable();
