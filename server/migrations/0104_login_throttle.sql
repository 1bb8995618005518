-- Failed logins per user name and per client address (server/auth.py LoginLimits), kept
-- here so that waits and locks hold across processes and restarts.
-- key: 'user:<name as typed>' (an unknown name is treated exactly like a known one)
--      or 'addr:<client address>'.
CREATE TABLE login_throttle (
    key            text PRIMARY KEY,
    failures       int NOT NULL DEFAULT 0,  -- wrong passwords, forgotten a window after the last
    last_failure   timestamptz,
    blocked_until  timestamptz,             -- no attempt before this: 429 too_many_attempts
    locked_until   timestamptz,             -- user names only: 429 account_locked
    checking       int NOT NULL DEFAULT 0,  -- attempts whose password is being checked now
    checking_since timestamptz              -- (a process may die mid-check: forgotten after a minute)
);

-- Start an attempt: refused (refusal, retry_after in seconds) while the name is locked or
-- the name or the address must wait, and while the attempts already being checked could
-- use up the failures left before the next wait (so concurrent guesses cannot slip past
-- the limits); nothing is counted then and no password is checked. Else the attempt is
-- being checked, and the user's hash comes back (NULL for an unknown or disabled name).
CREATE FUNCTION login_begin(p_user text, p_addr text, p_user_free int, p_addr_free int, p_window float8)
RETURNS TABLE (refusal text, retry_after float8, password_hash text, role text, currency text)
LANGUAGE plpgsql AS $$
DECLARE
    t timestamptz := clock_timestamp();
    forget timestamptz := clock_timestamp() - make_interval(secs => p_window);
    u login_throttle;
    a login_throttle;
    wait timestamptz;
BEGIN
    INSERT INTO login_throttle (key) VALUES ('user:' || p_user), ('addr:' || p_addr) ON CONFLICT DO NOTHING;
    -- Always in this order (addr: < user:), here and in login_failed.
    SELECT * INTO a FROM login_throttle WHERE key = 'addr:' || p_addr FOR UPDATE;
    SELECT * INTO u FROM login_throttle WHERE key = 'user:' || p_user FOR UPDATE;
    IF u.locked_until > t THEN
        RETURN QUERY SELECT 'account_locked', extract(epoch FROM u.locked_until - t)::float8,
                            NULL::text, NULL::text, NULL::text;
        RETURN;
    END IF;
    wait := greatest(u.blocked_until, a.blocked_until);
    IF wait > t THEN
        RETURN QUERY SELECT 'too_many_attempts', extract(epoch FROM wait - t)::float8,
                            NULL::text, NULL::text, NULL::text;
        RETURN;
    END IF;
    IF u.last_failure < forget THEN u.failures := 0; END IF;
    IF a.last_failure < forget THEN a.failures := 0; END IF;
    IF u.checking_since < t - interval '1 minute' THEN u.checking := 0; END IF;
    IF a.checking_since < t - interval '1 minute' THEN a.checking := 0; END IF;
    -- A name may not have more attempts being checked than the failures it has left (one at
    -- a time once it waits); an address likewise once it has failed at all, so that many
    -- people behind one address may log in at once.
    IF u.checking >= greatest(p_user_free - u.failures, 1)
       OR (a.failures > 0 AND a.checking >= greatest(p_addr_free - a.failures, 1)) THEN
        RETURN QUERY SELECT 'too_many_attempts', 1::float8, NULL::text, NULL::text, NULL::text;
        RETURN;
    END IF;
    UPDATE login_throttle SET failures = a.failures, checking = a.checking + 1, checking_since = t WHERE key = a.key;
    UPDATE login_throttle SET failures = u.failures, checking = u.checking + 1, checking_since = t WHERE key = u.key;
    -- Now and then, forget what is over (rows others hold are skipped).
    IF random() < 0.01 THEN
        DELETE FROM login_throttle WHERE key IN (
            SELECT key FROM login_throttle
             WHERE coalesce(last_failure, '-infinity') < forget AND checking_since < t - interval '1 minute'
               AND coalesce(greatest(blocked_until, locked_until), t) <= t
             LIMIT 1000 FOR UPDATE SKIP LOCKED);
    END IF;
    RETURN QUERY SELECT NULL::text, 0::float8, us.password_hash, us.role, us.currency
                   FROM (SELECT 1) one LEFT JOIN users us ON us.id = p_user AND NOT us.disabled;
END $$;

-- The password was right: the name's failures are cleared (the address's stay).
CREATE FUNCTION login_succeeded(p_user text, p_addr text) RETURNS void
LANGUAGE sql AS $$
    UPDATE login_throttle SET checking = greatest(checking - 1, 0) WHERE key = 'addr:' || p_addr;
    UPDATE login_throttle SET checking = greatest(checking - 1, 0), failures = 0, last_failure = NULL,
           blocked_until = NULL
     WHERE key = 'user:' || p_user;
$$;

-- The password was wrong: one more failure for the name and the address; from p_*_free
-- failures on, the next attempt waits p_delay seconds, doubling with each failure (at most
-- p_max_delay); at p_lock_failures the name is locked for p_lock_seconds. A row comes back
-- only when this failure locked the name (for the audit log).
CREATE FUNCTION login_failed(p_user text, p_addr text, p_user_free int, p_addr_free int, p_delay float8,
                             p_max_delay float8, p_lock_failures int, p_lock_seconds float8)
RETURNS TABLE (failures int, locked_until timestamptz)
LANGUAGE sql AS $$
    UPDATE login_throttle a
       SET failures = a.failures + 1, last_failure = clock_timestamp(), checking = greatest(a.checking - 1, 0),
           blocked_until = CASE WHEN a.failures + 1 >= p_addr_free THEN clock_timestamp() + make_interval(
               secs => least(p_delay * 2 ^ least(a.failures + 1 - p_addr_free, 30), p_max_delay)) END
     WHERE a.key = 'addr:' || p_addr;
    UPDATE login_throttle u
       SET failures = u.failures + 1, last_failure = clock_timestamp(), checking = greatest(u.checking - 1, 0),
           blocked_until = CASE WHEN u.failures + 1 >= p_user_free THEN clock_timestamp() + make_interval(
               secs => least(p_delay * 2 ^ least(u.failures + 1 - p_user_free, 30), p_max_delay)) END,
           locked_until = CASE WHEN u.failures + 1 >= p_lock_failures
                               THEN clock_timestamp() + make_interval(secs => p_lock_seconds) END
     WHERE u.key = 'user:' || p_user
    RETURNING u.failures, CASE WHEN u.failures >= p_lock_failures THEN u.locked_until END;
$$;
