#!/usr/bin/env bash
# Build NDNc (the consumer library, ndncping, ndncft and the XRootD plugin libXrdNdnOss) from
# the pins in sources.txt with the patches in patches/, into cached prefixes (see
# deploy/ndn-dpdk/common.sh): the libraries NDNc needs (ndn-cxx, libmemif, cpr, influxdb-cxx;
# ndn-cxx alone is ~17 minutes on 2 cores) in ndnc-deps-<key>, NDNc itself in ndnc-<key>, so a
# change to a patch rebuilds NDNc in a few minutes, not ndn-cxx.
#
#   deploy/ndnc/build.sh        # prints the NDNc prefix as its last line on stdout
#   deploy/ndnc/build.sh --deps # the same build; prints the prefix of NDNc's libraries instead
#                               # (deploy/xrootd/build.sh builds the XRootD plugin against it)
#
# Idempotent: complete prefixes are not rebuilt. Step times: PREFIX/share/ndnsci/build-times.txt.
set -euo pipefail
print=ndnc
case "${1:-}" in
    "") ;;
    --deps) print=deps ;;
    *) echo "usage: $0 [--deps]" >&2; exit 2 ;;
esac
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
source "$here/../ndn-dpdk/common.sh"
source "$here/../ndn-dpdk/stage.sh"

build_ndn_cxx() {
    cd "$SRC/ndn-cxx"
    # the library only (no tools; tests and examples are not built unless asked for, docs only by
    # `waf docs`), without debug info (-g doubles the time of this template-heavy build), with
    # ndn-cxx's precompiled header (common-pch.hpp: its Boost and standard headers parsed once)
    CXXFLAGS="-O2 -DNDEBUG" ./waf configure --prefix="$PREFIX" --libdir="$PREFIX/lib" \
        --without-tools >&2
    ./waf build -j"$NJOBS" >&2
    ./waf install >&2
}

build_libmemif() {
    cd "$SRC/libmemif"
    # the packaging part runs `git describe` (no git tree here) and is not needed
    sed -i '/^# Packaging/,$d' CMakeLists.txt
    cmake -G Ninja -B build -DCMAKE_BUILD_TYPE=Release -DCMAKE_INSTALL_PREFIX="$PREFIX" >&2
    ninja -C build install >&2
}

build_cpr() {
    cd "$SRC/cpr"
    cmake -G Ninja -B build -DCMAKE_BUILD_TYPE=Release -DCMAKE_INSTALL_PREFIX="$PREFIX" \
        -DCMAKE_INSTALL_LIBDIR=lib -DCPR_USE_SYSTEM_CURL=ON -DCPR_BUILD_TESTS=OFF >&2
    ninja -C build install >&2
}

build_influxdb_cxx() {
    cd "$SRC/influxdb-cxx"
    cmake -G Ninja -B build -DCMAKE_BUILD_TYPE=Release -DCMAKE_INSTALL_PREFIX="$PREFIX" \
        -DCMAKE_INSTALL_LIBDIR=lib -DCMAKE_PREFIX_PATH="$PREFIX" -DCMAKE_INSTALL_RPATH="$PREFIX/lib" \
        -DINFLUXCXX_TESTING=OFF -DINFLUXCXX_SYSTEMTEST=OFF >&2
    ninja -C build install >&2
}

build_ndnc() {
    cd "$SRC/ndnc"
    apply_patches "$here"/patches/*.patch
    # no debug info: NDNc's CMakeLists.txt adds -g to every build type
    sed -i 's/^ADD_COMPILE_OPTIONS(-g /ADD_COMPILE_OPTIONS(/' CMakeLists.txt
    cmake -G Ninja -B build -DCMAKE_BUILD_TYPE=Release -DCMAKE_INSTALL_PREFIX="$PREFIX" \
        -DCMAKE_INSTALL_LIBDIR=lib -DBIN_INSTALL_DIR="$PREFIX/bin" -DCMAKE_PREFIX_PATH="$DEPS" \
        -DNDN_CXX_INCLUDES="$DEPS/include/ndn-cxx" -DNDN_CXX_LIB="$DEPS/lib/libndn-cxx.so" \
        -DMEMIF_INCLUDES="$DEPS/include" -DMEMIF_LIB="$DEPS/lib/libmemif.so" \
        -DCMAKE_INSTALL_RPATH="$PREFIX/lib;$DEPS/lib" >&2
    ninja -C build -j"$NJOBS" >&2
    ninja -C build install >&2
}

# Each key covers the pins and the functions that build them (not all of this script).
check_cache_root
use_tool_caches
KEY_FILES=("$here/../ndn-dpdk/common.sh")
DEPS="$NATIVE_CACHE/ndnc-deps-$(KEY_EXTRA="$(declare -f build_ndn_cxx build_libmemif build_cpr build_influxdb_cxx)" \
    cache_key "$here/sources.txt" ndn-cxx libmemif cpr influxdb-cxx)"
KEY_FILES+=("$here"/patches/*.patch)
NDNC="$NATIVE_CACHE/ndnc-$(KEY_EXTRA="$DEPS $(declare -f build_ndnc)" cache_key "$here/sources.txt" ndnc)"

if [[ -f "$DEPS/.complete" && -f "$NDNC/.complete" ]]; then
    PREFIX="$NDNC" publish_prefix ndnc
    log "NDNc already built in $NDNC"
    if [[ $print == deps ]]; then echo "$DEPS"; else echo "$NDNC"; fi
    exit 0
fi
"$here/install.sh"

export PKG_CONFIG_PATH="$DEPS/lib/pkgconfig"
stage "$DEPS" "$here/sources.txt" "ndn-cxx libmemif cpr influxdb-cxx" \
    libmemif:build_libmemif cpr:build_cpr influxdb-cxx:build_influxdb_cxx ndn-cxx:build_ndn_cxx
STAGE_BELOW="$DEPS" stage "$NDNC" "$here/sources.txt" "ndnc" NDNc:build_ndnc
PREFIX="$NDNC" publish_prefix ndnc
if [[ $print == deps ]]; then echo "$DEPS"; else echo "$NDNC"; fi
