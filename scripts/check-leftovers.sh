#!/bin/sh
# make test's last word: succeeds when no process it started is still alive.
# `make test` exports GONG_TEST_RUN (a value of its own) before it starts anything, so every
# process started under it carries it in its environment, also one that daemonized and left the
# process tree (pulseaudio --daemonize, setsid). Processes found with it, other than this
# script's own ancestors (make and its shell), are leftovers: named, and the check fails.
# Servers told to stop get 10 s to exit.
set -eu
[ -n "${GONG_TEST_RUN:-}" ] || { echo "check-leftovers: GONG_TEST_RUN is not set: nothing to look for" >&2; exit 64; }

parent() { awk '/^PPid:/ { print $2 }' "/proc/$1/status" 2>/dev/null || echo 0; }

ancestors=" "
pid=$$
while [ "$pid" -gt 1 ] 2>/dev/null; do
  ancestors="$ancestors$pid "
  pid=$(parent "$pid")
done

# Succeeds for this script's own children and theirs (the commands that do the looking).
mine() {
  p=$1
  while [ "$p" -gt 1 ] 2>/dev/null; do
    [ "$p" = $$ ] && return 0
    p=$(parent "$p")
  done
  return 1
}

leftovers() {
  # One grep reads every environment; a process that exits meanwhile is skipped.
  for environ in $(grep -lzx "GONG_TEST_RUN=$GONG_TEST_RUN" /proc/[0-9]*/environ 2>/dev/null); do
    pid=${environ#/proc/}
    pid=${pid%/environ}
    case $ancestors in *" $pid "*) continue ;; esac
    [ -d "/proc/$pid" ] || continue  # the grep itself, or one that ended
    mine "$pid" || echo "$pid"
  done
}

deadline=$(($(date +%s) + 10))
while [ -n "$(leftovers)" ]; do
  if [ "$(date +%s)" -ge "$deadline" ]; then
    echo "make test: these processes it started are still running:" >&2
    for pid in $(leftovers); do ps -o pid=,args= -p "$pid" >&2 || true; done
    exit 1
  fi
  sleep 0.5
done
