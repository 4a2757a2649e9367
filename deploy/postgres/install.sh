#!/bin/sh
# Install the PostgreSQL server the catalog tests start on loopback (tests/catalog/pgserver.py).
# Idempotent: does nothing when initdb is already there. Called by `make setup`.
set -eu

if ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1 || command -v initdb >/dev/null 2>&1; then
    exit 0
fi
if ! command -v apt-get >/dev/null 2>&1; then
    echo "deploy/postgres/install.sh: no apt-get here; install the PostgreSQL server" \
         "(initdb, pg_ctl) with your package manager" >&2
    exit 1
fi
SUDO=""
if [ "$(id -u)" -ne 0 ]; then
    SUDO="sudo"
fi
$SUDO apt-get update -q
# the package's own cluster is not used: the tests initdb a throwaway one
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -q postgresql
