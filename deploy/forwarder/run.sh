#!/usr/bin/env bash
# Run the local NDNd forwarder in the foreground with deploy/forwarder/ndnd.yml.
#
#   deploy/forwarder/run.sh               # build if needed, render config, exec ndnd fw run
#   deploy/forwarder/run.sh --config      # only render the config, print its path
#
# Overrides (environment; each maps to a "# env NAME" line of ndnd.yml):
#   NDNSCI_FW_SOCK          Unix socket path. Default: $XDG_RUNTIME_DIR/ndnsci/nfd.sock when
#                           XDG_RUNTIME_DIR is a writable folder, else /tmp/ndnsci-<uid>/nfd.sock
#   NDNSCI_FW_WS_BIND       WebSocket bind address (127.0.0.1)
#   NDNSCI_FW_WS_PORT       WebSocket port (9696)
#   NDNSCI_FW_UDP_PORT      port of ndnd's always-on unicast UDP listener (56364)
#   NDNSCI_FW_UDP_BIND      its addresses, commas between them (127.0.0.1; 0.0.0.0,[::] for all)
#   NDNSCI_FW_THREADS       forwarding threads (2)
#   NDNSCI_FW_CS_CAPACITY   content store capacity, Data packets PER THREAD, <= 65535 (65535)
#   NDNSCI_FW_CS_POLICY     content store replacement policy (lru, the only one of v1.5.3)
#   NDNSCI_FW_TCP_ENABLED   true: listen for TCP faces on 0.0.0.0:6363 and [::]:6363 (false)
#   NDNSCI_FW_LOG_LEVEL     TRACE|DEBUG|INFO|WARN|ERROR (INFO)
#   NDND                    ndnd binary to use (default: the one build.sh builds)
#
# Clients reach it with  NDN_CLIENT_TRANSPORT=unix://<socket>  (ndnd put/cat, python-ndn).
# Refuses to start when a forwarder already answers on the socket (ndnd would silently
# unlink the live socket and take it over).
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"

if [[ -z "${NDNSCI_FW_SOCK:-}" ]]; then
    if [[ -n "${XDG_RUNTIME_DIR:-}" && -d "$XDG_RUNTIME_DIR" && -w "$XDG_RUNTIME_DIR" ]]; then
        NDNSCI_FW_SOCK="$XDG_RUNTIME_DIR/ndnsci/nfd.sock"
    else
        NDNSCI_FW_SOCK="/tmp/ndnsci-$(id -u)/nfd.sock"
    fi
fi
export NDNSCI_FW_SOCK
if (( ${#NDNSCI_FW_SOCK} > 100 )); then
    echo "run.sh: socket path too long for AF_UNIX (${#NDNSCI_FW_SOCK} > 100): $NDNSCI_FW_SOCK" >&2
    exit 2
fi
rundir="$(dirname "$NDNSCI_FW_SOCK")"
mkdir -p "$rundir"
chmod 700 "$rundir" 2>/dev/null || true

if [[ -n "${NDNSCI_FW_CS_CAPACITY:-}" ]] && (( NDNSCI_FW_CS_CAPACITY > 65535 )); then
    echo "run.sh: NDNSCI_FW_CS_CAPACITY is per thread and at most 65535; raise NDNSCI_FW_THREADS instead" >&2
    exit 2
fi

# Render: on each line ending in "# env NAME", replace the value by $NAME when NAME is set.
config="$rundir/ndnd.yml"
awk '
    match($0, /# env [A-Z_0-9]+[ \t]*$/) {
        var = substr($0, RSTART + 6); sub(/[ \t]+$/, "", var)
        if (var in ENVIRON && ENVIRON[var] != "") {
            colon = index($0, ": ")
            printf "%s: %s  # env %s\n", substr($0, 1, colon - 1), ENVIRON[var], var
            next
        }
    }
    { print }
' "$here/ndnd.yml" > "$config.tmp"
mv -f "$config.tmp" "$config"

if [[ "${1:-}" == "--config" ]]; then
    echo "$config"
    exit 0
fi

NDND="${NDND:-$("$here/build.sh" | tail -n 1)}"

if [[ -S "$NDNSCI_FW_SOCK" ]] &&
    NDN_CLIENT_TRANSPORT="unix://$NDNSCI_FW_SOCK" timeout 5 "$NDND" fw status >/dev/null 2>&1; then
    echo "run.sh: a forwarder is already running on $NDNSCI_FW_SOCK" >&2
    exit 1
fi

echo "ndnd forwarder: config $config" >&2
echo "ndnd forwarder: export NDN_CLIENT_TRANSPORT=unix://$NDNSCI_FW_SOCK" >&2
exec "$NDND" fw run "$config"
