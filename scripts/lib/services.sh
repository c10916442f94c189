#!/usr/bin/env bash
# Real Redis and Postgres servers on loopback ports of our own, for the store tests.
#   services.sh start | stop        (installs redis-server / postgresql / faketime from Debian if missing)
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
RUN="${RPC_RUN_DIR:-/tmp/rpc-services}"
REDIS_PORT="${RPC_REDIS_PORT:-16379}"
PG_PORT="${RPC_PG_PORT:-15432}"
PGBIN=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1 || true)

install_missing() {
  local want=()
  command -v redis-server >/dev/null || want+=(redis-server)
  [ -n "$PGBIN" ] && [ -x "$PGBIN/initdb" ] || want+=(postgresql)
  # libfaketime: the clock-skew test runs n8n processes 30 s ahead and behind.
  [ -e /usr/lib/x86_64-linux-gnu/faketime/libfaketime.so.1 ] || want+=(faketime)
  if [ ${#want[@]} -gt 0 ]; then
    log "installing ${want[*]} from Debian"
    (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${want[@]}") >&2 || die "apt-get install ${want[*]} failed"
    PGBIN=$(ls -d /usr/lib/postgresql/*/bin | sort -V | tail -1)
  fi
}

start() {
  install_missing
  mkdir -p "$RUN"
  if ! redis-cli -p "$REDIS_PORT" ping >/dev/null 2>&1; then
    redis-server --bind 127.0.0.1 --port "$REDIS_PORT" --save "" --appendonly no --daemonize yes \
      --pidfile "$RUN/redis.pid" --logfile "$RUN/redis.log" --dir "$RUN" >&2
  fi
  if ! "$PGBIN/pg_isready" -h 127.0.0.1 -p "$PG_PORT" -q 2>/dev/null; then
    id postgres >/dev/null 2>&1 || useradd -r -m postgres
    rm -rf "$RUN/pg"; mkdir -p "$RUN/pg"; chown -R postgres "$RUN"
    # initdb and pg_ctl refuse to run as root.
    runuser -u postgres -- "$PGBIN/initdb" -D "$RUN/pg/data" -U postgres --auth=trust -E UTF8 >/dev/null
    runuser -u postgres -- "$PGBIN/pg_ctl" -D "$RUN/pg/data" -l "$RUN/pg/log" -w \
      -o "-p $PG_PORT -k $RUN/pg -c listen_addresses=127.0.0.1 -c fsync=off -c max_connections=200" start >/dev/null
    "$PGBIN/psql" -h 127.0.0.1 -p "$PG_PORT" -U postgres -qc "CREATE DATABASE rpc" >/dev/null
  fi
  for _ in $(seq 50); do redis-cli -p "$REDIS_PORT" ping >/dev/null 2>&1 && break; sleep 0.1; done
  redis-cli -p "$REDIS_PORT" ping >/dev/null || die "redis-server did not start on $REDIS_PORT"
  "$PGBIN/pg_isready" -h 127.0.0.1 -p "$PG_PORT" -q || die "postgres did not start on $PG_PORT"
  log "redis on 127.0.0.1:$REDIS_PORT, postgres on 127.0.0.1:$PG_PORT (db rpc)"
}

stop() {
  [ -f "$RUN/redis.pid" ] && kill "$(cat "$RUN/redis.pid")" 2>/dev/null || true
  [ -d "$RUN/pg/data" ] && runuser -u postgres -- "$PGBIN/pg_ctl" -D "$RUN/pg/data" -m fast stop >/dev/null 2>&1 || true
}

case "${1:-start}" in
  start) start ;;
  stop) stop ;;
  *) die "usage: services.sh start|stop" ;;
esac
