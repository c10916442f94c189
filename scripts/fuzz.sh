#!/usr/bin/env bash
# Fuzzes the engine with cargo fuzz (libFuzzer): four targets in fuzz/fuzz_targets/, each run
# for RUNS executions (default 1,000,000) on one core, one after the other.
#
#   bash scripts/fuzz.sh [RUNS] [TARGET...]     # the long run; targets default to all four
#   bash scripts/fuzz-smoke.sh                  # the short run scripts/test.sh uses
#
# Environment: FUZZ_MAX_TIME=<s> also caps each target's time; FUZZ_SAVE_CORPUS=1 rewrites
# fuzz/corpus/<target> as the minimized union of it and the run's corpus (otherwise the run
# works on a scratch copy under fuzz/target and leaves the repository alone);
# FUZZ_SANITIZER=address builds with ASan instead of none.
#
# Prints per target: executions, seconds, crashes, corpus size. Any crash (a panic, a failed
# invariant, a timeout, out of memory) fails the run and names the input under fuzz/artifacts/;
# keep it as a unit test in tests/fuzz_regressions.rs once fixed.
source "$(dirname "${BASH_SOURCE[0]}")/lib/common.sh"

CARGO_FUZZ_VERSION="0.13.2"
ALL_TARGETS=(retry_after state_decode config step_machine)
RUNS="${1:-1000000}"
[[ "$RUNS" =~ ^[0-9]+$ ]] || die "usage: scripts/fuzz.sh [RUNS] [TARGET...] (RUNS must be a number, got '$RUNS')"
shift $(( $# > 0 ? 1 : 0 ))
TARGETS=("$@")
[ ${#TARGETS[@]} -gt 0 ] || TARGETS=("${ALL_TARGETS[@]}")
MAX_TIME="${FUZZ_MAX_TIME:-0}"

# Sanitizer: none by default. Only stable rustc is available, and `-s none` needs no -Z flag
# (cargo fuzz then passes only stable -C flags: sancov coverage, trace-compares, debug
# assertions and overflow checks), so it needs no RUSTC_BOOTSTRAP. ASan works too
# (FUZZ_SANITIZER=address, with RUSTC_BOOTSTRAP=1 for -Zsanitizer) but runs ~4x slower here
# (100k retry_after runs: 1 s without, 4 s with) and finds nothing more: the engine has no
# `unsafe`; what fuzzing finds in it is panics, overflows and broken invariants, which the
# overflow checks and the targets' assertions catch without a sanitizer.
SANITIZER="${FUZZ_SANITIZER:-none}"
[ "$SANITIZER" = none ] || export RUSTC_BOOTSTRAP=1

if ! { command -v cargo-fuzz >/dev/null && cargo-fuzz --version 2>/dev/null | grep -qF "$CARGO_FUZZ_VERSION"; }; then
  log "installing cargo-fuzz $CARGO_FUZZ_VERSION (first run only, ~2 min)"
  cargo install cargo-fuzz --version "$CARGO_FUZZ_VERSION" --locked --root "$TOOLS" \
    || cargo install cargo-fuzz --version "$CARGO_FUZZ_VERSION" --root "$TOOLS"
fi

cd "$ROOT"
log "building the fuzz targets (sanitizer: $SANITIZER)"
cargo fuzz build -s "$SANITIZER" >&2

SCRATCH="$ROOT/fuzz/target/fuzz-run"
mkdir -p "$SCRATCH"
marker="$SCRATCH/started"; touch "$marker"
failed=()
rows=()
for t in "${TARGETS[@]}"; do
  [ -f "fuzz/fuzz_targets/$t.rs" ] || die "no fuzz target '$t' (have: ${ALL_TARGETS[*]})"
  work="$SCRATCH/corpus/$t"; logf="$SCRATCH/$t.log"
  rm -rf "$work"; mkdir -p "$work" "fuzz/artifacts/$t"
  [ -d "fuzz/corpus/$t" ] && cp -r "fuzz/corpus/$t/." "$work/"
  seeds=$(find "$work" -type f | wc -l)
  opts=(-runs="$RUNS" -timeout=10 -rss_limit_mb=2048 -print_final_stats=1)
  [ "$MAX_TIME" -gt 0 ] && opts+=(-max_total_time="$MAX_TIME")
  [ -f "fuzz/dict/$t.dict" ] && opts+=(-dict="fuzz/dict/$t.dict")
  log "$t: up to $RUNS runs (log: ${logf#"$ROOT"/})"
  # One process, one thread (no -jobs/-workers): the machine's other core stays free.
  t0=$(date +%s%N)
  rc=0
  cargo fuzz run -s "$SANITIZER" "$t" "$work" -- "${opts[@]}" >"$logf" 2>&1 || rc=$?
  t1=$(date +%s%N)
  secs=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.1f", (b - a) / 1e9 }')
  execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$logf" | tail -1)
  crashes=$(find "fuzz/artifacts/$t" -type f -newer "$marker" | wc -l)
  if [ "$rc" -ne 0 ] && [ "$crashes" -eq 0 ]; then crashes=1; fi
  corpus=$(find "$work" -type f | wc -l)
  rows+=("$(printf '%-14s %12s %9s %8s %14s' "$t" "${execs:-?}" "$secs" "$crashes" "$seeds -> $corpus")")
  if [ "$crashes" -gt 0 ]; then
    grep -E "panicked at|^==[0-9]+== ?ERROR|ERROR: libFuzzer|Test unit written|SUMMARY" "$logf" | head -8 >&2 || true
    failed+=("$t")
    continue
  fi
  if [ "${FUZZ_SAVE_CORPUS:-0}" = 1 ]; then
    # Minimize (what `cargo fuzz cmin` does, with libFuzzer's set-cover merge and edges only,
    # -use_counters=0): the smallest set of inputs, kept corpus and this run's, that reaches
    # all the code they reach together. Hand-named seeds (regressions, documented shapes) stay.
    min="$SCRATCH/min/$t"; rm -rf "$min"; mkdir -p "$min" "fuzz/corpus/$t"
    cargo fuzz run -s "$SANITIZER" "$t" "$min" "fuzz/corpus/$t" "$work" -- -set_cover_merge=1 -use_counters=0 \
      >"$SCRATCH/$t.merge.log" 2>&1 || die "$t: minimizing the corpus failed (see ${SCRATCH#"$ROOT"/}/$t.merge.log)"
    for f in "fuzz/corpus/$t"/*; do
      [ -f "$f" ] || continue
      [[ "$(basename "$f")" =~ ^[0-9a-f]{40}$ ]] && continue
      rm -f "$min/$(sha1sum <"$f" | cut -c1-40)"; cp "$f" "$min/"
    done
    rm -rf "fuzz/corpus/$t"; mv "$min" "fuzz/corpus/$t"
    log "$t: fuzz/corpus/$t now holds $(find "fuzz/corpus/$t" -type f | wc -l) inputs"
  fi
done

# corpus: inputs in fuzz/corpus/<target> -> inputs in the run's corpus at its end.
printf '\n%-14s %12s %9s %8s %14s\n' target executions seconds crashes corpus
printf '%s\n' "${rows[@]}"
if [ ${#failed[@]} -gt 0 ]; then
  for t in "${failed[@]}"; do
    for a in $(find "fuzz/artifacts/$t" -type f -newer "$marker"); do
      printf '  reproduce: cargo fuzz run -s %s %s %s\n' "$SANITIZER" "$t" "$a" >&2
    done
  done
  die "fuzzing found crashes in: ${failed[*]} (inputs under fuzz/artifacts/, logs under ${SCRATCH#"$ROOT"/}/)"
fi
log "no crash: ${#TARGETS[@]} target(s), up to $RUNS runs each"
