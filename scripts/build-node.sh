#!/usr/bin/env bash
# Builds the n8n package into dist/: TypeScript, icons, codex, and the WASM engine (copied, since
# n8n's community installer runs `npm install --ignore-scripts` and can build nothing).
source "$(dirname "${BASH_SOURCE[0]}")/lib/common.sh"
cd "$ROOT"
# pkg/ is committed: rebuild it (needs Rust) only when its recorded source hash no longer matches.
node scripts/check-pkg-fresh.mjs --quiet || bash scripts/build-wasm.sh
[ -x node_modules/.bin/tsc ] || npm install --ignore-scripts --no-audit --no-fund --loglevel=error >&2
rm -rf dist
node_modules/.bin/tsc -p tsconfig.json
for node in ResilientProviderCall ResilientProviderTrigger ResilientChatModel; do
  cp n8n-node/nodes/$node/*.svg n8n-node/nodes/$node/*.json "dist/nodes/$node/"
done
cp n8n-node/credentials/*.svg dist/credentials/
# The engine's .d.ts files serve type checking here only; the package ships one JS file with the
# .wasm bytes inside (loaded without fs, path or __dirname: n8n's package scanner).
node scripts/embed-engine.mjs pkg dist/engine/engine.js
log "dist/ built ($(du -sh dist | cut -f1))"
