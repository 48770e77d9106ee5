#!/usr/bin/env bash
# Installs the Debian packages the test suite needs. Idempotent; run as root.
# `--missing` only prints the packages that would be installed (any user).
set -euo pipefail
need=()
command -v git >/dev/null || need+=(git)
command -v pg_isready >/dev/null || need+=(postgresql postgresql-client)
# The dashboard's browser tests (tests/web_browser.rs) drive headless Chromium over WebDriver.
command -v chromium >/dev/null || need+=(chromium)
command -v chromedriver >/dev/null || need+=(chromium-driver)
# Generated tls_private_key values are checked with OpenSSH's ssh-keygen and OpenSSL.
command -v ssh-keygen >/dev/null || need+=(openssh-client)
# Snippets are written over SFTP; tests/it/engine_files.rs starts a real sshd on loopback.
[ -x /usr/sbin/sshd ] || need+=(openssh-server)
command -v openssl >/dev/null || need+=(openssl)
# The Terraform oracle (tests/oracle) runs Terraform as a Python library in a virtualenv.
command -v python3 >/dev/null || need+=(python3)
python3 -c 'import ensurepip, venv' 2>/dev/null || need+=(python3-venv)
if [ "${1:-}" = "--missing" ]; then
    echo "${need[@]}"
    exit 0
fi
if [ "${#need[@]}" -gt 0 ]; then
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq
    apt-get install -y -qq "${need[@]}"
fi
