#!/usr/bin/env bash
# Debian packages of XRootD (5.5 on bookworm): the server and the client tools (xrootd, xrdcp,
# xrdfs) that run the NDN storage plugin and the tests, and the development headers the plugin
# libXrdNdnOss is built against (deploy/xrootd/build.sh). Idempotent: fast when all are there.
# Called by `make system` and by build.sh.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/../ndn-dpdk/common.sh"
apt_ensure xrootd-server xrootd-client libxrootd-dev libxrootd-server-dev
