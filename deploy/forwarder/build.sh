#!/usr/bin/env bash
# Build the NDNd forwarder (github.com/named-data/ndnd) at the version pinned in
# deploy/forwarder/go.mod + go.sum, reproducibly, with the machine's `go`.
#
#   deploy/forwarder/build.sh [OUTDIR]
#
# OUTDIR defaults to <repo>/.cache/ndnd/<version>; the binary is OUTDIR/ndnd.
# Idempotent: when OUTDIR/ndnd exists and reports the pinned version, nothing is
# built. The last line printed on stdout is always the absolute path of the binary,
# so callers can do:  NDND=$(deploy/forwarder/build.sh | tail -n1)
#
# Environment:
#   NDND_FORCE=1        rebuild even if the binary is there
#   GO=/path/to/go      which go to use (default: `go` on PATH, then /usr/local/go/bin/go)
#   NDNSCI_GO_CACHE=DIR where the Go module and build caches live
#                       (default <repo>/.cache/go: works as root in CI, no $HOME needed)
#
# Why a module of ours: `go install github.com/named-data/ndnd@vX` is refused by the
# module proxy here, but building the package github.com/named-data/ndnd/cmd/ndnd from
# a module that requires it works, and go.sum pins every transitive dependency.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/../.." && pwd)"

# The pinned version, read from go.mod (single source of truth).
version="$(awk '$1 == "github.com/named-data/ndnd" {print $2} $1 == "require" && $2 == "github.com/named-data/ndnd" {print $3}' "$here/go.mod" | head -n1)"
if [[ -z "$version" ]]; then
    echo "build.sh: github.com/named-data/ndnd not found in $here/go.mod" >&2
    exit 1
fi

# Patches to NDNd (patches/*.patch, -p1 below the ndnd module) make the version string
# "<version>+ndnsci.<digest of the patches>", so a binary built without them is rebuilt.
patches=("$here"/patches/*.patch)
if [[ -e "${patches[0]}" ]]; then
    build_version="$version+ndnsci.$(cat "${patches[@]}" | sha256sum | cut -c1-8)"
else
    patches=()
    build_version="$version"
fi

outdir="${1:-$repo/.cache/ndnd/$version}"
mkdir -p "$outdir"
outdir="$(cd "$outdir" && pwd)"
bin="$outdir/ndnd"

if [[ -x "$bin" && "${NDND_FORCE:-0}" != 1 ]]; then
    # `ndnd --version` prints "ndnd version <version>" (set by -X below); check the pin.
    if [[ "$("$bin" --version 2>/dev/null)" == *" $build_version" ]]; then
        echo "ndnd $build_version already built" >&2
        echo "$bin"
        exit 0
    fi
    echo "build.sh: $bin is not $build_version, rebuilding" >&2
fi

GO="${GO:-}"
if [[ -z "$GO" ]]; then
    if command -v go >/dev/null 2>&1; then
        GO="$(command -v go)"
    elif [[ -x /usr/local/go/bin/go ]]; then
        GO=/usr/local/go/bin/go
    else
        echo "build.sh: no 'go' on PATH (need Go >= 1.24)" >&2
        exit 1
    fi
fi

cache="${NDNSCI_GO_CACHE:-$repo/.cache/go}"
export GOMODCACHE="$cache/mod"
export GOCACHE="$cache/build"
export GOPATH="$cache/path"
export CGO_ENABLED=0
export GO111MODULE=on
# Refuse to touch go.mod/go.sum: the build must use exactly what is committed.
# -modcacherw: let `rm -rf .cache` clean up (Go makes the module cache read-only otherwise).
export GOFLAGS="-mod=readonly -modcacherw -buildvcs=false"
export GOTOOLCHAIN=local

echo "building ndnd $build_version with $("$GO" version) into $bin" >&2
start=$(date +%s)
tmp="$bin.tmp.$$"
work=""
trap 'rm -f "$tmp"; [[ -z "$work" ]] || rm -rf "$work"' EXIT
src="$here"
if [[ ${#patches[@]} -gt 0 ]]; then
    # the pinned module, vendored into a scratch copy of this module, then patched
    work="$(mktemp -d)"
    cp "$here/go.mod" "$here/go.sum" "$here/tools.go" "$here/doc.go" "$work/"
    (cd "$work" && "$GO" mod vendor)
    chmod -R u+w "$work/vendor"
    for p in "${patches[@]}"; do
        patch -d "$work/vendor/github.com/named-data/ndnd" -p1 --forward --quiet <"$p" ||
            { echo "build.sh: $p does not apply to ndnd $version" >&2; exit 1; }
    done
    src="$work"
    export GOFLAGS="-mod=vendor -modcacherw -buildvcs=false"
fi
(
    cd "$src"
    "$GO" build -trimpath \
        -ldflags "-s -w -X 'github.com/named-data/ndnd/std/utils.NDNdVersion=$build_version'" \
        -o "$tmp" github.com/named-data/ndnd/cmd/ndnd
)
mv -f "$tmp" "$bin"
trap - EXIT
echo "built in $(( $(date +%s) - start ))s" >&2
echo "$bin"
