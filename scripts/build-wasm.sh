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
# The ceiling: no larger than issue 57 found the engine (265 kB, after it had been raised fourteen
# times from 150 KB, each round's features paid for in bytes; the history is in git and in
# docs/benchmarks.md). A feature now pays for its bytes by cutting others: docs/engine-size.md
# (`bash scripts/wasm-size-report.sh`) says where they go, module by module. 268 kB since Key
# Quotas (issue 59: a row kind of its own, its limit, its settlement; +10 KB, of which 4.4 KB
# were paid back in the feature itself): the one raise since issue 57, to be paid back.
CEILING=268000
log "pkg/engine_bg.wasm: $size bytes after wasm-opt (ceiling $CEILING bytes)"
[ "$size" -le "$CEILING" ] || die "engine_bg.wasm is $size bytes: over the ceiling of $CEILING bytes (docs/engine-size.md says where they go)"
if [ "${1:-}" = "--replay" ]; then
  log "wasm-pack build --features replay -> target/pkg-replay/ (tests only)"
  wasm-pack build --release --target nodejs --out-dir target/pkg-replay --out-name engine --no-pack -- --features replay >&2
fi
