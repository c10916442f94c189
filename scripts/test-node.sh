#!/usr/bin/env bash
# The node package in real n8n: 2.41.1 (Node 24) and 1.123.81 (Node 20), loopback providers, then
# queue mode. Uses the Redis and Postgres of the calling test command (RPC_REDIS_PORT, RPC_PG_PORT)
# or, run alone, starts its own and stops them at the end.
source "$(dirname "${BASH_SOURCE[0]}")/lib/common.sh"
source "$ROOT/scripts/lib/cleanup.sh"
source "$ROOT/scripts/lib/run-services.sh"
cd "$ROOT"
bash scripts/build-node.sh
[ -n "${RPC_REDIS_PORT:-}" ] && [ -n "${RPC_PG_PORT:-}" ] || services_up
for major in 2 1; do
  bash scripts/lib/n8n-install.sh "$major" >/dev/null
  log "end-to-end in n8n $([ $major = 2 ] && echo "$N8N2_VERSION (Node 24)" || echo "$N8N1_VERSION (Node 20)")"
  N8N_MAJOR=$major step node --test --test-concurrency=1 tests/chat/*.test.mjs tests/e2e/*.test.mjs >&2 || die "end-to-end tests failed on n8n $major"
done
# Queue mode (1 main + 3 workers, Postgres, Bull on Redis): ~3 minutes per major.
cargo build --release --quiet --locked -p resilient-simulator
for major in 2 1; do
  log "queue mode in n8n $major: smoke run of scenarios/queue-smoke.json, a worker SIGKILLed holding the probe"
  N8N_MAJOR=$major step node --test --test-concurrency=1 tests/queue/*.test.mjs >&2 || die "queue-mode tests failed on n8n $major"
done
