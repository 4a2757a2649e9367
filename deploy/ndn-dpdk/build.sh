#!/usr/bin/env bash
# Build NDN-DPDK (forwarder, file server, fetcher: `ndndpdk-svc`) and its C dependencies (DPDK,
# SPDK, uBPF, liburing) from the pins in sources.txt, with NDN-DPDK's own options
# (docs/ndndpdk-depends.sh, the Makefile, mk/cflags.sh), into cached prefixes (common.sh says
# where and how the keys are made): the libraries in ndn-dpdk-deps-<key>, NDN-DPDK in
# ndn-dpdk-<key> (its `deps` links to the libraries).
#
#   deploy/ndn-dpdk/build.sh        # prints the NDN-DPDK prefix as its last line on stdout
#
# Idempotent: complete prefixes are not rebuilt (a few milliseconds); step times are kept in
# PREFIX/share/ndnsci/build-times.txt.
#
# Two chains side by side: when NDN-DPDK has to be built, NDNc's chain (deploy/xrootd/build.sh,
# which builds deploy/ndnc first: libmemif, cpr, influxdb-cxx, ndn-cxx, NDNc, the XRootD plugin)
# is started beside this one, since none of it needs DPDK, and this script waits for it and fails
# if it failed. `make native` runs deploy/ndnc and deploy/xrootd after this: they find their
# prefixes complete. NDNSCI_NATIVE_ALONGSIDE=0 builds NDN-DPDK alone. Each step uses every core.
# The Go modules and npm packages are downloaded while DPDK compiles (prefetch_ndn_dpdk), and
# every C/C++ compile goes through ccache (common.sh: use_tool_caches).
#
# Options that differ from NDN-DPDK's defaults, and why:
#   DPDK carries the patches in patches/dpdk-*.patch (each says why at its top).
#   SPDK's minimal configuration: NDN-DPDK's configure options, and patches/spdk-minimal.patch
#     builds only the libraries and modules NDN-DPDK uses.
#   DPDK drivers: only what NDN-DPDK links and the faces we use (memif, AF_PACKET, AF_XDP, ring,
#     TAP, i40e which NDN-DPDK's ethdev code references, openssl crypto): a third of the build.
#     NDNSCI_DPDK_DRIVERS adds drivers for a real NIC (e.g. net/mlx5,common/mlx5,bus/auxiliary).
#   NDNDPDK_MK_RELEASE=1 (no debug assertions), NDNDPDK_MK_THREADSLEEP=1 (idle polling threads
#     sleep, so the forwarder, file server and fetcher can share 2 cores with everything else).
#   The programs we run (ndndpdk-svc, -ctrl, -godemo) rather than `make all` (which also
#     compiles every Go package and the npm bundle): the same binaries in half the time, and in
#     one `go install` (one build graph for the three, every core busy).
#   The programs carry DT_RPATH (not RUNPATH) to the libraries, so DPDK's own libraries,
#     loaded by SPDK's, are found too: no LD_LIBRARY_PATH needed.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
source "$here/common.sh"
source "$here/stage.sh"

DRIVERS="bus/pci,bus/vdev,mempool/ring,net/ring,net/af_packet,net/af_xdp,net/memif,net/tap,net/i40e,crypto/openssl"
[[ -n "${NDNSCI_DPDK_DRIVERS:-}" ]] && DRIVERS+=",$NDNSCI_DPDK_DRIVERS"
PROGRAMS=(ndndpdk-svc ndndpdk-ctrl ndndpdk-godemo)

# Headers outside /usr: without C_INCLUDE_PATH, -Werror=sign-compare fires inside DPDK's
# rte_common.h (gcc silences warnings only in system include directories).
use_deps() {
    export PKG_CONFIG_PATH="$1/lib/pkgconfig" C_INCLUDE_PATH="$1/include" LD_LIBRARY_PATH="$1/lib"
}

build_dpdk() {
    cd "$SRC/dpdk"
    apply_patches "$here"/patches/dpdk-*.patch
    meson setup -Ddebug=true -Dcpu_instruction_set=native -Doptimization=3 -Dtests=false \
        -Ddisable_apps='*' -Denable_kmods=false -Dexamples= \
        -Denable_drivers="$DRIVERS" \
        -Denable_libs=bpf,cryptodev,power,timer,pcapng,security,dmadev,gso \
        --prefix="$PREFIX" --libdir=lib build >&2
    meson compile -C build -j "$NJOBS" >&2
    meson install -C build >&2
    find "$PREFIX/lib" -name 'librte_*.a' -delete
}

