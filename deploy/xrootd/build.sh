#!/usr/bin/env bash
# Build NDNc's XRootD storage plugin (libXrdNdnOss, lib/xrdndnoss/ of the pinned NDNc sources)
# with the patches in patches/ on top of NDNc's own (deploy/ndnc/patches/), against the
# cached libraries NDNc builds with (ndnc-deps: ndn-cxx, libmemif, ...) and Debian's XRootD
# headers, into its own cached prefix (see deploy/ndn-dpdk/common.sh, stage.sh):
#
#   $NATIVE_CACHE/xrootd-ndn-<key>/lib/libXrdNdnOss.so   (+ the libndnc.so it was built with)
#   $NATIVE_CACHE/xrootd-ndn -> xrootd-ndn-<key>
#
# The patches change NDNc's consumer library too (lib/posix, congestion-control), so the plugin
# links a libndnc of its own (RPATH: this prefix first): the ndncft-client of deploy/ndnc keeps
# the library it was tested with, and a change here never rebuilds NDNc or ndn-cxx.
#
#   deploy/xrootd/build.sh      # prints the prefix as its last line on stdout
#
# The key covers NDNc's pin, NDNc's and these patches, the build function, the ndnc-deps prefix
# and the XRootD headers (XrdVersion.hh): XRootD refuses a plugin built for another major
# version. Idempotent (a complete prefix is not rebuilt), resumable; step times in
# PREFIX/share/ndnsci/build-times.txt. About 2-3 minutes on 2 cores once ndn-cxx is cached.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
source "$here/../ndn-dpdk/common.sh"
source "$here/../ndn-dpdk/stage.sh"
ndnc_dir="$here/../ndnc"

build_xrdndnoss() {
    cd "$SRC/ndnc"
    apply_patches "$ndnc_dir"/patches/*.patch "$here"/patches/*.patch
    # no debug info: NDNc's CMakeLists.txt adds -g to every build type
    sed -i 's/^ADD_COMPILE_OPTIONS(-g /ADD_COMPILE_OPTIONS(/' CMakeLists.txt
    cmake -G Ninja -B build -DCMAKE_BUILD_TYPE=Release -DCMAKE_INSTALL_PREFIX="$PREFIX" \
        -DCMAKE_INSTALL_LIBDIR=lib -DBIN_INSTALL_DIR="$PREFIX/bin" -DCMAKE_PREFIX_PATH="$DEPS" \
        -DNDN_CXX_INCLUDES="$DEPS/include/ndn-cxx" -DNDN_CXX_LIB="$DEPS/lib/libndn-cxx.so" \
        -DMEMIF_INCLUDES="$DEPS/include" -DMEMIF_LIB="$DEPS/lib/libmemif.so" \
        -DCMAKE_INSTALL_RPATH="$PREFIX/lib;$DEPS/lib" >&2
    # the plugin and the library under it only, not NDNc's programs
    ninja -C build -j"$NJOBS" XrdNdnOss >&2
    ninja -C build install >&2 # the programs' install rules are OPTIONAL: skipped, not built
    local lib="$PREFIX/lib/libXrdNdnOss.so"
    [[ -f "$lib" ]] || die "$lib was not installed"
    if ldd "$lib" | grep -q 'not found'; then
        ldd "$lib" | grep 'not found' >&2
        die "$lib: libraries not found"
    fi
    nm -D --defined-only "$lib" | grep -w XrdOssGetStorageSystem >/dev/null ||
        die "$lib does not export XrdOssGetStorageSystem"
}

"$here/install.sh"
check_cache_root
use_tool_caches
# NDNc's libraries (and, as a side effect, NDNc itself: a no-op when cached)
DEPS="$("$ndnc_dir/build.sh" --deps | tail -n1)"
[[ -f "$DEPS/.complete" ]] || die "deploy/ndnc/build.sh --deps gave $DEPS, which is not complete"
xrd_version=/usr/include/xrootd/XrdVersion.hh
[[ -f "$xrd_version" ]] || die "no $xrd_version: the XRootD development headers are missing (deploy/xrootd/install.sh)"

KEY_FILES=("$here/../ndn-dpdk/common.sh" "$ndnc_dir"/patches/*.patch "$here"/patches/*.patch "$xrd_version")
PREFIX="$NATIVE_CACHE/xrootd-ndn-$(KEY_EXTRA="$DEPS $(declare -f build_xrdndnoss)" \
    cache_key "$ndnc_dir/sources.txt" ndnc)"

if [[ -f "$PREFIX/.complete" ]]; then
    publish_prefix xrootd-ndn
    log "libXrdNdnOss already built in $PREFIX"
    echo "$PREFIX"
    exit 0
fi
stage "$PREFIX" "$ndnc_dir/sources.txt" "ndnc" libXrdNdnOss:build_xrdndnoss
publish_prefix xrootd-ndn
echo "$PREFIX"
