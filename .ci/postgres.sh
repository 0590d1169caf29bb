#!/usr/bin/env bash
# Install and start a throwaway PostgreSQL server on loopback for the tests.
# Prints the connection URL as its last line.
set -euo pipefail
PGPORT=${PGPORT:-55432}
PGDATA=${PGDATA:-/tmp/cataloger-pg}
if ! ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1; then
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq postgresql >/dev/null
fi
PGBIN=$(ls -d /usr/lib/postgresql/*/bin | sort -V | tail -1)
if ! "$PGBIN/pg_isready" -h 127.0.0.1 -p "$PGPORT" -q 2>/dev/null; then
  rm -rf "$PGDATA"
  mkdir -p "$PGDATA"
  chown postgres "$PGDATA"
  su postgres -c "$PGBIN/initdb -D $PGDATA -A trust -U postgres >/dev/null"
  su postgres -c "$PGBIN/pg_ctl -D $PGDATA -l $PGDATA/server.log -o '-p $PGPORT -k /tmp -c listen_addresses=127.0.0.1' -w -t 60 start >/dev/null"
fi
for _ in $(seq 1 60); do
  "$PGBIN/pg_isready" -h 127.0.0.1 -p "$PGPORT" -q && break
  sleep 1
done
"$PGBIN/psql" -h 127.0.0.1 -p "$PGPORT" -U postgres -tAc "SELECT 1 FROM pg_database WHERE datname='cataloger_test'" | grep -q 1 \
  || "$PGBIN/psql" -h 127.0.0.1 -p "$PGPORT" -U postgres -c "CREATE DATABASE cataloger_test" >/dev/null
echo "postgres://postgres@127.0.0.1:$PGPORT/cataloger_test"
