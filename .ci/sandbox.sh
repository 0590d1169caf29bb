#!/usr/bin/env bash
# Installs and starts what the sandbox suite needs on a bare Debian 12 machine
# (root, no systemd, no container registry; only the Debian mirror and PyPI):
#   1. docker.io, bubblewrap, debootstrap from apt
#   2. dockerd, started directly and logged to $DOCKERD_LOG
#   3. the sandbox image, built unless present from the current recipe
#      (its base made with debootstrap when absent)
#   4. a smoke run of the image with network none
# Idempotent: a second run only checks. Called from .ci/run as `bash .ci/sandbox.sh`
# after .venv exists. Env: PYTHON (default .venv/bin/python), DOCKERD_LOG
# (default /var/log/dockerd.log), DOCKERD_WAIT_S (default 60),
# SANDBOX_BASE / SANDBOX_TAG (defaults cataloger-base:bookworm / cataloger-sandbox:latest).
set -euo pipefail

cd "$(dirname "$0")/.."
PYTHON=${PYTHON:-.venv/bin/python}
DOCKERD_LOG=${DOCKERD_LOG:-/var/log/dockerd.log}
DOCKERD_WAIT_S=${DOCKERD_WAIT_S:-60}
SANDBOX_BASE=${SANDBOX_BASE:-cataloger-base:bookworm}
SANDBOX_TAG=${SANDBOX_TAG:-cataloger-sandbox:latest}
PACKAGES=(docker.io bubblewrap debootstrap debian-archive-keyring)
export DEBIAN_FRONTEND=noninteractive

now() { date +%s.%N; }
T_START=$(now)
T_STEP=$T_START
TIMINGS=()
log() { echo "[sandbox.sh] $*" >&2; }
done_step() {
    local t; t=$(now)
    TIMINGS+=("$(awk -v a="$T_STEP" -v b="$t" -v n="$1" 'BEGIN { printf "%-28s %7.1fs", n, b - a }')")
    T_STEP=$t
}
die() { log "ERROR: $*"; exit 1; }

[ "$(id -u)" = 0 ] || die "run as root (apt-get, dockerd and debootstrap need it)"
[ -x "$PYTHON" ] || die "$PYTHON not found: create the repository's .venv first"

# --- 1. packages -------------------------------------------------------------
missing=()
for pkg in "${PACKAGES[@]}"; do
    dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed" \
        || missing+=("$pkg")
done
if [ ${#missing[@]} -gt 0 ]; then
    log "installing ${missing[*]}"
    # Without systemd the packages' postinst scripts would try (and fail) to
    # start services; dockerd is started below instead. Only our own
    # policy-rc.d is removed afterwards.
    own_policy=
    if [ ! -e /usr/sbin/policy-rc.d ]; then
        printf '#!/bin/sh\nexit 101\n' > /usr/sbin/policy-rc.d
        chmod 755 /usr/sbin/policy-rc.d
        own_policy=1
    fi
    trap '[ -n "$own_policy" ] && rm -f /usr/sbin/policy-rc.d' EXIT
    apt-get update -qq
    apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
    [ -n "$own_policy" ] && rm -f /usr/sbin/policy-rc.d
    trap - EXIT
else
    log "packages already installed"
fi
done_step "apt install"

# --- 2. dockerd --------------------------------------------------------------
engine_up() { timeout 10 docker info >/dev/null 2>&1; }

start_dockerd() {
    log "starting dockerd $* (log: $DOCKERD_LOG)"
    mkdir -p "$(dirname "$DOCKERD_LOG")"
    # setsid + nohup: dockerd outlives this script and the CI step that ran it.
    setsid nohup dockerd "$@" >>"$DOCKERD_LOG" 2>&1 </dev/null &
    local pid=$! deadline=$((SECONDS + DOCKERD_WAIT_S))
    while [ $SECONDS -lt $deadline ]; do
        engine_up && return 0
        kill -0 "$pid" 2>/dev/null || { log "dockerd exited early:"; tail -n 15 "$DOCKERD_LOG" >&2; return 1; }
        sleep 0.5
    done
    log "dockerd did not answer within ${DOCKERD_WAIT_S}s; stopping it:"
    tail -n 15 "$DOCKERD_LOG" >&2
    kill "$pid" 2>/dev/null || true
    return 1
}

if engine_up; then
    log "docker engine already running"
elif ! start_dockerd; then
    # Some CI kernels lack the netfilter pieces dockerd's default bridge needs;
    # the sandbox runs with network none, so the engine can do without it.
    rm -f /var/run/docker.pid
    start_dockerd --iptables=false --ip6tables=false --bridge=none \
        || die "dockerd would not start; see $DOCKERD_LOG"
    log "WARNING: dockerd runs without iptables and the default bridge"
fi
done_step "dockerd"

# --- 3. image ----------------------------------------------------------------
"$PYTHON" -m cataloger_dagster.cli.sandbox build-image \
    --base "$SANDBOX_BASE" --tag "$SANDBOX_TAG" --debootstrap-base --if-missing --json
done_step "image (base + build)"

# --- 4. smoke checks ---------------------------------------------------------
out=$(docker run --rm --network none "$SANDBOX_TAG" \
    python3 -c "import os, ibis, duckdb, pandas, numpy; print(os.getuid(), ibis.__version__)")
[ "${out%% *}" = 10001 ] || die "sandbox image runs as uid ${out%% *}, expected 10001"
log "image ok: uid and ibis version: $out"
if ! bwrap --unshare-all --die-with-parent --ro-bind / / true 2>/dev/null; then
    log "WARNING: bubblewrap is installed but cannot create namespaces here"
fi
done_step "smoke checks"

log "timings:"
for line in "${TIMINGS[@]}"; do log "  $line"; done
log "$(awk -v a="$T_START" -v b="$(now)" 'BEGIN { printf "  %-28s %7.1fs", "total", b - a }')"
