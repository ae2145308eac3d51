#!/usr/bin/env bash
# The child every chaos worker runs under `dlock run`: one critical section against the
# fenced resource (chaos/lib/resource.mjs) on 127.0.0.1:<port>.
#
#   begin <run> <token> <pid> <µs>  -> the resource answers "hold <ms>"
#   tick <µs>                       every 20 ms while holding
#                                   (the resource may answer a tick's wait with "write": write now)
#   write <token> <µs>              -> "ok" or "stale <highest>"
#   end <µs>
#
# Timestamps are this process's own wall clock in µs ($EPOCHREALTIME, a builtin: no fork),
# so each message proves the child was still running at that instant. Everything here is
# a bash builtin, so the child is one process that dies at once with SIGTERM or SIGKILL.
# It exits as soon as the resource goes away (EOF), so it can never outlive a chaos run.
# Exit 0: write accepted; 3: write rejected as stale; 9x: protocol failure.
set -u
port=$1
run=$2
exec 3<>"/dev/tcp/127.0.0.1/$port" || exit 90
t=${EPOCHREALTIME/[.,]/}
printf 'begin %s %s %s %s\n' "$run" "$DLOCK_FENCING_TOKEN" "$$" "$t" >&3
read -r -u 3 verb hold_ms || exit 91
[ "$verb" = hold ] || exit 92
deadline=$((t + hold_ms * 1000))
partial=''
while :; do
  t=${EPOCHREALTIME/[.,]/}
  ((t >= deadline)) && break
  left=$((deadline - t))
  ((left > 20000)) && left=20000
  printf -v wait '0.%06d' "$left"
  read -r -t "$wait" -u 3 told
  status=$?
  if ((status == 0)); then
    [ "$partial$told" = write ] && break # the resource says: write now
    exit 93                              # any other line
  fi
  ((status > 128)) || exit 93 # EOF
  partial+=$told              # a timeout can cut a line short: read keeps the part it read
  printf 'tick %s\n' "${EPOCHREALTIME/[.,]/}" >&3 || exit 94
done
printf 'write %s %s\n' "$DLOCK_FENCING_TOKEN" "${EPOCHREALTIME/[.,]/}" >&3
read -r -u 3 verdict _ || exit 95
printf 'end %s\n' "${EPOCHREALTIME/[.,]/}" >&3
[ "$verdict" = ok ] || exit 3
exit 0