build_ubpf() {
    cd "$SRC/ubpf"
    cmake -G Ninja -B build -DBUILD_SHARED_LIBS=1 -DUBPF_ENABLE_INSTALL=1 \
        -DCMAKE_INSTALL_PREFIX="$PREFIX" -DCMAKE_INSTALL_LIBDIR=lib >&2
    cmake --build build -t install >&2
    rm -f "$PREFIX/lib/libubpf.a"
}

build_liburing() {
    cd "$SRC/liburing"
    ./configure --prefix="$PREFIX" --libdir="$PREFIX/lib" >&2
    make -C src -j"$NJOBS" >&2
    make install >&2
}

build_spdk() {
    cd "$SRC/spdk"
    use_deps "$PREFIX"
    apply_patches "$here"/patches/spdk-*.patch
    # no submodules in the pinned archive: build without ISA-L (as NDN-DPDK's script does)
    sed -i '/^\s*if .*isa-l\/autogen.sh/,/^\s*fi$/ s/.*/CONFIG[ISAL]=n/' configure
    export CFLAGS="-I$PREFIX/include" LDFLAGS="-L$PREFIX/lib -Wl,-rpath,$PREFIX/lib"
    ./configure --prefix="$PREFIX" --target-arch=native --with-shared \
        --disable-tests --disable-unit-tests --disable-examples --disable-apps \
        --with-dpdk="$PREFIX" --with-uring --without-uring-zns \
        --without-idxd --without-crypto --without-fio --without-xnvme --without-vhost \
        --without-virtio --without-vfio-user --without-rbd \
        --without-rdma --without-fc --without-daos --without-iscsi-initiator --without-vtune \
        --without-ocf --without-fuse --without-nvme-cuse --without-raid5f --without-wpdk \
        --without-usdt --without-sma >&2
    make -j"$NJOBS" >&2
    make install >&2
    find "$PREFIX/lib" -name 'libspdk_*.a' -delete
}

build_ndn_dpdk() {
    cd "$SRC/ndn-dpdk"
    use_deps "$DEPS"
    # SPDK's library directory is hard-coded to /usr/local/lib and /usr/lib: add ours.
    sed -i "s|\[\]string{\"/usr/local/lib\", \"/usr/lib\"}|[]string{\"$DEPS/lib\", \"/usr/local/lib\", \"/usr/lib\"}|" \
        dpdk/spdkenv/init.go
    grep -q "\"$DEPS/lib\"" dpdk/spdkenv/init.go || die "dpdk/spdkenv/init.go: SPDK library path not patched"
    # mk/update-list.sh lists sources with git grep / git ls-files
    git init -q . && git add -A
    use_go_env
    export CGO_LDFLAGS="-Wl,--disable-new-dtags,-rpath,$DEPS/lib"
    export NDNDPDK_MK_RELEASE=1 NDNDPDK_MK_THREADSLEEP=1
    # the npm packages generate the JSON schemas of the activation parameters (mk/schema); the
    # prefetch resolved them (NDN-DPDK has no lock file) and left its lock file: installed as is
    if [[ -f "$PREFETCH/pnpm-lock.yaml" ]]; then
        cp "$PREFETCH/pnpm-lock.yaml" .
        corepack pnpm install --frozen-lockfile --prefer-offline --reporter=silent >&2
    else
        corepack pnpm install --reporter=silent >&2
    fi
    # NDN-DPDK's Makefile, its steps run in parallel where they are independent: the build
    # directory and the generated headers (`go generate`; the first target of each rule: a rule's
    # targets come from one run) side by side, then the C library, cgo flags and eBPF programs
    # (one meson build directory: one at a time), then the three programs in one `go install`
    make -j"$NJOBS" build/build.ninja $(sed -n 's|^\(csrc/[^ :]*\.h\)[^:]*:.*|\1|p' Makefile) >&2
    make godeps >&2
    GOBIN="$PWD/build/bin" mk/go.sh install "${PROGRAMS[@]/#/./cmd/}" >&2
    install -d "$PREFIX/bin" "$PREFIX/lib/bpf" "$PREFIX/share/ndn-dpdk"
    install -m0755 "${PROGRAMS[@]/#/build/bin/}" "$PREFIX/bin/"
    install -m0644 build/lib/bpf/*.o "$PREFIX/lib/bpf/"
    install -m0644 build/share/ndn-dpdk/*.json "$PREFIX/share/ndn-dpdk/"
    ln -sfn "$DEPS" "$PREFIX/deps"
}

use_go_env() {
    export GOFLAGS="-modcacherw" GOTOOLCHAIN=local PATH="$PATH:/usr/local/go/bin"
    export COREPACK_ENABLE_DOWNLOAD_PROMPT=0 COREPACK_INTEGRITY_KEYS=0
}

# Download what the NDN-DPDK step will need from the network (Go modules, pnpm and the npm
# packages) into the cache root (use_tool_caches), from NDN-DPDK's go.mod and package.json,
# while DPDK and SPDK compile. The npm packages are resolved here (the lock file that the step
# then installs exactly) and fetched into pnpm's store. Nothing here is fatal: the step
# downloads whatever is missing.
prefetch_ndn_dpdk() {
    local _n tarball _rest vendored
    read -r _n tarball _rest < <(pin_line "$here/sources.txt" ndn-dpdk)
    vendored="$(native_sources_dir)"
    [[ -n "$vendored" && -f "$vendored/$tarball" ]] || return 0
    rm -rf "$PREFETCH" && mkdir -p "$PREFETCH"
    tar -xf "$vendored/$tarball" -C "$PREFETCH" --strip-components=1 --no-wildcards-match-slash \
        --wildcards '*/go.mod' '*/go.sum' '*/package.json' '*/.npmrc' || return 0
    use_go_env
    cd "$PREFETCH"
    go mod download >&2 || log "prefetch: go mod download failed (the NDN-DPDK step will download)"
    if corepack pnpm install --lockfile-only --reporter=silent >&2 && corepack pnpm fetch --reporter=silent >&2; then
        log "prefetch: Go modules and npm packages downloaded"
    else
        rm -f pnpm-lock.yaml
        log "prefetch: pnpm failed (the NDN-DPDK step will install)"
    fi
}

