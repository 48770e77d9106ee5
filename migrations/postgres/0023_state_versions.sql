-- State versions (owned by `proxmox::state` through `store::StateStore`): one row per change of
-- a scope's state that people make (an apply from a PR or the command line, `atlantis import`,
-- `atlantis state rm`, `atoll state mv|rm|import-terraform`), numbered 1, 2, ... per (repository, project directory, workspace).
-- `document` is the resources as they were, for people to read: generated values by name only
-- and sensitive fingerprints blanked, so a version never gives a secret away.
CREATE TABLE state_versions (
    repo        TEXT    NOT NULL,
    project_dir TEXT    NOT NULL,
    workspace   TEXT    NOT NULL,
    version     BIGINT  NOT NULL CHECK (version >= 1),
    created_at  TIMESTAMPTZ NOT NULL,
    actor       TEXT    NOT NULL,
    reason      TEXT    NOT NULL CHECK (reason IN ('apply', 'import', 'state_rm', 'remote_apply', 'state_mv',
                                                    'import_terraform')),
    job_id      UUID,
    commit_sha  TEXT,
    resources   BIGINT  NOT NULL CHECK (resources >= 0),
    document    JSONB   NOT NULL,
    PRIMARY KEY (repo, project_dir, workspace, version)
);
