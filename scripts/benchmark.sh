#!/usr/bin/env bash
# The benchmark (longer than the test command; ~25 minutes on 2 cores, most of it the 3 real runs):
#   1. the what-if simulator on the four incident scenarios (docs/incidents.md): a table each, plots in docs/plots;
#      then simulate_concurrency (fixed, per-process and shared concurrency), simulate_priority and simulate_tokens
#   2. the real run, 3 times: scenarios/queue-compressed.json in n8n queue mode (1 main + 3 workers,
#      Redis store, Postgres database), every policy, beside the simulator's prediction.
#      Each cell is the spread over the 3 runs; agree counts the runs within the tolerance.
#   3. per-item overhead: 1000 items through n8n's HTTP Request node and this node (memory and
#      Redis stores) in one execution, best of 3 (scripts/bench-overhead.mjs).
#   bash scripts/benchmark.sh [--n8n 1|2]
source "$(dirname "${BASH_SOURCE[0]}")/lib/common.sh"
source "$ROOT/scripts/lib/cleanup.sh"
source "$ROOT/scripts/lib/run-services.sh"
cd "$ROOT"
major=2
[ "${1:-}" = "--n8n" ] && major="${2:-2}"
mkdir -p docs/plots
log "building the simulator"
cargo build --release --quiet --locked -p resilient-simulator
for s in vendor-blip-40-workers dead-llm-provider dead-provider-fleet partner-api-100-per-minute probe-storm queue-compressed; do
  log "simulator: scenarios/$s.json"
  target/release/simulate "scenarios/$s.json" --svg "docs/plots/$s.svg"
  echo
done
log "simulator: concurrency (fixed, per process, shared) and tokens per minute"
target/release/simulate_concurrency
echo
target/release/simulate_priority
echo
target/release/simulate_tokens
echo
bash scripts/build-node.sh
services_up # its own Redis and Postgres on free ports, stopped at the end
bash scripts/lib/n8n-install.sh "$major" >/dev/null
log "real run in n8n $major queue mode, 3 runs: scenarios/queue-compressed.json"
node scripts/bench-queue.mjs scenarios/queue-compressed.json --n8n "$major" --runs 3 \
  --svg docs/plots/queue-compressed-real.svg --json "$CACHE/queue-compressed-real.json"
log "per-item overhead in n8n $major: HTTP Request node vs this node (memory, Redis store)"
node scripts/bench-overhead.mjs --n8n "$major"
