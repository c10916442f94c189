#!/usr/bin/env bash
# The main job: build everything, install n8n (cached), run the demo workflow (scripts/demo.mjs).
source "$(dirname "${BASH_SOURCE[0]}")/lib/common.sh"
cd "$ROOT"
case "${1:-}" in -h|--help) exec node scripts/demo.mjs --help ;; esac
bash scripts/build-node.sh
exec node scripts/demo.mjs "$@"
