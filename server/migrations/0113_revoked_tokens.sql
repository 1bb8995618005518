-- Tokens ended before their expiry by a logout (server/sessions.py): every authenticated
-- request and websocket looks its token up here, in the same statement that reads its user
-- (server/store/users.py get_user). jti: the token's id (server/auth.py token_key; a token
-- issued before tokens had one: '<user>@<issued at, epoch seconds>'). A row is of no use once
-- its token has expired: logging out prunes those (expires_at's index keeps that cheap).
CREATE TABLE revoked_tokens (
    jti        text PRIMARY KEY,
    user_id    text NOT NULL,
    expires_at timestamptz NOT NULL,
    revoked_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX revoked_tokens_expires_at ON revoked_tokens (expires_at);
