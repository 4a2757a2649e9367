#!/usr/bin/env bash
# Install the browser the web UI's end-to-end tests drive: Debian's chromium package.
#
#   deploy/browser/install.sh
#
# Idempotent: does nothing when /usr/bin/chromium (or $CHROMIUM) is already there. Playwright
# never downloads a browser here (PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1 in webui/); it launches
# this one (webui/e2e/browser.ts). Needs root or sudo for apt-get.
set -euo pipefail

chromium="${CHROMIUM:-/usr/bin/chromium}"
if [[ -x "$chromium" ]]; then
    echo "$chromium"
    exit 0
fi

sudo=""
if [[ "$(id -u)" != 0 ]]; then
    command -v sudo >/dev/null || { echo "install.sh: need root or sudo to install chromium" >&2; exit 1; }
    sudo="sudo"
fi
export DEBIAN_FRONTEND=noninteractive
# an old or missing package list is the usual cause of "Unable to locate package"
$sudo apt-get update -qq
$sudo apt-get install -y -qq --no-install-recommends chromium fonts-dejavu-core >/dev/null
"$chromium" --version >&2
echo "$chromium"
