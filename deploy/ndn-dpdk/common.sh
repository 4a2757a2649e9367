# Shared by deploy/ndn-dpdk/build.sh and deploy/ndnc/build.sh (sourced, not run).
#
# Sources: every component is pinned in a sources.txt beside its build script, one line each:
#   NAME  TARBALL  TARBALL-SHA256  SUBDIR  TREE-SHA256  UPSTREAM-URL
# TARBALL is the vendored file (NDNSCI_NATIVE_SOURCES); TARBALL-SHA256 checks it. A user with
# internet gets UPSTREAM-URL (GitHub's archive of the pinned commit or tag) instead; GitHub's
# archive bytes are not stable, so that download is checked by TREE-SHA256, the SHA-256 of the
# extracted file tree (see tree_digest), which both ways must match. SUBDIR is the part of the
# archive that is used ("." for all of it).
#
# Cache: each build installs into $NATIVE_CACHE/<component>-<key>, where <key> is a digest of the
# pins, the build scripts and the patches, and writes .complete there last; a complete prefix is
# never rebuilt. NDNSCI_NATIVE_CACHE overrides the root (default /var/cache/ndnsci/native for root,
# else ~/.cache/ndnsci/native). DPDK refuses to load drivers from a path with a world-writable
# ancestor (/tmp), so such a root is refused here, before an hour of building.

NATIVE_DEPLOY="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
NATIVE_REPO="$(cd "$NATIVE_DEPLOY/.." && pwd)"

if [[ -n "${NDNSCI_NATIVE_CACHE:-}" ]]; then
    NATIVE_CACHE="$NDNSCI_NATIVE_CACHE"
elif [[ "$(id -u)" -eq 0 ]]; then
    NATIVE_CACHE=/var/cache/ndnsci/native
else
    NATIVE_CACHE="${XDG_CACHE_HOME:-$HOME/.cache}/ndnsci/native"
fi
NJOBS="${NDNSCI_NATIVE_JOBS:-$(nproc)}"

log() { echo "[$(date +%H:%M:%S)] $*" >&2; }
die() { echo "$(basename "$0"): $*" >&2; exit 1; }

# Where the vendored tarballs are: NDNSCI_NATIVE_SOURCES, else the shared folder beside the
# repository, else /work/shared/native/vendor; empty when none exists (then: download).
native_sources_dir() {
    local d
    for d in "${NDNSCI_NATIVE_SOURCES:-}" "$NATIVE_REPO/../shared/native/vendor" /work/shared/native/vendor; do
        if [[ -n "$d" && -d "$d" ]]; then
            (cd "$d" && pwd)
            return
        fi
    done
}

# Refuse a cache root with a world-writable ancestor (sticky or not): DPDK's EAL would refuse
# to load its drivers from there at run time.
check_cache_root() {
    local d
    mkdir -p "$NATIVE_CACHE"
    d="$(cd "$NATIVE_CACHE" && pwd -P)"
    while [[ "$d" != / ]]; do
        if [[ -n "$(find "$d" -maxdepth 0 -perm -o+w)" ]]; then
            die "cache root $NATIVE_CACHE: $d is world-writable; DPDK refuses to load drivers below it." \
                "Set NDNSCI_NATIVE_CACHE to a directory without world-writable ancestors."
        fi
        d="$(dirname "$d")"
    done
    chmod 0755 "$NATIVE_CACHE"
}

# The compilers' and package managers' caches, kept in the cache root beside the prefixes (not
# in the checkout, not in $HOME): ccache for every C/C++ compile (through Debian's masquerade
# directory, so meson, cmake, waf, make and cgo all use it), Go's module and build caches,
# corepack's pnpm and pnpm's store. A first build fills them; a stage rebuilt for a changed key
# (a patch, an option) then recompiles only what changed. They shape no output, so they are in
# no key. CCACHE_BASEDIR makes the paths below the root relative (each stage's sources live in
# a folder named by its key); without hash_dir the compile directory (the key) is not hashed.
use_tool_caches() {
    [[ -d /usr/lib/ccache ]] && export PATH="/usr/lib/ccache:$PATH"
    export CCACHE_DIR="$NATIVE_CACHE/ccache" CCACHE_BASEDIR="$NATIVE_CACHE" CCACHE_NOHASHDIR=1 \
        CCACHE_MAXSIZE="${CCACHE_MAXSIZE:-5G}" \
        CCACHE_SLOPPINESS=pch_defines,time_macros,include_file_mtime,include_file_ctime
    export GOMODCACHE="$NATIVE_CACHE/go/mod" GOCACHE="$NATIVE_CACHE/go/build" GOPATH="$NATIVE_CACHE/go/path"
    export COREPACK_HOME="$NATIVE_CACHE/corepack" npm_config_store_dir="$NATIVE_CACHE/pnpm/store" \
        npm_config_cache="$NATIVE_CACHE/npm"
}

