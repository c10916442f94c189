#!/usr/bin/env bash
# Builds the Rust engine into pkg/ (wasm-pack, --target nodejs), installing the toolchain first,
# and regenerates the node's engine constants (n8n-node/lib/engineConstants.ts) from its defaults.
#   build-wasm.sh            pkg/ (what the package ships)
#   build-wasm.sh --replay   also target/pkg-replay/: the same engine with its test-only exports
source "$(dirname "${BASH_SOURCE[0]}")/lib/common.sh"
bash "$ROOT/scripts/lib/toolchain.sh"
cd "$ROOT"
log "wasm-pack build --release --target nodejs -> pkg/"
wasm-pack build --release --target nodejs --out-dir pkg --out-name engine --no-pack >&2
rm -f pkg/.gitignore
cargo run --quiet --locked --bin engine-constants
node scripts/check-pkg-fresh.mjs --write   # pkg/SOURCE_HASH: what this build was made from
size=$(stat -c %s pkg/engine_bg.wasm)
log "pkg/engine_bg.wasm: $size bytes ($((size / 1024)) KB) after wasm-opt (target <= 260 KB)"
# The ceiling (issue 10; raised from 150 KB by issue 25: n8n's error texts and the reading of raw
# error facts moved from the node into the engine, ~6 KB; to 156 KB by issue 27: the compare-and-set
# verdict and the provider defaults moved from the node, ~0.5 KB; to 160 KB by issue 28: the LLM
# vendors' own hints, retry-after-ms, OpenAI/Groq Go-duration and Anthropic RFC 3339 resets,
# Gemini's retryDelay in a 429's body, ~4.3 KB; to 176 KB by issue 29: routing by tier, weight,
# calls in flight and latency, the drained reason, the item's route in its run data and the
# latency row, ~11.6 KB; to 184 KB by issue 31: the retry budget's row and its sampled deposits,
# ~5.2 KB; to 192 KB by issue 30: hedged requests, several calls out per item, the hedge and
# abandon crossings, ~12.6 KB; to 196 KB by issue 29 again: streamed calls' time to first chunk
# in a lane of its own, the commit crossing that carries it, Get Provider State's view of it,
# ~3.2 KB; to 204 KB by issue 39: Item Concurrency Auto's windows and lines, the pool and its
# crossings, waiting in line, ~7 KB; to 212 KB by issue 40: the answer checks' facts and
# verdicts, content-policy wordings, per-check counters and their metric family, the checks an
# answer passed and its schema errors in the run data, ~8 KB; to 216 KB by issue 39: the window
# learned for the fleet, its row of its own, Get Provider State's and Get Metrics' view of it,
# ~4 KB; to 232 KB by issue 41: the fleet's learned limit split into workers' shares, the seats
# that spend them across executions, their leases, the cut and growth rules, the leave crossing,
# the fleet_limit reason and the calls-in-flight gauge, ~16 KB; to 248 KB by issue 42: token and
# spend limits, their row of its own (a minute of buckets and the period's spend), the estimate,
# reservation and settlement at usage, the vendors' remaining-token headers, prices and UTC
# periods, the tokens crossing and the outcome's usage, four metric families, ~16.5 KB after
# dropping a std sort and a string slice that cost 11 KB more; to 252 KB by issue 43: a broken
# stream's continuation, its call step and the characters in its attempt's log, ~2.2 KB; and by
# issue 44: the latency gauges, the store's families and its fall-backs counted by scope, ~2.9 KB;
# to 256 KB when the continuation's seam (what a continuing model repeats) moved from the node into
# the engine, its crossing and UTF-16 reading, ~2 KB; to 260 KB by issue 42 again: input and output
# tokens per minute kept apart as Anthropic limits them, two more windows in the tokens row, their
# headers, fields and what is left of each, ~3.1 KB, and the limits a tokens row was written
# under, which Get Provider State reads what is left of, ~2.2 KB):
# docs/benchmarks.md "Engine decisions" says where the bytes went.
[ "$size" -le $((260 * 1024)) ] || die "engine_bg.wasm is $size bytes: over the 260 KB ceiling ($((260 * 1024)) bytes)"
if [ "${1:-}" = "--replay" ]; then
  log "wasm-pack build --features replay -> target/pkg-replay/ (tests only)"
  wasm-pack build --release --target nodejs --out-dir target/pkg-replay --out-name engine --no-pack -- --features replay >&2
fi
