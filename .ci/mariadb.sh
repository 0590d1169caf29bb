#!/usr/bin/env bash
# Install and start a throwaway MariaDB server on loopback for the tests.
# Prints the connection URL as its last line.
set -euo pipefail
MYSQL_PORT=${MYSQL_PORT:-53306}
MYSQL_DATA=${MYSQL_DATA:-/tmp/cataloger-mariadb}
# a test password, in the URL on purpose: the suite checks that it never shows
DBUSER=cataloger PASSWORD=cataloger-test-pw DATABASE=cataloger_test
if ! command -v mariadbd >/dev/null 2>&1; then
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq mariadb-server >/dev/null
fi
SOCKET=$MYSQL_DATA/mysqld.sock
admin() { mariadb --protocol=socket -S "$SOCKET" -u root "$@"; }
if ! admin -e 'SELECT 1' >/dev/null 2>&1; then
  rm -rf "$MYSQL_DATA"
  mkdir -p "$MYSQL_DATA"
  chown mysql:mysql "$MYSQL_DATA"
  # root logs in through the socket only (unix_socket auth); the tests use $DBUSER over TCP
  mariadb-install-db --no-defaults --user=mysql --datadir="$MYSQL_DATA/data" --skip-test-db \
    --auth-root-authentication-method=socket >/dev/null
  # setsid: the server outlives this script (as pg_ctl's does)
  setsid mariadbd --no-defaults --user=mysql --datadir="$MYSQL_DATA/data" \
    --socket="$SOCKET" --pid-file="$MYSQL_DATA/mariadbd.pid" --log-error="$MYSQL_DATA/server.log" \
    --bind-address=127.0.0.1 --port="$MYSQL_PORT" --skip-name-resolve \
    --character-set-server=utf8mb4 --collation-server=utf8mb4_general_ci \
    --innodb-buffer-pool-size=64M --skip-log-bin </dev/null >/dev/null 2>&1 &
fi
for _ in $(seq 1 60); do
  admin -e 'SELECT 1' >/dev/null 2>&1 && break
  sleep 1
done
admin -e 'SELECT 1' >/dev/null || { cat "$MYSQL_DATA/server.log" >&2; exit 1; }
# the tests create and drop a database of their own per loaded corpus, hence ALL on *.*
admin -e "CREATE USER IF NOT EXISTS '$DBUSER'@'127.0.0.1' IDENTIFIED BY '$PASSWORD';
          GRANT ALL PRIVILEGES ON *.* TO '$DBUSER'@'127.0.0.1';
          CREATE DATABASE IF NOT EXISTS $DATABASE"
echo "mysql://$DBUSER:$PASSWORD@127.0.0.1:$MYSQL_PORT/$DATABASE"
