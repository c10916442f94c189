# Sourced. Whatever a script starts for its run (servers, port guard, a test step's processes)
# ends with the script: on success, on a failed step, on Ctrl-C and on SIGTERM.
#   at_exit '<command>'    run <command> when the script ends (last registered runs first)
#   step <command…>        run a slow step so that a signal stops it and its children at once
#   lanes <name> '<script>' …  run bash scripts side by side (each in a session of its own, its
#                          output kept apart and printed, with its time, once it has ended); fails
#                          naming the lanes that failed. For steps that mostly wait on timers and
#                          n8n's boots: two lanes keep both cores busy.
CLEANUPS=()
STEP_PID=
LANE_PIDS=()
at_exit() { CLEANUPS+=("$1"); }

# bash runs a trap only after the foreground child returns, so a step runs in the background
# (wait is interrupted by signals), in a session of its own (one kill ends its whole tree).
step() {
  local rc=0
  setsid "$@" &
  STEP_PID=$!
  wait "$STEP_PID" || rc=$?
  STEP_PID=
  return "$rc"
}

lanes() {
  local dir names=() pids=() rc=0 failed=() i status
  dir=$(mktemp -d "${TMPDIR:-/tmp}/rpc-lanes.XXXXXX")
  at_exit "rm -rf '$dir'"
  while [ $# -ge 2 ]; do
    names+=("$1")
    # The script runs with common.sh's settings and helpers (log, die, timed), named by its lane.
    # shellcheck disable=SC2016
    setsid bash -c 'start=$SECONDS; rc=0; bash -c "source \"$4/scripts/lib/common.sh\"; $1" "$3" || rc=$?
      echo "$((SECONDS - start)) $rc" >"$2.done"; exit "$rc"' \
      _ "$2" "$dir/${#names[@]}" "$1" "$ROOT" >"$dir/${#names[@]}.log" 2>&1 &
    pids+=($!)
    LANE_PIDS+=($!)
    shift 2
  done
  local joined
  joined=$(printf ' | %s' "${names[@]}")
  log "side by side: ${joined:3}"
  # Printed in the order they end: a fast lane's output does not wait for a slow one.
  local left=${#pids[@]} shown=()
  while [ "$left" -gt 0 ]; do
    for i in "${!pids[@]}"; do
      [ -z "${shown[i]:-}" ] || continue
      # A lane killed before it could note its end counts as failed.
      [ -e "$dir/$((i + 1)).done" ] || kill -0 "${pids[i]}" 2>/dev/null \
        || [ -e "$dir/$((i + 1)).done" ] || echo "0 1" >"$dir/$((i + 1)).done"
      [ -e "$dir/$((i + 1)).done" ] || continue
      wait "${pids[i]}" 2>/dev/null || true
      read -r secs status <"$dir/$((i + 1)).done"
      cat "$dir/$((i + 1)).log" >&2
      log "lane ${names[i]}: $((secs / 60)) min $((secs % 60)) s$([ "$status" = 0 ] || echo ", FAILED")"
      [ "$status" = 0 ] || failed+=("${names[i]}")
      shown[i]=1
      left=$((left - 1))
    done
    [ "$left" -gt 0 ] && sleep 1
  done
  [ ${#failed[@]} -eq 0 ] || { printf '\033[31mFAIL:\033[0m lanes failed: %s\n' "${failed[*]}" >&2; rc=1; }
  return "$rc"
}

run_cleanups() {
  local rc=$? i
  trap - EXIT INT TERM
  for i in "${LANE_PIDS[@]}"; do kill -TERM -- "-$i" 2>/dev/null || true; done
  if [ -n "$STEP_PID" ]; then
    kill -TERM -- "-$STEP_PID" 2>/dev/null || true
    wait "$STEP_PID" 2>/dev/null || true
  fi
  # n8n shuts down gracefully on TERM and a queue-mode cluster may wait on its jobs (seen: 4 n8n
  # processes left behind a lane's test): what is still running after 10 s is killed.
  local groups=("${LANE_PIDS[@]}" ${STEP_PID:+"$STEP_PID"}) t g left
  for ((t = 0; t < 10; t++)); do
    left=0
    for g in "${groups[@]}"; do kill -0 -- "-$g" 2>/dev/null && left=1; done
    [ "$left" -eq 0 ] && break
    sleep 1
  done
  for g in "${groups[@]}"; do kill -KILL -- "-$g" 2>/dev/null || true; done
  for ((i = ${#CLEANUPS[@]} - 1; i >= 0; i--)); do eval "${CLEANUPS[i]}" || true; done
  exit "$rc"
}
trap run_cleanups EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
