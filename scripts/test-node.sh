#!/usr/bin/env bash
# The node package in real n8n: 2.41.1 (Node 24) and 1.123.81 (Node 20), loopback providers, then
# queue mode. Uses the Redis and Postgres of the calling test command (RPC_REDIS_PORT, RPC_PG_PORT)
# or, run alone, starts its own and stops them at the end.
#   test-node.sh              both majors' end-to-end files side by side (a lane each and one for
#                             the waiting files, see `lanes` in lib/cleanup.sh), then the
#                             measurements run alone, then queue mode in n8n 2, then in n8n 1
#   test-node.sh --e2e N      one major's end-to-end files (one at a time) but the waiting ones
#   test-node.sh --waiting N  one major's end-to-end files that mostly wait (WAITING below)
#   test-node.sh --alone N    one major's measurements that need the machine to themselves (ALONE)
#   test-node.sh --queue N    one major's queue-mode test
#   test-node.sh --trigger 2  the trigger and Get Metrics in queue mode with Prometheus (n8n 2)
# The end-to-end files mostly wait on n8n's boots and on timers, so the two majors share the two
# cores well. Queue mode runs one cluster at a time: its outage is a real-time window, and two
# clusters (8 n8n processes) on 2 cores missed it.
source "$(dirname "${BASH_SOURCE[0]}")/lib/common.sh"
source "$ROOT/scripts/lib/cleanup.sh"
source "$ROOT/scripts/lib/run-services.sh"
cd "$ROOT"

# End-to-end files that spend minutes waiting on real time with little to do: token windows of a
# minute, a five-minute outage, a batch paced by a vendor that takes 4 calls at once.
WAITING="tests/e2e/token-limits.test.mjs tests/e2e/chat-minutes.test.mjs tests/e2e/chat-beside-batch.test.mjs"
# Measurements of how the vendor's calls are shared between n8n processes that each keep more
# calls waiting than the vendor takes: beside the other lanes' n8n boots on 2 cores, a process
# starved of CPU for seconds cannot send the calls its share allows (5-second windows at 35 % in
# CI; locally under load the polled `limit` row split the slots evenly meanwhile), so they run
# after the lanes, alone.
ALONE="tests/e2e/fair-share.test.mjs tests/e2e/fair-share-queue.test.mjs"

if [ $# -eq 2 ]; then
  major=$2
  name=$([ "$major" = 2 ] && echo "$N8N2_VERSION (Node 24)" || echo "$N8N1_VERSION (Node 20)")
  bash scripts/lib/n8n-install.sh "$major" >/dev/null
  case $1 in
    # One file at a time, each timed: the log says which file the lane's minutes went to.
    # --e2e runs every end-to-end file but those that mostly wait on real time (WAITING), which
    # --waiting runs, so that test.sh can give them a lane of their own beside the others.
    --e2e | --waiting | --alone)
      e2e_files() {
        local f rc=0 kind
        for f in tests/chat/*.test.mjs tests/e2e/*.test.mjs; do
          kind=--e2e
          [[ " $WAITING " == *" $f "* ]] && kind=--waiting
          [[ " $ALONE " == *" $f "* ]] && kind=--alone
          [ "$kind" = "$1" ] || continue
          timed "  ${f#tests/}" node --test "$f" || rc=1
        done
        return "$rc"
      }
      export N8N_MAJOR=$major
      case $1 in
        --waiting) what="the waiting end-to-end files" ;;
        --alone) what="the end-to-end measurements run alone" ;;
        *) what="end-to-end" ;;
      esac
      timed "$what in n8n $name" e2e_files "$1" \
        || die "end-to-end tests failed on n8n $major" ;;
    # Queue mode (1 main + 3 workers, Postgres, Bull on Redis): a smoke run of
    # scenarios/queue-smoke.json, a worker SIGKILLed holding the probe.
    --queue)
      N8N_MAJOR=$major timed "queue mode in n8n $name" node --test --test-concurrency=1 tests/queue/*.test.mjs \
        || die "queue-mode tests failed on n8n $major" ;;
    # The trigger and Get Metrics in queue mode on Redis and Postgres at once, a second main, a
    # real Prometheus: n8n 2 only (n8n 1 runs them in tests/e2e/trigger-memory.test.mjs).
    --trigger)
      N8N_MAJOR=$major timed "trigger and metrics in n8n $name queue mode" node --test --test-concurrency=1 tests/trigger/*.test.mjs \
        || die "trigger tests failed on n8n $major" ;;
    *) die "usage: test-node.sh [--e2e N | --waiting N | --alone N | --queue N | --trigger 2]" ;;
  esac
  exit 0
fi

bash scripts/build-node.sh
[ -n "${RPC_REDIS_PORT:-}" ] && [ -n "${RPC_PG_PORT:-}" ] || services_up
# The queue-mode test compares the run with the simulator's prediction.
cargo build --release --quiet --locked -p resilient-simulator
lanes "n8n 2" "bash scripts/test-node.sh --e2e 2" "n8n 1" "bash scripts/test-node.sh --e2e 1" \
  "waiting" "bash scripts/test-node.sh --waiting 2 && bash scripts/test-node.sh --waiting 1" \
  || die "end-to-end tests failed"
bash scripts/test-node.sh --alone 2
bash scripts/test-node.sh --alone 1
bash scripts/test-node.sh --queue 2
bash scripts/test-node.sh --queue 1
bash scripts/test-node.sh --trigger 2
