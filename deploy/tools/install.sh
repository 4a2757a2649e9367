#!/usr/bin/env bash
# Install the command-line HTTP clients the tests run ESGF download scripts with: wget and curl
# (Debian packages), as a user of /esg-search/wget would have them.
#
#   deploy/tools/install.sh
#
# Idempotent: does nothing when both are installed. Needs root or sudo for apt-get otherwise.
set -euo pipefail

missing=()
for tool in wget curl; do
    command -v "$tool" >/dev/null || missing+=("$tool")
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
