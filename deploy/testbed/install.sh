#!/bin/sh
# Install what the emulated testbed runs besides ndnsci and NDNd: iproute2 (ip, tc with tbf),
# curl (the HTTP comparison) and a C compiler (the delay element), then build the delay
# element. Idempotent: installs nothing when the commands are there. Called by `make setup`.
set -eu

here="$(cd "$(dirname "$0")" && pwd)"
missing=""
command -v ip >/dev/null 2>&1 || missing="$missing iproute2"
command -v tc >/dev/null 2>&1 || missing="$missing iproute2"
command -v curl >/dev/null 2>&1 || missing="$missing curl"
command -v "${CC:-cc}" >/dev/null 2>&1 || missing="$missing gcc libc6-dev"
if [ -n "$missing" ]; then
    if ! command -v apt-get >/dev/null 2>&1; then
        echo "deploy/testbed/install.sh: no apt-get here; install:$missing" >&2
        exit 1
    fi
    SUDO=""
    if [ "$(id -u)" -ne 0 ]; then
        SUDO="sudo"
    fi
    $SUDO apt-get update -q
    # shellcheck disable=SC2086 # a list of package names
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -q $missing
fi
"$here/build.sh" >/dev/null
