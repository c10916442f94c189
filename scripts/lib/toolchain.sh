#!/usr/bin/env bash
# Installs what the WASM build needs, from crates.io and npm only (no GitHub downloads here).
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"

rustup target list --installed | grep -qx wasm32-unknown-unknown \
  || rustup target add wasm32-unknown-unknown

have_version() { command -v "$1" >/dev/null && "$1" --version 2>/dev/null | grep -qF "$2"; }

if ! have_version wasm-pack "$WASM_PACK_VERSION"; then
  log "installing wasm-pack $WASM_PACK_VERSION (first run only, ~3 min)"
  cargo install wasm-pack --version "$WASM_PACK_VERSION" --locked --root "$TOOLS"
fi
# wasm-pack uses the wasm-bindgen on PATH only when its version matches the crate's pin exactly.
if ! have_version wasm-bindgen "$WASM_BINDGEN_VERSION"; then
  log "installing wasm-bindgen-cli $WASM_BINDGEN_VERSION (first run only, ~5 min)"
  # --locked first; the registry mirror here lacks webpki-roots 1.0.11 from that lock file, so
  # fall back to resolving against what the registry has (same wasm-bindgen version either way).
  cargo install wasm-bindgen-cli --version "$WASM_BINDGEN_VERSION" --locked --root "$TOOLS" \
    || cargo install wasm-bindgen-cli --version "$WASM_BINDGEN_VERSION" --root "$TOOLS"
fi
if ! have_version wasm-opt "version 132"; then
  log "installing wasm-opt (npm binaryen@$BINARYEN_VERSION)"
  (cd "$TOOLS" && { [ -f package.json ] || echo '{"name":"rpc-tools","private":true}' > package.json; } \
    && npm install --no-audit --no-fund --silent "binaryen@$BINARYEN_VERSION")
fi
