-- The audit chain (issue 17): ``audit_log`` rows are sealed after the fact, in id order, one
-- seal per row: hash = sha256(previous seal's hash || the row's canonical bytes), the first
-- one chained to 32 zero bytes. The sealer (``server.audit_chain``) computes the hashes and
-- only appends; ``casino audit verify`` recomputes the chain from the first row. No foreign
-- key to audit_log: a seal whose row is gone is what verify reports, not what it cannot see.
CREATE TABLE audit_seals (
    id   bigint PRIMARY KEY,           -- the audit_log row it seals
    hash bytea NOT NULL CHECK (length(hash) = 32)
);

-- Both tables are append-only: any UPDATE, DELETE or TRUNCATE is refused (statement
-- triggers: they fire even when no row would be touched). audit_log has had its trigger
-- since 0100; it now shares this function, whose message names the table and the statement.
CREATE FUNCTION append_only() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    RAISE EXCEPTION '% is append-only: % refused', TG_TABLE_NAME, TG_OP
        USING HINT = 'audit rows and their seals are never changed or removed';
END $$;

CREATE TRIGGER audit_seals_no_change BEFORE UPDATE OR DELETE OR TRUNCATE ON audit_seals
    FOR EACH STATEMENT EXECUTE FUNCTION append_only();

DROP TRIGGER audit_log_no_change ON audit_log;
CREATE TRIGGER audit_log_no_change BEFORE UPDATE OR DELETE OR TRUNCATE ON audit_log
    FOR EACH STATEMENT EXECUTE FUNCTION append_only();
DROP FUNCTION audit_log_append_only();
