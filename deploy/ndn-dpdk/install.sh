#!/usr/bin/env bash
# Debian packages NDN-DPDK builds and runs with (the apt part of NDN-DPDK's
# docs/ndndpdk-depends.sh; DPDK, SPDK, uBPF and liburing are built from the pins in sources.txt,
# Debian's are too old). Idempotent: installs only what is missing. Called by build.sh.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
apt_ensure build-essential ccache clang-15 llvm-15 jq libc6-dev-i386 libelf-dev libpcap-dev liburcu-dev \
    meson ninja-build pkg-config cmake libnuma-dev python3-pyelftools libaio-dev libbpf-dev \
    libxdp-dev libssl-dev uuid-dev git curl xz-utils iproute2
