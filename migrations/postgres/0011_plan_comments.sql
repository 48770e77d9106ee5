-- Each pull request's latest plan comments (owned by `runner`, stored through `LockStore`), so
-- a new plan hides the superseded ones even after a restart.
CREATE TABLE plan_comments (
    repo       TEXT        NOT NULL CHECK (repo <> ''),
    pr         BIGINT      NOT NULL CHECK (pr >= 0),
    comment_id BIGINT      NOT NULL CHECK (comment_id >= 0),
    posted_at  TIMESTAMPTZ NOT NULL DEFAULT now(),
    PRIMARY KEY (repo, pr, comment_id)
);
