# Shared by deploy/ndn-dpdk/build.sh and deploy/ndnc/build.sh (sourced after common.sh).
#
# A build is a series of stages, each installed into its own prefix
# $NATIVE_CACHE/<stage>-<key>, where <key> is a digest of the stage's pins and of the shell
# functions that build it (and the patches it applies), so a change to a program's build or
# patches rebuilds that program only, not the long builds of the libraries below it (DPDK and
# SPDK, ndn-cxx). A stage writes .complete last; a complete prefix is never rebuilt.

# Build a stage into PREFIX unless it is complete: extract the pinned COMPONENTS (a
# space-separated list of names of MANIFEST) into $SRC/<name>, then run each "Label:function"
# step, timed. The step functions see $PREFIX and $SRC.
stage() {
    local prefix=$1 manifest=$2 components=$3
    shift 3
    [[ -f "$prefix/.complete" ]] && return 0
    PREFIX="$prefix"
    lock_prefix
    [[ -f "$prefix/.complete" ]] && return 0 # built by another run while we waited
    local start=$SECONDS c step
    rm -rf "$PREFIX" && mkdir -p "$PREFIX/share/ndnsci"
    SRC="$PREFIX.src"
    rm -rf "$SRC" && mkdir -p "$SRC"
    for c in $components; do fetch_source "$manifest" "$c" "$SRC/$c"; done
    for step in "$@"; do (timed "${step%%:*}" "${step#*:}"); done
    echo "total $((SECONDS - start))s" >>"$PREFIX/share/ndnsci/build-times.txt"
    log "$(basename "$PREFIX") built in $((SECONDS - start))s"
    rm -rf "$SRC"
    touch "$PREFIX/.complete"
}

