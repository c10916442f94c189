#!/usr/bin/env bash
# Builds the n8n package into dist/: TypeScript, icons, codex, and the WASM engine (copied, since
# n8n's community installer runs `npm install --ignore-scripts` and can build nothing).
source "$(dirname "${BASH_SOURCE[0]}")/lib/common.sh"
cd "$ROOT"
[ -f pkg/engine_bg.wasm ] && [ -z "$(find src Cargo.toml -newer pkg/engine_bg.wasm -print -quit)" ] || bash scripts/build-wasm.sh
[ -x node_modules/.bin/tsc ] || npm install --ignore-scripts --no-audit --no-fund --loglevel=error >&2
rm -rf dist
node_modules/.bin/tsc -p tsconfig.json
node_dir=dist/nodes/ResilientProviderCall
cp n8n-node/nodes/ResilientProviderCall/*.svg n8n-node/nodes/ResilientProviderCall/*.json "$node_dir/"
mkdir -p dist/engine
cp pkg/engine.js pkg/engine_bg.wasm pkg/engine.d.ts dist/engine/
log "dist/ built ($(du -sh dist | cut -f1))"
