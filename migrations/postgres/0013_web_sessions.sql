-- Dashboard sessions (owned by `web`), so a restart logs nobody out. Only the SHA-256 of the
-- session token is stored: a leaked database does not hand out sessions.
CREATE TABLE web_sessions (
    token_hash TEXT        PRIMARY KEY CHECK (length(token_hash) = 64),
    username   TEXT        NOT NULL CHECK (username <> ''),
    csrf       TEXT        NOT NULL CHECK (csrf <> ''),
    created_at TIMESTAMPTZ NOT NULL DEFAULT now(),
    expires_at TIMESTAMPTZ NOT NULL
);

CREATE INDEX web_sessions_by_expiry ON web_sessions (expires_at);
