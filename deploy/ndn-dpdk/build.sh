#!/usr/bin/env bash
# Build NDN-DPDK (forwarder, file server, fetcher: `ndndpdk-svc`) and its C dependencies (DPDK,
# SPDK, uBPF, liburing) from the pins in sources.txt, with NDN-DPDK's own options
# (docs/ndndpdk-depends.sh, the Makefile, mk/cflags.sh), into cached prefixes (common.sh says
# where and how the keys are made): the libraries in ndn-dpdk-deps-<key>, NDN-DPDK in
# ndn-dpdk-<key> (its `deps` links to the libraries).
#
#   deploy/ndn-dpdk/build.sh        # prints the NDN-DPDK prefix as its last line on stdout
#
# Idempotent: complete prefixes are not rebuilt (a few milliseconds). About 15 minutes on 2
# idle cores the first time; step times are kept in PREFIX/share/ndnsci/build-times.txt.
#
# Options that differ from NDN-DPDK's defaults, and why:
#   DPDK carries the patches in patches/dpdk-*.patch (each says why at its top).
#   DPDK drivers: only what NDN-DPDK links and the faces we use (memif, AF_PACKET, AF_XDP, ring,
#     TAP, i40e which NDN-DPDK's ethdev code references, openssl crypto): a third of the build.
#     NDNSCI_DPDK_DRIVERS adds drivers for a real NIC (e.g. net/mlx5,common/mlx5,bus/auxiliary).
#   NDNDPDK_MK_RELEASE=1 (no debug assertions), NDNDPDK_MK_THREADSLEEP=1 (idle polling threads
#     sleep, so the forwarder, file server and fetcher can share 2 cores with everything else).
#   The programs we run (ndndpdk-svc, -ctrl, -godemo) rather than `make all` (which also
#     compiles every Go package and the npm bundle): the same binaries in half the time.
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
    local p
    for p in "$here"/patches/dpdk-*.patch; do
        # a resumed build finds the patches of its first run applied
        patch -p1 -R --dry-run --force --quiet <"$p" >/dev/null 2>&1 && continue
        patch -p1 --forward --quiet <"$p" || die "patch $p does not apply"
    done
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
    local cache="${NDNSCI_GO_CACHE:-$NATIVE_REPO/.cache/go}"
    export GOMODCACHE="$cache/mod" GOCACHE="$cache/build" GOPATH="$cache/path"
    export GOFLAGS="-modcacherw" GOTOOLCHAIN=local PATH="$PATH:/usr/local/go/bin"
    export CGO_LDFLAGS="-Wl,--disable-new-dtags,-rpath,$DEPS/lib"
    export NDNDPDK_MK_RELEASE=1 NDNDPDK_MK_THREADSLEEP=1
    # the npm packages generate the JSON schemas of the activation parameters (mk/schema)
    export COREPACK_ENABLE_DOWNLOAD_PROMPT=0 COREPACK_INTEGRITY_KEYS=0
    corepack pnpm install --reporter=silent >&2
    make "${PROGRAMS[@]/#/build/bin/}" >&2
    install -d "$PREFIX/bin" "$PREFIX/lib/bpf" "$PREFIX/share/ndn-dpdk"
    install -m0755 "${PROGRAMS[@]/#/build/bin/}" "$PREFIX/bin/"
    install -m0644 build/lib/bpf/*.o "$PREFIX/lib/bpf/"
    install -m0644 build/share/ndn-dpdk/*.json "$PREFIX/share/ndn-dpdk/"
    ln -sfn "$DEPS" "$PREFIX/deps"
}

# Each key covers the pins and the functions that build them (not all of this script).
check_cache_root
KEY_FILES=("$here"/patches/dpdk-*.patch)
DEPS="$NATIVE_CACHE/ndn-dpdk-deps-$(KEY_EXTRA="$DRIVERS $(declare -f use_deps build_dpdk build_ubpf build_liburing build_spdk)" \
    cache_key "$here/sources.txt" dpdk spdk ubpf liburing)"
NDNDPDK="$NATIVE_CACHE/ndn-dpdk-$(KEY_EXTRA="$DEPS ${PROGRAMS[*]} $(declare -f use_deps build_ndn_dpdk)" \
    cache_key "$here/sources.txt" ndn-dpdk)"

if [[ -f "$DEPS/.complete" && -f "$NDNDPDK/.complete" ]]; then
    PREFIX="$NDNDPDK" publish_prefix ndn-dpdk
    log "NDN-DPDK already built in $NDNDPDK"
    echo "$NDNDPDK"
    exit 0
fi
"$here/install.sh"
stage "$DEPS" "$here/sources.txt" "dpdk ubpf liburing spdk" \
    DPDK:build_dpdk uBPF:build_ubpf liburing:build_liburing SPDK:build_spdk
stage "$NDNDPDK" "$here/sources.txt" "ndn-dpdk" NDN-DPDK:build_ndn_dpdk
PREFIX="$NDNDPDK" publish_prefix ndn-dpdk
echo "$NDNDPDK"
