#!/usr/bin/env bash
# Builds the run-worker image (deploy/docker/Dockerfile) that Dagster's DockerRunLauncher
# starts each run in, for tests/e2e/test_docker_run_launcher.py; skipped when the image
# exists from the current sources and pins.  Called from .ci/run after .ci/sandbox.sh,
# which starts the engine and makes the base image.  No registry: the wheels come from
# PyPI on the host, the build runs with network "none".
# Env: PYTHON (default .venv/bin/python), RUN_BASE / RUN_TAG (defaults
# cataloger-base:bookworm / cataloger-run:latest).
set -euo pipefail

cd "$(dirname "$0")/.."
PYTHON=${PYTHON:-.venv/bin/python}
RUN_BASE=${RUN_BASE:-cataloger-base:bookworm}
RUN_TAG=${RUN_TAG:-cataloger-run:latest}
log() { echo "[run_image.sh] $*" >&2; }

start=$(date +%s)
"$PYTHON" -m cataloger_dagster.cli.sandbox build-run-image --base "$RUN_BASE" --tag "$RUN_TAG" --if-missing --json
built=$(date +%s)

# the run worker is not root and runs this package's code location
out=$(docker run --rm --network none "$RUN_TAG" \
    python3 -c "import os, cataloger_dagster.definitions, dagster_docker; print(os.getuid())")
[ "$out" = 10002 ] || { log "ERROR: $RUN_TAG runs as uid $out, expected 10002"; exit 1; }
log "image ok; build $((built - start))s, smoke check $(( $(date +%s) - built ))s"
