#!/usr/bin/env bash
# Prints where the engine's WASM bytes go, by engine folder, module and dependency crate, and
# writes it to docs/engine-size.md (issue 57). Builds the engine as wasm-pack's release build does,
# with the function names kept so that twiggy (crates.io) can name each function's bytes.
#   wasm-size-report.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib/common.sh"
bash "$ROOT/scripts/lib/toolchain.sh"   # wasm32 target, wasm-bindgen, wasm-opt
TWIGGY_VERSION="0.8.0"
if ! { command -v twiggy >/dev/null && twiggy --version | grep -qF "$TWIGGY_VERSION"; }; then
  log "installing twiggy $TWIGGY_VERSION (first run only)"
  cargo install twiggy --version "$TWIGGY_VERSION" --locked --root "$TOOLS"
fi
cd "$ROOT"

# wasm-opt's flags as wasm-pack passes them: [package.metadata.wasm-pack.profile.release] wasm-opt.
mapfile -t opt_flags < <(node -e '
  const toml = require("fs").readFileSync("Cargo.toml", "utf8");
  const section = toml.split(/^\[package\.metadata\.wasm-pack\.profile\.release\]\s*$/m)[1]?.split(/^\[/m)[0] ?? "";
  const list = section.match(/^wasm-opt\s*=\s*\[([\s\S]*?)\]/m);
  if (!list) { console.error("Cargo.toml: no wasm-opt list in [package.metadata.wasm-pack.profile.release]"); process.exit(1); }
  for (const [, flag] of list[1].replace(/#.*$/gm, "").matchAll(/"([^"]*)"/g)) console.log(flag);')
[ "${#opt_flags[@]}" -gt 0 ] || die "no wasm-opt flags read from Cargo.toml"

log "cargo build --release --lib --target wasm32-unknown-unknown"
cargo build --quiet --locked --release --lib --target wasm32-unknown-unknown
target_dir=$(cargo metadata --format-version 1 --no-deps | node -e 'let s="";process.stdin.on("data",d=>s+=d).on("end",()=>console.log(JSON.parse(s).target_directory))')
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
wasm-bindgen "$target_dir/wasm32-unknown-unknown/release/resilient_engine.wasm" \
  --out-dir "$tmp" --out-name engine --target nodejs --keep-debug
log "wasm-opt ${opt_flags[*]} -g"
wasm-opt "$tmp/engine_bg.wasm" -o "$tmp/named.wasm" "${opt_flags[@]}" -g
twiggy top -n 100000 --format csv "$tmp/named.wasm" > "$tmp/top.csv"
node scripts/wasm-size-report.mjs "$tmp/top.csv" "$tmp/named.wasm" pkg/engine_bg.wasm \
  docs/engine-size.md "bash scripts/wasm-size-report.sh"
log "wrote docs/engine-size.md"
