#!/usr/bin/env bash
# Runs "$@" as a newcomer's machine would: no service URL, and bubblewrap, Docker and chromium
# absent even where this machine has them.  The binaries are hidden by a PATH whose directories
# holding them are replaced by copies of those directories (symbolic links) without them; the
# Docker engine is out of reach because DOCKER_HOST names a socket that does not exist (the
# Docker client's own variable: the tests' fixtures then meet an engine that does not answer).
#
#   bash .ci/without_services.sh .venv/bin/python -m pytest -m "postgres or mysql" ...
set -euo pipefail
HIDDEN=(bwrap docker dockerd chromium chromium-browser dbt)

shadows=$(mktemp -d)
trap 'rm -rf "$shadows"' EXIT

path=""
n=0
IFS=: read -ra dirs <<<"$PATH"
for dir in "${dirs[@]}"; do
  [ -n "$dir" ] && [ -d "$dir" ] || continue
  holds=""
  for name in "${HIDDEN[@]}"; do
    [ -e "$dir/$name" ] && holds=1
  done
  if [ -z "$holds" ]; then
    path="$path${path:+:}$dir"   # kept as it is: a virtualenv's bin must stay where it is
    continue
  fi
  n=$((n + 1))
  copy="$shadows/$n"
  mkdir "$copy"
  for exe in "$dir"/* "$dir"/.[!.]*; do
    [ -e "$exe" ] || continue
    name=${exe##*/}
    for hidden in "${HIDDEN[@]}"; do
      [ "$name" = "$hidden" ] && continue 2
    done
    ln -s "$exe" "$copy/$name"
  done
  path="$path${path:+:}$copy"
done

unset CATALOGER_TEST_POSTGRES_URL CATALOGER_TEST_MYSQL_URL CATALOGER_CHROMIUM
export PATH="$path" DOCKER_HOST="unix://$shadows/no-docker-engine.sock"
for name in "${HIDDEN[@]}"; do
  if command -v "$name" >/dev/null; then
    echo "without_services.sh: $name is still on PATH at $(command -v "$name")" >&2
    exit 1
  fi
done
# not exec: the trap removes the copies once the command ends
"$@"
