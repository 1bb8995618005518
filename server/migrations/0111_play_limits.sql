-- Stake and loss limits per player, currency and window (server/responsible.py,
-- server/play_limits.py): the same shape and rules as deposit_limits (lower at once; a raise
-- or a removal waits in pending until pending_from). Checked inside a table's commit.
CREATE TABLE play_limits (
    user_id      text NOT NULL REFERENCES users (id),
    currency     text NOT NULL,
    kind         text NOT NULL CHECK (kind IN ('stake', 'loss')),
    period       text NOT NULL CHECK (period IN ('daily', 'weekly', 'monthly')),
    amount       bigint CHECK (amount >= 0),
    pending      bigint CHECK (pending >= 0),
    pending_from timestamptz,
    PRIMARY KEY (user_id, currency, kind, period)
);
