#!/usr/bin/env bash
# Debian packages NDNc and its libraries build and run with: Boost, nlohmann-json, curl, SQLite
# and OpenSSL for ndn-cxx, the XRootD development packages for the XRootD plugin libXrdNdnOss,
# and XRootD's server and client to run it. Idempotent. Called by build.sh.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/../ndn-dpdk/common.sh"
apt_ensure build-essential ccache cmake ninja-build pkg-config python3 libboost-all-dev libssl-dev libsqlite3-dev \
    nlohmann-json3-dev libcurl4-openssl-dev libxrootd-dev libxrootd-server-dev libxrootd-client-dev \
    xrootd-server xrootd-client xz-utils
