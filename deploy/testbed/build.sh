#!/usr/bin/env bash
# Build the testbed's delay element (deploy/testbed/delay/nsci-delay.c) with the machine's C
# compiler.
#
#   deploy/testbed/build.sh [OUTDIR]
#
# OUTDIR defaults to <repo>/.cache/testbed; the binary is OUTDIR/nsci-delay. Idempotent: nothing
# is built when the binary is newer than its source. The last line printed on stdout is always
# the absolute path of the binary:  DELAY=$(deploy/testbed/build.sh | tail -n1)
#
# Environment: CC (default cc), NSCI_DELAY_FORCE=1 to rebuild.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
src="$here/delay/nsci-delay.c"
outdir="${1:-$repo/.cache/testbed}"
mkdir -p "$outdir"
outdir="$(cd "$outdir" && pwd)"
bin="$outdir/nsci-delay"

if [[ -x "$bin" && "$bin" -nt "$src" && "${NSCI_DELAY_FORCE:-0}" != 1 ]]; then
    echo "$bin"
    exit 0
fi
CC="${CC:-cc}"
if ! command -v "$CC" >/dev/null 2>&1; then
    echo "build.sh: no C compiler ($CC); install gcc (Debian: apt-get install gcc)" >&2
    exit 1
fi
tmp="$bin.tmp.$$"
trap 'rm -f "$tmp"' EXIT
"$CC" -std=c11 -O2 -Wall -Wextra -Werror -o "$tmp" "$src"
mv -f "$tmp" "$bin"
trap - EXIT
echo "built $bin" >&2
echo "$bin"
