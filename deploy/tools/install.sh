#!/usr/bin/env bash
# Install the command-line tools the tests run: the HTTP clients ESGF download scripts use, wget
# and curl (Debian packages), as a user of /esg-search/wget would have them; gdb, which holds the
# NDN-DPDK forwarder's polling thread in the middle of a burst in a native fault test;
# systemd-analyze (Debian's systemd), which verifies the unit `ndnsci site render systemd` writes.
#
#   deploy/tools/install.sh
#
# Idempotent: does nothing when all are installed. Needs root or sudo for apt-get otherwise.
set -euo pipefail

missing=()
for pair in wget:wget curl:curl gdb:gdb systemd-analyze:systemd; do
    command -v "${pair%%:*}" >/dev/null || missing+=("${pair#*:}")
done
[[ ${#missing[@]} -eq 0 ]] && exit 0

sudo=""
if [[ "$(id -u)" != 0 ]]; then
    command -v sudo >/dev/null || { echo "install.sh: need root or sudo to install ${missing[*]}" >&2; exit 1; }
    sudo="sudo"
fi
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -qq
$sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" ca-certificates >/dev/null
