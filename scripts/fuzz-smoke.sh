#!/usr/bin/env bash
# Short fuzzing smoke for scripts/test.sh: every target of fuzz/ for 50,000 executions or 15 s,
# whichever comes first, on the repository's corpus (left unchanged). Fails on any crash.
# The long run (1,000,000 executions per target) is scripts/fuzz.sh.
#
#   bash scripts/fuzz-smoke.sh [RUNS]
source "$(dirname "${BASH_SOURCE[0]}")/lib/common.sh"
# scripts/fuzz.sh installs cargo-fuzz if missing, builds the targets and checks for crashes.
FUZZ_MAX_TIME="${FUZZ_MAX_TIME:-15}" FUZZ_SAVE_CORPUS=0 exec bash "$ROOT/scripts/fuzz.sh" "${1:-50000}"
