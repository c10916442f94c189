#!/usr/bin/env bash
# Real Redis and Postgres servers for the tests and benchmarks, each run its own: free loopback
# ports, a fresh run directory, never a server that was already there (it could be a user's own).
#   eval "$(services.sh start)"       starts both; prints the exports RPC_SERVICES_DIR,
#                                     RPC_REDIS_PORT, RPC_PG_PORT, RPC_PG_BIN
#   services.sh stop <run dir>        stops the servers of that run and removes its directory
#   services.sh install               only installs what is missing
# Installs redis-server / postgresql / faketime / prometheus from Debian if missing. Scripts that start
# servers stop them with a trap: scripts/lib/run-services.sh.
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
MARK=.rpc-services # in every run directory this script made; stop refuses any other

pg_bin() { ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1; }

install_missing() {
  local want=() bin
  bin=$(pg_bin)
  command -v redis-server >/dev/null || want+=(redis-server)
  [ -n "$bin" ] && [ -x "$bin/initdb" ] || want+=(postgresql)
  # libfaketime: the clock-skew test runs n8n processes 30 s ahead and behind.
  [ -e /usr/lib/x86_64-linux-gnu/faketime/libfaketime.so.1 ] || want+=(faketime)
  # Prometheus scrapes Get Metrics in the trigger test (it starts its own on a free port).
  command -v prometheus >/dev/null || want+=(prometheus)
  if [ ${#want[@]} -gt 0 ]; then
    log "installing ${want[*]} from Debian"
    (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${want[@]}") >&2 \
      || die "apt-get install ${want[*]} failed"
  fi
}

start() {
  install_missing
  local pgbin redis_port pg_port
  pgbin=$(pg_bin)
  run=$(mktemp -d "${TMPDIR:-/tmp}/rpc-services.XXXXXX") # global: the EXIT trap below reads it
  chmod 755 "$run" # the postgres user must reach its data directory inside
  touch "$run/$MARK"
  # Half-started is stopped too: a failed start leaves nothing running.
  trap 'stop "$run"' EXIT
  read -r redis_port pg_port < <(node "$ROOT/tests/support/ports.mjs" 2)

  redis-server --bind 127.0.0.1 --port "$redis_port" --save "" --appendonly no --daemonize yes \
    --pidfile "$run/redis.pid" --logfile "$run/redis.log" --dir "$run" >&2
  for _ in $(seq 50); do redis-cli -p "$redis_port" ping >/dev/null 2>&1 && break; sleep 0.1; done
  redis-cli -p "$redis_port" ping >/dev/null 2>&1 || die "redis-server did not start on $redis_port (log: $run/redis.log)"

  id postgres >/dev/null 2>&1 || useradd -r -m postgres
  mkdir -p "$run/pg" && chown -R postgres "$run/pg"
  # initdb and pg_ctl refuse to run as root.
  runuser -u postgres -- "$pgbin/initdb" -D "$run/pg/data" -U postgres --auth=trust -E UTF8 --no-sync >/dev/null
  runuser -u postgres -- "$pgbin/pg_ctl" -D "$run/pg/data" -l "$run/pg/log" -w -t 30 \
    -o "-p $pg_port -k $run/pg -c listen_addresses=127.0.0.1 -c fsync=off -c max_connections=200" start >/dev/null \
    || die "postgres did not start on $pg_port (log: $run/pg/log)"
  "$pgbin/psql" -h 127.0.0.1 -p "$pg_port" -U postgres -qc "CREATE DATABASE rpc" >/dev/null

  trap - EXIT
  log "redis on 127.0.0.1:$redis_port, postgres on 127.0.0.1:$pg_port (db rpc), run dir $run"
  printf 'export RPC_SERVICES_DIR=%q RPC_REDIS_PORT=%q RPC_PG_PORT=%q RPC_PG_BIN=%q\n' \
    "$run" "$redis_port" "$pg_port" "$pgbin"
}

# Waits up to ~5 s for a PID to end, then kills it.
reap() {
  for _ in $(seq 50); do kill -0 "$1" 2>/dev/null || return 0; sleep 0.1; done
  kill -KILL "$1" 2>/dev/null || true
}

stop() {
  local run="${1:-}" pid
  [ -n "$run" ] && [ -f "$run/$MARK" ] || die "services.sh stop: '$run' is not a run directory of services.sh"
  if [ -f "$run/redis.pid" ]; then
    pid=$(cat "$run/redis.pid")
    kill "$pid" 2>/dev/null && reap "$pid"
  fi
  if [ -f "$run/pg/data/postmaster.pid" ]; then
    pid=$(head -1 "$run/pg/data/postmaster.pid")
    runuser -u postgres -- "$(pg_bin)/pg_ctl" -D "$run/pg/data" -m immediate stop >/dev/null 2>&1 || kill "$pid" 2>/dev/null || true
    reap "$pid"
  fi
  rm -rf "$run"
}

case "${1:-}" in
  start) start ;;
  stop) stop "${2:-}" ;;
  install) install_missing ;;
  *) die "usage: services.sh start | stop <run dir> | install" ;;
esac
