#!/usr/bin/env bash
# Every test: Rust engine (unit, scenarios, properties, vectors), the WASM build, the same
# vectors through pkg/ in Node 20 and Node 24, then the node package in real n8n.
# Installs what it needs (toolchain, n8n) into ~/.cache; a missing part fails loudly.
source "$(dirname "${BASH_SOURCE[0]}")/lib/common.sh"
cd "$ROOT"

log "1/4 Rust engine tests"
cargo test --quiet --locked 2>&1 | grep -E '^(test result|failures|---- |thread)|panicked' >&2 || true
cargo test --quiet --locked >/dev/null 2>&1 || die "cargo test failed (run: cargo test)"

log "2/4 WASM build"
bash scripts/build-wasm.sh

log "3/4 engine vectors through pkg/ in Node 20 and Node 24"
node --test tests/node/ >&2 || die "Node 20 engine tests failed"
n8n2=$(bash scripts/lib/n8n-install.sh 2)
( source "$n8n2/env.sh" && node --version >&2 && node --test tests/node/ >&2 ) || die "Node 24 engine tests failed"

log "4/4 the node in real n8n"
if [ -f scripts/test-node.sh ]; then bash scripts/test-node.sh; else die "scripts/test-node.sh missing"; fi
log "all tests passed"