# SHA-256 of a file tree: paths and contents, executable bits, symlink targets.
tree_digest() {
    (cd "$1" && {
        find . -type f -print0 | LC_ALL=C sort -z | xargs -0r sha256sum
        find . -type f -perm -u+x | LC_ALL=C sort | sed 's/^/x /'
        find . -type l -printf 'l %p %l\n' | LC_ALL=C sort
    } | sha256sum | cut -d' ' -f1)
}

# The pin line of NAME in a sources.txt.
pin_line() {
    awk -v n="$2" '$1 == n {print; found=1} END {exit !found}' "$1" || die "$2 is not pinned in $1"
}

# Extract the pinned source NAME of MANIFEST into DEST (created; must not exist).
fetch_source() {
    local manifest=$1 name=$2 dest=$3
    local _n tarball sum subdir tree url vendored tmp got
    read -r _n tarball sum subdir tree url < <(pin_line "$manifest" "$name")
    vendored="$(native_sources_dir)"
    tmp="$dest.extract"
    rm -rf "$tmp" && mkdir -p "$tmp"
    if [[ -n "$vendored" && -f "$vendored/$tarball" ]]; then
        got="$(sha256sum "$vendored/$tarball" | cut -d' ' -f1)"
        [[ "$got" == "$sum" ]] || die "$vendored/$tarball: SHA-256 $got, pinned $sum"
        tar -xf "$vendored/$tarball" -C "$tmp"
    else
        log "$name: no vendored $tarball (NDNSCI_NATIVE_SOURCES); downloading $url"
        mkdir -p "$NATIVE_CACHE/downloads"
        local file="$NATIVE_CACHE/downloads/$name-$(basename "$url")"
        curl -fsSL --retry 3 -o "$file.part" "$url" || die "$name: cannot download $url"
        mv "$file.part" "$file"
        tar -xf "$file" -C "$tmp"
    fi
    local top
    top="$(find "$tmp" -mindepth 1 -maxdepth 1 -type d)"
    [[ "$(echo "$top" | wc -l)" -eq 1 && -d "$top/$subdir" ]] || die "$name: unexpected archive layout"
    local used="$top"
    [[ "$subdir" == . ]] || used="$top/$subdir"
    got="$(tree_digest "$used")"
    [[ "$got" == "$tree" ]] || die "$name: file tree SHA-256 $got, pinned $tree"
    mv "$used" "$dest"
    rm -rf "$tmp"
}

# The cache key: the pins of the listed components, every file in KEY_FILES that shapes the
# build, and KEY_EXTRA (options).
cache_key() {
    local manifest=$1
    shift
    local n
    {
        for n in "$@"; do pin_line "$manifest" "$n"; done
        for f in "${KEY_FILES[@]}"; do sha256sum "$f" | cut -d' ' -f1; done
        echo "${KEY_EXTRA:-}"
        uname -m
    } | sha256sum | cut -c1-16
}

# Apply the patches PATCH... in the current folder; a resumed build finds those of its first run
# applied.
apply_patches() {
    local p
    for p in "$@"; do
        [[ -f "$p" ]] || continue
        patch -p1 -R --dry-run --force --quiet <"$p" >/dev/null 2>&1 && continue
        patch -p1 --forward --quiet <"$p" || die "patch $p does not apply"
    done
}

# Run a build step with its wall time logged and appended to $PREFIX/share/ndnsci/build-times.txt.
timed() {
    local what=$1
    shift
    local start=$SECONDS
    log "$what ..."
    "$@"
    local took=$((SECONDS - start))
    log "$what: ${took}s"
    mkdir -p "$PREFIX/share/ndnsci"
    # with the load average of the step's last minutes (the machine may be shared)
    echo "$what ${took}s (load $(cut -d' ' -f1-3 /proc/loadavg))" >>"$PREFIX/share/ndnsci/build-times.txt"
}

# Take the build lock of PREFIX (another `make setup` may be building the same thing).
lock_prefix() {
    exec 9>"$PREFIX.lock"
    flock 9
}

# Point NATIVE_CACHE/<component> at the finished prefix (what `ndnsci native` runs).
publish_prefix() {
    ln -sfn "$(basename "$PREFIX")" "$NATIVE_CACHE/$1.tmp"
    mv -Tf "$NATIVE_CACHE/$1.tmp" "$NATIVE_CACHE/$1"
}

# Install Debian packages that are missing (idempotent; nothing to do is fast).
apt_ensure() {
    local missing=() p
    for p in "$@"; do
        dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
    done
    [[ ${#missing[@]} -eq 0 ]] && return 0
    command -v apt-get >/dev/null || die "no apt-get here; install: ${missing[*]}"
    local sudo=""
    [[ "$(id -u)" -eq 0 ]] || sudo=sudo
    log "installing ${missing[*]}"
    $sudo apt-get update -qq >&2
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
}
