#!/usr/bin/env bash
# Builds the Rust engine into pkg/ (wasm-pack, --target nodejs), installing the toolchain first.
source "$(dirname "${BASH_SOURCE[0]}")/lib/common.sh"
bash "$ROOT/scripts/lib/toolchain.sh"
cd "$ROOT"
log "wasm-pack build --release --target nodejs -> pkg/"
wasm-pack build --release --target nodejs --out-dir pkg --out-name engine --no-pack >&2
rm -f pkg/.gitignore
node scripts/check-pkg-fresh.mjs --write   # pkg/SOURCE_HASH: what this build was made from
size=$(stat -c %s pkg/engine_bg.wasm)
log "pkg/engine_bg.wasm: $((size / 1024)) KB after wasm-opt"
# The target is 150 KB; serde's per-type code keeps it above that today (README: Benchmarks).
[ "$size" -le $((150 * 1024)) ] || log "note: engine_bg.wasm is over the 150 KB target"
[ "$size" -le $((400 * 1024)) ] || die "engine_bg.wasm is $size bytes: something pulled in far more code"
