#!/usr/bin/env bash
# Every test: gates (formatting, lints), the Rust engine (unit, scenarios, properties, vectors, a
# fuzz smoke), the WASM build, the same vectors through pkg/ in Node 20 and Node 24, then the node
# package against real Redis, Postgres and n8n. Installs what it needs (toolchain, n8n, servers)
# into ~/.cache and from Debian; a missing part fails loudly.
# Everything it starts listens on ports chosen at run time; the free default ports (5678, 5679,
# 6379, 5432) are held meanwhile, and the run fails if anything reached for one.
source "$(dirname "${BASH_SOURCE[0]}")/lib/common.sh"
source "$ROOT/scripts/lib/cleanup.sh"
source "$ROOT/scripts/lib/run-services.sh"
source "$ROOT/scripts/lib/default-port-guard.sh"
cd "$ROOT"
started=$SECONDS
# phase "<title>": logs the title, and how long the previous phase took (per-phase times).
PHASE=
phase() {
  [ -z "$PHASE" ] || log "${PHASE%%:*} took $((SECONDS - PHASE_START)) s"
  PHASE=$1
  PHASE_START=$SECONDS
  [ -z "$1" ] || log "$1"
}

# The installs that wait on the network (n8n for both majors from npm, Redis, Postgres and
# Chromium from Debian: ~10 min on a fresh machine) run beside the gates and the Rust build, which
# wait on the CPU; phase 3 waits for them. Cached installs take seconds.
installs_log=$(mktemp)
at_exit "rm -f '$installs_log'"
( bash scripts/lib/n8n-install.sh 2 && bash scripts/lib/n8n-install.sh 1 \
    && bash scripts/lib/services.sh install && bash scripts/lib/browser-install.sh ) >"$installs_log" 2>&1 &
installs_pid=$!
at_exit "kill $installs_pid 2>/dev/null || true"

phase "1/9 gates: the committed engine, formatting, lints, words"
# The committed pkg/ must match its sources before anything rebuilds it (it is what users get).
node scripts/check-pkg-fresh.mjs || die "the committed pkg/ is stale"
cargo fmt --all --check >&2 || die "Rust code is not formatted as rustfmt.toml says (run: cargo fmt --all)"
# npm ci again whenever package-lock.json changed since the last one (a pulled branch may add a
# dev dependency, e.g. puppeteer-core): the stamp is the lock file npm ci installed from.
cmp -s package-lock.json node_modules/.rpc-installed-lock 2>/dev/null \
  || { npm ci --no-audit --no-fund --loglevel=error >&2 && cp package-lock.json node_modules/.rpc-installed-lock; } \
  || die "npm ci failed (above)"
npm run -s format:check >&2 || die "files above are not formatted as .prettierrc.js says (run: npm run format)"
npm run -s lint >&2 || die "n8n's community-node lint failed (npm run -s lint)"
node scripts/check-words.mjs >&2 || die "user-facing text names an incident by number"
cargo clippy --workspace --all-targets --locked --quiet -- -D warnings >&2 \
  || die "clippy warnings above (run: cargo clippy --workspace --all-targets -- -D warnings)"
node scripts/check-module-cycles.mjs >&2 || die "a module cycle in the engine or the simulator (see above)"

phase "2/9 Rust tests"
cargo_log=$(mktemp)
at_exit "rm -f '$cargo_log'"
# What the run's test processes share (the clean-clone tarball of both n8n lanes), gone at its end.
RPC_RUN_DIR=$(mktemp -d "${TMPDIR:-/tmp}/rpc-run.XXXXXX")
export RPC_RUN_DIR
at_exit "rm -rf '$RPC_RUN_DIR'"
# Run once; on success one line per test binary, on failure everything cargo said.
if cargo test --workspace --locked >"$cargo_log" 2>&1; then
  awk '/^ +(Running|Doc-tests) /{ sub(/^ +(Running (unittests )?)?/, ""); sub(/ \(.*/, ""); name = $0 }
       /^test result: /{ sub(/^test result: /, ""); sub(/; 0 measured;.*finished/, ", finished"); printf "  %-30s %s\n", name, $0 }' \
    "$cargo_log" >&2
else
  cat "$cargo_log" >&2
  die "cargo test failed (above)"
fi

