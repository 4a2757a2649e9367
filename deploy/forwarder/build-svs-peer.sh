#!/usr/bin/env bash
# Build NDNd's own State Vector Sync example node (std/examples/svs/pure-sync of
# github.com/named-data/ndnd, the version pinned in go.mod), the real SVS peer the federation
# tests check ndnsci's sync against (tests/federation/test_svs_interop.py).
#
#   deploy/forwarder/build-svs-peer.sh [OUTDIR]
#
# OUTDIR defaults to <repo>/.cache/ndnd/<version>; the binary is OUTDIR/svs-pure-sync. Same
# Go settings as build.sh (module and build caches under <repo>/.cache/go, go.mod/go.sum
# read-only); idempotent. The last line on stdout is the binary's absolute path.
#
# The node joins the group /ndn/svs, announces the node name it is given and a new sequence
# number every 3 s, and logs "Received update" for every other node's update.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
version="$(awk '$1 == "github.com/named-data/ndnd" {print $2} $1 == "require" && $2 == "github.com/named-data/ndnd" {print $3}' "$here/go.mod" | head -n1)"
outdir="${1:-$repo/.cache/ndnd/$version}"
mkdir -p "$outdir"
outdir="$(cd "$outdir" && pwd)"
bin="$outdir/svs-pure-sync"
if [[ -x "$bin" && "${NDND_FORCE:-0}" != 1 ]]; then
    echo "svs-pure-sync $version already built" >&2
    echo "$bin"
    exit 0
fi

GO="${GO:-$(command -v go || echo /usr/local/go/bin/go)}"
cache="${NDNSCI_GO_CACHE:-$repo/.cache/go}"
export GOMODCACHE="$cache/mod" GOCACHE="$cache/build" GOPATH="$cache/path"
export CGO_ENABLED=0 GO111MODULE=on GOTOOLCHAIN=local
export GOFLAGS="-mod=readonly -modcacherw -buildvcs=false"

echo "building NDNd's SVS example node ($version) into $bin" >&2
tmp="$bin.tmp.$$"
trap 'rm -f "$tmp"' EXIT
(cd "$here" && "$GO" build -trimpath -ldflags "-s -w" -o "$tmp" \
    github.com/named-data/ndnd/std/examples/svs/pure-sync)
mv -f "$tmp" "$bin"
trap - EXIT
echo "$bin"
