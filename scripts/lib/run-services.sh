# Sourced after cleanup.sh. services_up starts this run's own Redis and Postgres (free ports, see
# services.sh), exports RPC_REDIS_PORT / RPC_PG_PORT / RPC_PG_BIN / RPC_SERVICES_DIR for the tests,
# and stops them when the script ends, however it ends.
services_up() {
  local exports
  exports=$(bash "$ROOT/scripts/lib/services.sh" start) || die "could not start Redis and Postgres"
  eval "$exports"
  at_exit "bash '$ROOT/scripts/lib/services.sh' stop '$RPC_SERVICES_DIR'"
}
