#!/usr/bin/env bash
# target/pkg-replay/ alone: the engine with its test-only exports (feature `replay`), for
# tests/engine-wasm. The same build as `build-wasm.sh --replay` without rebuilding pkg/, so the
# test command can run it beside another step. (A separate script: build-wasm.sh is one of the
# inputs pkg/SOURCE_HASH covers.)
source "$(dirname "${BASH_SOURCE[0]}")/lib/common.sh"
bash "$ROOT/scripts/lib/toolchain.sh"
cd "$ROOT"
log "wasm-pack build --features replay -> target/pkg-replay/ (tests only)"
wasm-pack build --release --target nodejs --out-dir target/pkg-replay --out-name engine --no-pack -- --features replay >&2
