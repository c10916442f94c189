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
# The JSON Schema validator (Answer Check) ships inside dist: no runtime dependency for n8n Cloud's
# rule, and its CommonJS build has no dependency of its own.
schema_src=node_modules/@cfworker/json-schema
mkdir -p dist/vendor/json-schema
# (its dist/commonjs/package.json, {"type": "commonjs"}, stays behind: this package is CommonJS, and
# n8n's scanner reads every package.json as a community package's)
cp "$schema_src"/dist/commonjs/*.js dist/vendor/json-schema/
cat > dist/vendor/json-schema/LICENSE <<'MIT'
@cfworker/json-schema (https://github.com/cfworker/cfworker), MIT License

Copyright (c) Jeremy Danyow

Permission is hereby granted, free of charge, to any person obtaining a copy of this software and
associated documentation files (the "Software"), to deal in the Software without restriction,
including without limitation the rights to use, copy, modify, merge, publish, distribute,
sublicense, and/or sell copies of the Software, and to permit persons to whom the Software is
furnished to do so, subject to the following conditions:

The above copyright notice and this permission notice shall be included in all copies or
substantial portions of the Software.

THE SOFTWARE IS PROVIDED "AS IS", WITHOUT WARRANTY OF ANY KIND, EXPRESS OR IMPLIED, INCLUDING BUT
NOT LIMITED TO THE WARRANTIES OF MERCHANTABILITY, FITNESS FOR A PARTICULAR PURPOSE AND
NONINFRINGEMENT. IN NO EVENT SHALL THE AUTHORS OR COPYRIGHT HOLDERS BE LIABLE FOR ANY CLAIM,
DAMAGES OR OTHER LIABILITY, WHETHER IN AN ACTION OF CONTRACT, TORT OR OTHERWISE, ARISING FROM, OUT
OF OR IN CONNECTION WITH THE SOFTWARE OR THE USE OR OTHER DEALINGS IN THE SOFTWARE.
MIT
log "dist/ built ($(du -sh dist | cut -f1))"
