#!/usr/bin/env bash
# The node package in real n8n: 2.41.1 (Node 24) and 1.123.81 (Node 20), loopback providers, then
# queue mode. Uses the Redis and Postgres of the calling test command (RPC_REDIS_PORT, RPC_PG_PORT)
# or, run alone, starts its own and stops them at the end.
#   test-node.sh              both majors side by side (two lanes, see `lanes` in lib/cleanup.sh)
#   test-node.sh --major N    one major: its end-to-end tests, then its queue-mode test
# The end-to-end files mostly wait on n8n's boots and on timers, so the two majors share the two
# cores well; within a major the files run one at a time.
source "$(dirname "${BASH_SOURCE[0]}")/lib/common.sh"
source "$ROOT/scripts/lib/cleanup.sh"
source "$ROOT/scripts/lib/run-services.sh"
cd "$ROOT"

if [ "${1:-}" = --major ]; then
  major=$2
  name=$([ "$major" = 2 ] && echo "$N8N2_VERSION (Node 24)" || echo "$N8N1_VERSION (Node 20)")
  bash scripts/lib/n8n-install.sh "$major" >/dev/null
  N8N_MAJOR=$major timed "end-to-end in n8n $name" node --test --test-concurrency=1 tests/e2e/*.test.mjs \
    || die "end-to-end tests failed on n8n $major"
  # Queue mode (1 main + 3 workers, Postgres, Bull on Redis): a smoke run of
  # scenarios/queue-smoke.json, a worker SIGKILLed holding the probe.
  N8N_MAJOR=$major timed "queue mode in n8n $name" node --test --test-concurrency=1 tests/queue/*.test.mjs \
    || die "queue-mode tests failed on n8n $major"
  exit 0
fi

bash scripts/build-node.sh
[ -n "${RPC_REDIS_PORT:-}" ] && [ -n "${RPC_PG_PORT:-}" ] || services_up
# The queue-mode test compares the run with the simulator's prediction.
cargo build --release --quiet --locked -p resilient-simulator
lanes "n8n 2" "bash scripts/test-node.sh --major 2" "n8n 1" "bash scripts/test-node.sh --major 1" \
  || die "tests in real n8n failed"
