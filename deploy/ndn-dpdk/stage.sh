# Shared by deploy/ndn-dpdk/build.sh and deploy/ndnc/build.sh (sourced after common.sh).
#
# A build is a series of stages, each installed into its own prefix
# $NATIVE_CACHE/<stage>-<key>, where <key> is a digest of the stage's pins and of the shell
# functions that build them (and the patches it applies), so a change to a program's build or
# patches rebuilds that program only, not the long builds of the libraries below it (DPDK and
# SPDK, ndn-cxx). A stage writes .complete last; a complete prefix is never rebuilt.
#
# An interrupted stage (a killed `make setup`, a session that ended) resumes: the steps it
# finished are recorded in $PREFIX/share/ndnsci/steps-done and are not run again; the step that
# was cut off runs again in its source tree (meson, make, ninja and waf are incremental). The
# key is the same, so the steps are the same code. Sources are only moved into $SRC/<name> once
# their digest matched (fetch_source), so one that is there is verified.

# Build a stage into PREFIX unless it is complete: extract the pinned COMPONENTS (a
# space-separated list of names of MANIFEST) into $SRC/<name>, then run each "Label:function"
# step, timed. The step functions see $PREFIX and $SRC. With STAGE_BELOW (the prefix of the
# stage it builds on), its build-times.txt starts with that stage's lines, so the last stage's
# file has every step (what `make native` prints).
stage() {
    local prefix=$1 manifest=$2 components=$3
    shift 3
    [[ -f "$prefix/.complete" ]] && return 0
    PREFIX="$prefix"
    lock_prefix
    [[ -f "$prefix/.complete" ]] && return 0 # built by another run while we waited
    local start=$SECONDS c step done_file="$prefix/share/ndnsci/steps-done" resumed=""
    SRC="$PREFIX.src"
    if [[ -f "$done_file" && -d "$SRC" ]]; then
        log "$(basename "$PREFIX"): resuming an interrupted build after: $(tr '\n' ' ' <"$done_file")"
        resumed=" (resumed; the steps above add up the whole)"
    else
        rm -rf "$PREFIX" "$SRC" && mkdir -p "$PREFIX/share/ndnsci" "$SRC"
        : >"$done_file"
        if [[ -n "${STAGE_BELOW:-}" && -f "$STAGE_BELOW/share/ndnsci/build-times.txt" ]]; then
            cp "$STAGE_BELOW/share/ndnsci/build-times.txt" "$PREFIX/share/ndnsci/build-times.txt"
        fi
    fi
    for c in $components; do
        [[ -d "$SRC/$c" ]] || fetch_source "$manifest" "$c" "$SRC/$c"
    done
    for step in "$@"; do
        grep -qxF "${step%%:*}" "$done_file" && continue
        (timed "${step%%:*}" "${step#*:}")
        echo "${step%%:*}" >>"$done_file"
    done
    echo "$(basename "${PREFIX%-*}") total $((SECONDS - start))s$resumed" >>"$PREFIX/share/ndnsci/build-times.txt"
    log "$(basename "$PREFIX") built in $((SECONDS - start))s"
    rm -rf "$SRC"
    touch "$PREFIX/.complete"
}