phase "3/9 WASM build, the node package; n8n, Redis and Postgres installed (cached)"
timed "WASM build (pkg/)" bash scripts/build-wasm.sh
timed "the node package (dist/)" bash scripts/build-node.sh
# The simulator, for the queue-mode test's prediction.
cargo build --release --quiet --locked -p resilient-simulator
wait "$installs_pid" || { cat "$installs_log" >&2; die "installing n8n, the servers or Chromium failed (above)"; }
log "n8n, servers and Chromium installed (beside phases 1-3)"
n8n2=$(bash scripts/lib/n8n-install.sh 2)

# The test of the test command and the editor's test mostly wait (on servers, n8n's boots, the
# page): they run beside each other and beside the fuzz smoke and the second WASM build (CPU).
phase "4/9 side by side: the test command beside servers on the default ports; the editor in Chromium; the fuzz smoke, the test-only WASM build"
lanes "test command" "timed 'the test command beside taken default ports' node --test tests/test-command/*.test.mjs || die 'the test command does not cope with taken default ports'" \
  "the editor in Chromium" "timed 'the editor in headless Chromium' node --test tests/browser/*.test.mjs || die 'the node in n8n'\''s editor (tests/browser/) failed'" \
  "fuzz smoke, replay build" "timed 'fuzz smoke' bash scripts/fuzz-smoke.sh || die 'fuzz smoke failed (the long run: scripts/fuzz.sh)'
   timed 'WASM build with the test-only exports (target/pkg-replay/)' bash scripts/build-wasm-replay.sh" \
  || die "the test command's test, the editor's test, the fuzz smoke or the replay build failed"

hold_default_ports
services_up

phase "5/9 engine vectors through pkg/ in Node 20 and Node 24"
step node --test tests/engine-wasm/*.test.mjs >&2 || die "Node 20 engine tests failed"
# shellcheck disable=SC2016
step bash -c 'source "$1/env.sh" && node --version && node --test tests/engine-wasm/*.test.mjs' _ "$n8n2" >&2 \
  || die "Node 24 engine tests failed"

phase "6/9 node units"
step node --test tests/node-units/*.test.mjs >&2 || die "node unit tests failed"
# n8n's own package scanner over the packed tarball (tests/scanner/): prints its findings by rule,
# fails on one not in tests/scanner/allowed-findings.json.
step node --test tests/scanner/*.test.mjs >&2 \
  || die "n8n's package scanner: a finding outside tests/scanner/allowed-findings.json"

# The slow part, in four lanes: n8n 2's end-to-end files | n8n 1's | the state stores, then
# the queue-mode clusters | the end-to-end files that mostly wait (minute-long token windows, a
# five-minute outage), both majors. The first two keep both cores busy with n8n's boots; the
# other two mostly wait on real time (a queue run's outage window, the trigger's scrapes), so they
# run beside them instead of after them. Still one queue-mode cluster at a time: two clusters (8
# n8n processes) on 2 cores missed the outage window.
phase "7/9 side by side: the node in real n8n 2; in real n8n 1; state stores against real Redis and Postgres, then queue mode in n8n 2, in n8n 1 and the trigger in n8n 2; the waiting files in both"
lanes "n8n $N8N2_VERSION" "bash scripts/test-node.sh --e2e 2" \
  "n8n $N8N1_VERSION" "bash scripts/test-node.sh --e2e 1" \
  "waiting" "bash scripts/test-node.sh --waiting 2 && bash scripts/test-node.sh --waiting 1" \
  "stores, queue mode" \
  "timed 'state stores' node --test --test-concurrency=1 tests/stores/*.test.mjs || die 'store tests failed'
   bash scripts/test-node.sh --queue 2 || die 'queue-mode tests failed on n8n 2'
   bash scripts/test-node.sh --queue 1 || die 'queue-mode tests failed on n8n 1'
   bash scripts/test-node.sh --trigger 2 || die 'trigger tests failed on n8n 2'" \
  || die "end-to-end, store or queue-mode tests failed"

# How two processes share a scarce vendor's calls, on a machine no other lane is booting n8n on
# (test-node.sh's ALONE says why).
phase "8/9 alone: the fair-share measurements in n8n 2, then in n8n 1"
bash scripts/test-node.sh --alone 2 && bash scripts/test-node.sh --alone 1 \
  || die "the fair-share measurements failed"

phase "9/9 default ports"
assert_default_ports_untouched
phase ""
elapsed=$((SECONDS - started))
log "all tests passed in $((elapsed / 60)) min $((elapsed % 60)) s"
