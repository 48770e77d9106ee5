-- What atoll's Proxmox engine manages, per (repository, project directory, workspace): one row
-- per resource address. Owned by `proxmox::state` through `store::StateStore`.
-- `attributes` is a JSON document (what atoll last applied); `secrets` is a JSON object of
-- generated values (passwords), never shown. Times are Unix microseconds (UTC).

CREATE TABLE managed_resources (
    repo          TEXT    NOT NULL,
    project_dir   TEXT    NOT NULL,
    workspace     TEXT    NOT NULL,
    address       TEXT    NOT NULL CHECK (length(address) > 0),
    resource_type TEXT    NOT NULL,
    node          TEXT    NOT NULL,
    vm_id         INTEGER CHECK (vm_id IS NULL OR vm_id >= 100),
    volid         TEXT,
    attributes    TEXT    NOT NULL,
    secrets       TEXT    NOT NULL,
    updated_at    INTEGER NOT NULL,
    PRIMARY KEY (repo, project_dir, workspace, address)
);
