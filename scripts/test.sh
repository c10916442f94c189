#!/usr/bin/env bash
# Every test: Rust engine (unit, scenarios, properties, vectors, a fuzz smoke), the WASM build, the same
# vectors through pkg/ in Node 20 and Node 24, then the node package in real n8n.
# Installs what it needs (toolchain, n8n) into ~/.cache; a missing part fails loudly.
source "$(dirname "${BASH_SOURCE[0]}")/lib/common.sh"
cd "$ROOT"
# The committed pkg/ must match its sources before anything rebuilds it (what users get).
node scripts/check-pkg-fresh.mjs || die "the committed pkg/ is stale"
[ -x node_modules/.bin/eslint ] || npm ci --no-audit --no-fund --loglevel=error >&2
npm run -s lint || die "n8n's community-node lint failed (npm run -s lint)"
node scripts/check-words.mjs || die "user-facing text names an incident by number"

log "1/5 Rust engine tests"
cargo test --quiet --locked 2>&1 | grep -E '^(test result|failures|---- |thread)|panicked' >&2 || true
cargo test --quiet --locked >/dev/null 2>&1 || die "cargo test failed (run: cargo test)"
bash scripts/fuzz-smoke.sh || die "fuzz smoke failed (the long run: scripts/fuzz.sh)"

log "2/5 WASM build"
bash scripts/build-wasm.sh

log "3/5 engine vectors through pkg/ in Node 20 and Node 24"
node --test tests/node/*.test.mjs >&2 || die "Node 20 engine tests failed"
n8n2=$(bash scripts/lib/n8n-install.sh 2)
( source "$n8n2/env.sh" && node --version >&2 && node --test tests/node/*.test.mjs >&2 ) || die "Node 24 engine tests failed"

log "4/5 state stores against real Redis and Postgres"
bash scripts/build-node.sh
bash scripts/lib/services.sh start
node --test tests/node-unit/*.test.mjs >&2 || die "node unit tests failed"
node --test --test-concurrency=1 tests/stores/*.test.mjs >&2 || die "store tests failed"

log "5/5 the node in real n8n"
bash scripts/test-node.sh
log "all tests passed"
