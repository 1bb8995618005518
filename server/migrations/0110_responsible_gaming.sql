-- Responsible gaming (server/responsible.py, docs/players-and-staff.md).

-- Age/ID check: a player may deposit only once verified. Accounts that exist already and
-- accounts created by staff (or the demo) are verified when created (the desk saw the
-- person); a player who registers himself (POST /auth/register) starts unverified.
ALTER TABLE users ADD COLUMN verified_at timestamptz DEFAULT now();
ALTER TABLE users ADD COLUMN verified_by text;
ALTER TABLE users ADD COLUMN verification text;  -- what was checked (document, number)

-- Cool-off and self-exclusion, one row per player: the one in force. A new one only ever
-- ends later. A cool-off lapses by itself at "until"; a self-exclusion stays in force after
-- "until" (for an indefinite one: the earliest it may be lifted, six months on) until the
-- desk lifts it at the player's request.
CREATE TABLE player_exclusions (
    user_id text PRIMARY KEY REFERENCES users (id),
    kind    text NOT NULL CHECK (kind IN ('cool_off', 'self_exclusion')),
    period  text NOT NULL,
    since   timestamptz NOT NULL DEFAULT now(),
    until   timestamptz NOT NULL,
    set_by  text NOT NULL
);

-- Deposit limits per player, currency and window (rolling 24 hours, 7 days, 30 days).
-- amount: the limit in force (NULL: none); a raise (or a removal) waits in pending until
-- pending_from; lowering replaces amount at once and drops a pending raise.
CREATE TABLE deposit_limits (
    user_id      text NOT NULL REFERENCES users (id),
    currency     text NOT NULL,
    period       text NOT NULL CHECK (period IN ('daily', 'weekly', 'monthly')),
    amount       bigint CHECK (amount >= 0),
    pending      bigint CHECK (pending >= 0),
    pending_from timestamptz,
    PRIMARY KEY (user_id, currency, period)
);

-- The player's own session settings (minutes; NULL: none).
CREATE TABLE player_session_limits (
    user_id               text PRIMARY KEY REFERENCES users (id),
    reality_check_minutes int CHECK (reality_check_minutes > 0),
    session_limit_minutes int CHECK (session_limit_minutes > 0)
);
