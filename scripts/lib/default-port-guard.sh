# Sourced after cleanup.sh. While the tests run, the default ports of n8n (5678 main, 5679 task
# broker), Redis (6379) and Postgres (5432) that are free are held by scripts/lib/port-guard.mjs:
# a test that reaches for one fails at once instead of passing on a quiet machine only.
#   hold_default_ports             start the guard (stopped when the script ends)
#   assert_default_ports_untouched fail if a held port received a connection
DEFAULT_PORTS=(5678 5679 6379 5432)

hold_default_ports() {
  local out
  GUARD_DIR=$(mktemp -d "${TMPDIR:-/tmp}/rpc-port-guard.XXXXXX")
  out="$GUARD_DIR/out"
  node "$ROOT/scripts/lib/port-guard.mjs" "$GUARD_DIR/connections" "${DEFAULT_PORTS[@]}" >"$out" &
  GUARD_PID=$!
  at_exit "kill $GUARD_PID 2>/dev/null; rm -rf '$GUARD_DIR'"
  for _ in $(seq 100); do grep -qx ready "$out" 2>/dev/null && break; sleep 0.05; done
  grep -qx ready "$out" || die "the port guard did not start"
  log "default ports: $(grep -v '^ready$' "$out" | paste -sd, - | sed 's/,/, /g')"
}

assert_default_ports_untouched() {
  kill -0 "$GUARD_PID" 2>/dev/null || die "the port guard died: the default ports were not held"
  if [ -s "$GUARD_DIR/connections" ]; then
    cat "$GUARD_DIR/connections" >&2
    die "a test reached for a default port (above): everything must use the ports chosen at run time"
  fi
}
