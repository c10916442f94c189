# Shared settings for the scripts. Tool and n8n installs are cached outside the repo so a
# second run (and CI on a warm machine) does not rebuild them.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
CACHE="${RPC_CACHE:-$HOME/.cache/n8n-nodes-resilient-provider-call}"
WASM_BINDGEN_VERSION="0.2.130"   # must equal the `=` pin in Cargo.toml
WASM_PACK_VERSION="0.15.1"
BINARYEN_VERSION="132.0.0"        # wasm-opt from npm; Debian's binaryen 108 breaks the module
N8N2_VERSION="2.41.1"; NODE24_VERSION="24.22.3"
N8N1_VERSION="1.123.81"
TOOLS="$CACHE/tools"
mkdir -p "$CACHE" "$TOOLS"
export PATH="$TOOLS/bin:$TOOLS/node_modules/.bin:$HOME/.cargo/bin:$PATH"
log() { printf '\033[1m[%s]\033[0m %s\n' "$(basename "$0")" "$*" >&2; }
# timed <label> <command…>: runs it, then logs how long it took (the suite's per-phase times).
timed() {
  local label=$1 start=$SECONDS rc=0
  shift
  "$@" || rc=$?
  log "$label: $((SECONDS - start)) s$([ "$rc" = 0 ] || echo ", FAILED")"
  return "$rc"
}
die() { printf '\033[31mFAIL:\033[0m %s\n' "$*" >&2; exit 1; }
