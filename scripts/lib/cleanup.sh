# Sourced. Whatever a script starts for its run (servers, port guard, a test step's processes)
# ends with the script: on success, on a failed step, on Ctrl-C and on SIGTERM.
#   at_exit '<command>'    run <command> when the script ends (last registered runs first)
#   step <command…>        run a slow step so that a signal stops it and its children at once
CLEANUPS=()
STEP_PID=
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

run_cleanups() {
  local rc=$? i
  trap - EXIT INT TERM
  if [ -n "$STEP_PID" ]; then
    kill -TERM -- "-$STEP_PID" 2>/dev/null || true
    wait "$STEP_PID" 2>/dev/null || true
  fi
  for ((i = ${#CLEANUPS[@]} - 1; i >= 0; i--)); do eval "${CLEANUPS[i]}" || true; done
  exit "$rc"
}
trap run_cleanups EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