# Each key covers the pins and the functions that build them (not all of this script).
check_cache_root
use_tool_caches
KEY_FILES=("$here"/patches/dpdk-*.patch "$here"/patches/spdk-*.patch)
DEPS="$NATIVE_CACHE/ndn-dpdk-deps-$(KEY_EXTRA="$DRIVERS $(declare -f use_deps apply_patches build_dpdk build_ubpf build_liburing build_spdk)" \
    cache_key "$here/sources.txt" dpdk spdk ubpf liburing)"
NDNDPDK="$NATIVE_CACHE/ndn-dpdk-$(KEY_EXTRA="$DEPS ${PROGRAMS[*]} $(declare -f use_deps use_go_env build_ndn_dpdk)" \
    cache_key "$here/sources.txt" ndn-dpdk)"
PREFETCH="$NDNDPDK.prefetch"

if [[ -f "$DEPS/.complete" && -f "$NDNDPDK/.complete" ]]; then
    PREFIX="$NDNDPDK" publish_prefix ndn-dpdk
    log "NDN-DPDK already built in $NDNDPDK"
    echo "$NDNDPDK"
    exit 0
fi
# every apt package of both chains first (one apt at a time)
"$here/install.sh"
alongside=""
if [[ "${NDNSCI_NATIVE_ALONGSIDE:-1}" == 1 ]]; then
    "$NATIVE_DEPLOY/ndnc/install.sh"
    "$NATIVE_DEPLOY/xrootd/install.sh"
    log "building NDNc's chain beside NDN-DPDK's (deploy/xrootd/build.sh; its lines start with [ndnc])"
    "$NATIVE_DEPLOY/xrootd/build.sh" > /dev/null 2> >(sed -u 's/^/[ndnc] /' >&2) &
    alongside=$!
    # NDN-DPDK's chain failing still waits for NDNc's (no build left running behind `make`)
    trap '[[ -n "$alongside" ]] && wait "$alongside"' EXIT
fi
prefetch=""
if [[ ! -f "$NDNDPDK/.complete" ]]; then
    (prefetch_ndn_dpdk) &
    prefetch=$!
fi
stage "$DEPS" "$here/sources.txt" "dpdk ubpf liburing spdk" \
    DPDK:build_dpdk uBPF:build_ubpf liburing:build_liburing SPDK:build_spdk
[[ -z "$prefetch" ]] || wait "$prefetch" || true
STAGE_BELOW="$DEPS" stage "$NDNDPDK" "$here/sources.txt" "ndn-dpdk" NDN-DPDK:build_ndn_dpdk
rm -rf "$PREFETCH"
PREFIX="$NDNDPDK" publish_prefix ndn-dpdk
if [[ -n "$alongside" ]]; then
    pid=$alongside
    alongside=""
    wait "$pid" || die "NDNc's chain (deploy/xrootd/build.sh, beside this one) failed; its log lines start with [ndnc]"
fi
echo "$NDNDPDK"
