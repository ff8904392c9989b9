#!/bin/bash
# Makes sure a JACK server named gong_test runs on jackd2's dummy driver (48 kHz, 256-frame
# periods: paced by a timer, in real time, with no sound card), so the live tests can play
# through `--device jack` and record gong's ports exactly (their own JACK client, Tests/CJackTap,
# on the server's frame clock); prints the server's name
# (clients reach it with JACK_DEFAULT_SERVER=<name>).
#
# Idempotent: a server of that name that answers is reused; one of this script's own that does
# not is ended and a new one started. Its state (pid, log) is kept in $GONG_TEST_JACK_DIR
# (default /tmp/gong-test-jack, mode 0700). `test-jack.sh stop` ends the server this script
# started, and only that one (`make test` does so when it ends, also when it fails).
set -euo pipefail
SERVER=${GONG_TEST_JACK_SERVER:-gong_test}
here=$(dirname "$0")
. "$here/test-server-lib.sh"

STATE_DIR=${GONG_TEST_JACK_DIR:-/tmp/gong-test-jack}
PID_FILE=$STATE_DIR/jackd.pid
# No client started from here starts a server by itself (libjack would, with default options).
export JACK_NO_START_SERVER=1 JACK_DEFAULT_SERVER=$SERVER

if [ "${1:-}" != stop ]; then
  for tool in jackd jack_lsp; do
    if ! command -v $tool >/dev/null; then
      "$here/install-deps.sh" test >&2   # standard output is for the server's name alone
      break
    fi
  done
  require_tools jackd jack_lsp
fi

if [ ! -e "$STATE_DIR" ] && [ ! -L "$STATE_DIR" ]; then
  mkdir -m 0700 "$STATE_DIR"
fi
if [ -L "$STATE_DIR" ] || [ ! -d "$STATE_DIR" ] || [ ! -O "$STATE_DIR" ]; then
  echo "test-jack: $STATE_DIR is not a directory of this user's own; remove it, or set GONG_TEST_JACK_DIR" >&2
  exit 73
fi
chmod 0700 "$STATE_DIR"
# One caller at a time (descriptor 9 is closed in everything started from here).
exec 9>"$STATE_DIR/setup.lock"
flock 9

# Reads its whole input (under pipefail a `grep -q` that quits early would fail jack_lsp).
server_answers() { timeout 5 jack_lsp 2>/dev/null | grep -x 'system:playback_1' >/dev/null; }

# The jackd this script recorded, if it is still that one (its command line names the server
# and the dummy driver).
own_server_pid() {
  [ -f "$PID_FILE" ] || return 1
  local pid
  pid=$(cat "$PID_FILE")
  [ -n "$pid" ] && [ -r "/proc/$pid/cmdline" ] || return 1
  local line
  line=$(tr '\0' ' ' <"/proc/$pid/cmdline")
  case "$line" in
    "jackd -n $SERVER -d dummy "*) echo "$pid" ;;
    *) return 1 ;;
  esac
}

stop_server() {
  local pid
  if pid=$(own_server_pid); then
    kill -TERM "$pid" 2>/dev/null || true
    for _ in $(seq 1 50); do
      kill -0 "$pid" 2>/dev/null || break
      sleep 0.1
    done
    kill -KILL "$pid" 2>/dev/null || true
  fi
  rm -f "$PID_FILE"
}

if [ "${1:-}" = stop ]; then
  if ! own_server_pid >/dev/null; then
    rm -f "$PID_FILE"
    echo "test-jack: no JACK server of this script's own runs as $SERVER: nothing stopped" >&2
    exit 1
  fi
  stop_server
  exit 0
fi

# Answering, or gone. A server of this script's own that runs is given 15 s to answer before it
# is taken for dead, ended and started anew; one just started is given 30 s.
answers_or_dies() { server_answers || ! kill -0 "$1" 2>/dev/null; }
if pid=$(own_server_pid); then wait_until 15 answers_or_dies "$pid" || true; fi
if ! server_answers; then
  stop_server
  detach "$STATE_DIR/jackd.log" jackd -n "$SERVER" -d dummy -r 48000 -p 256
  echo "$DETACHED_PID" >"$PID_FILE"
  wait_until 30 answers_or_dies "$DETACHED_PID" || true
  if ! server_answers; then
    echo "test-jack: jackd $SERVER did not start on the dummy driver (see $STATE_DIR/jackd.log)" >&2
    stop_server
    exit 69
  fi
  echo "test-jack: started jackd $SERVER (dummy driver, 48 kHz, 256-frame periods)" >&2
fi
echo "$SERVER"
