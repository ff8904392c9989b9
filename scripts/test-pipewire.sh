#!/bin/bash
# Makes sure a PipeWire server runs with a null sink named gong_test, so the real-time tests run
# on PipeWire as on PulseAudio, and prints the PULSE_SERVER address that reaches it (its
# PulseAudio server; `parec -d gong_test.monitor` records there exactly what was played). Native
# PipeWire clients (gong's `pipewire` route, pw-cat) reach it with PIPEWIRE_RUNTIME_DIR set to
# the rig's directory.
#
# Two sinks, two set-ups a desktop has: gong_test keeps a 20 ms keeper stream playing (another
# program playing beside gong holds the graph at a small quantum), gong_rest has none (a desktop
# at rest: the graph runs at the quantum gong asks for, and sleeps when nothing plays).
#
# The rig is pipewire, its session manager wireplumber (without it nothing plays and streams
# hang) and pipewire-pulse, under a D-Bus session of their own and a private runtime directory
# ($GONG_TEST_PIPEWIRE_DIR, default /tmp/gong-test-pipewire, mode 0700), so it never meets a
# desktop's own PipeWire or PulseAudio. Idempotent: a rig that answers, with its session manager,
# is reused; what is left of one that does not is ended and a new one started.
# `test-pipewire.sh stop` ends the rig this script started (the server-restart test uses it).
set -euo pipefail
SINK=gong_test
here=$(dirname "$0")
. "$here/test-server-lib.sh"

RUNTIME_DIR=${GONG_TEST_PIPEWIRE_DIR:-/tmp/gong-test-pipewire}
# Configuration and state (wireplumber remembers default sinks and stream targets) stay in the
# rig's directory too: nothing of the user's is read or changed.
export XDG_RUNTIME_DIR=$RUNTIME_DIR XDG_CONFIG_HOME=$RUNTIME_DIR/config XDG_STATE_HOME=$RUNTIME_DIR/state
export PULSE_SERVER=unix:$RUNTIME_DIR/pulse/native
RIG_PID_FILE=$RUNTIME_DIR/rig.pid

for tool in pipewire wireplumber pipewire-pulse pw-cli dbus-run-session pactl pacat; do
  if ! command -v $tool >/dev/null; then
    "$here/install-deps.sh" test >&2   # standard output is for the address alone
    break
  fi
done
require_tools pipewire wireplumber pipewire-pulse pw-cli dbus-run-session pactl pacat

# A fixed path under /tmp: it must be this user's own directory, not a link or someone else's.
if [ ! -e "$RUNTIME_DIR" ] && [ ! -L "$RUNTIME_DIR" ]; then
  mkdir -m 0700 "$RUNTIME_DIR"
fi
if [ -L "$RUNTIME_DIR" ] || [ ! -d "$RUNTIME_DIR" ] || [ ! -O "$RUNTIME_DIR" ]; then
  echo "test-pipewire: $RUNTIME_DIR is not a directory of this user's own; remove it, or set GONG_TEST_PIPEWIRE_DIR" >&2
  exit 73
fi
chmod 0700 "$RUNTIME_DIR"
mkdir -p "$XDG_CONFIG_HOME" "$XDG_STATE_HOME"
# One caller at a time sets the rig up (descriptor 9 is closed in everything started from here).
exec 9>"$RUNTIME_DIR/setup.lock"
flock 9

# Every check reads its whole input: under pipefail, a `grep -q` that quits early fails the
# command it reads from (SIGPIPE), and a rig that answers would seem not to.
server_answers() { timeout 5 pactl info 2>/dev/null | grep '^Server Name: .*PipeWire' >/dev/null; }
session_manager_runs() { timeout 5 pw-cli ls Client 2>/dev/null | grep 'application.name = "WirePlumber"' >/dev/null; }
sink_exists() { timeout 5 pactl list short sinks 2>/dev/null | awk '{print $2}' | grep -x "${1:-$SINK}" >/dev/null; }

# Ends the rig this script started: the process group of the dbus-run-session it recorded, and
# only if that process is still that one (its command line names this directory).
stop_rig() {
  [ -f "$RIG_PID_FILE" ] || return 0
  local pid
  pid=$(cat "$RIG_PID_FILE")
  if [ -n "$pid" ] && [ -r "/proc/$pid/cmdline" ] && tr '\0' '\n' <"/proc/$pid/cmdline" | grep -xF "$RUNTIME_DIR" >/dev/null \
      && tr '\0' '\n' <"/proc/$pid/cmdline" | grep dbus-run-session >/dev/null; then
    kill -TERM -- "-$pid" 2>/dev/null || true
    for _ in $(seq 1 30); do
      kill -0 "$pid" 2>/dev/null || break
      sleep 0.1
    done
    kill -KILL -- "-$pid" 2>/dev/null || true
  fi
  rm -f "$RIG_PID_FILE"
}

if [ "${1:-}" = stop ]; then
  if [ ! -f "$RIG_PID_FILE" ]; then
    echo "test-pipewire: no PipeWire of this script's own runs in $RUNTIME_DIR: nothing stopped" >&2
    exit 1
  fi
  stop_rig
  exit 0
fi

# The null sink: `pactl load-module module-null-sink` answers "Not supported" on pipewire-pulse
# 0.3.65, so it is a node of PipeWire's own, which outlives the pw-cli that creates it
# (object.linger).
sink_node() {
  echo "{ factory.name=support.null-audio-sink node.name=$1 media.class=Audio/Sink object.linger=true
  audio.position=[FL FR] audio.rate=48000 }"
}
SINK_NODE=$(sink_node $SINK)
REST_SINK=gong_rest

rig_answers() { server_answers && session_manager_runs; }

# A rig that runs is given 15 s to answer before it is taken for dead, ended and started anew.
started=0
if ! { [ -S "$RUNTIME_DIR/pulse/native" ] && wait_until 15 rig_answers; }; then
  stop_rig
  # The sink is there before the session manager and the PulseAudio server start, so a client
  # that connects as soon as the server answers (gong reopening its device) finds it.
  # The daemon and pipewire-pulse log their nodes at info level (pw.node:3) into rig.log: among
  # those lines, the cycles a client was late for, which the sink played without its stream.
  # The tests read them (PipeWireLog).
  RIG='PIPEWIRE_DEBUG=pw.node:3 pipewire &
for _ in $(seq 1 100); do timeout 2 pw-cli info 0 >/dev/null 2>&1 && break; sleep 0.05; done
pw-cli create-node adapter "$2" >/dev/null
wireplumber &
PIPEWIRE_DEBUG=pw.node:3 pipewire-pulse &
wait'
  detach "$RUNTIME_DIR/rig.log" dbus-run-session -- sh -c "$RIG" gong-test-pipewire "$RUNTIME_DIR" "$SINK_NODE"
  echo "$DETACHED_PID" >"$RIG_PID_FILE"
  if ! wait_until 30 rig_answers; then
    echo "test-pipewire: PipeWire did not start with its session manager and PulseAudio server (see $RUNTIME_DIR/rig.log)" >&2
    exit 69
  fi
  started=1
fi

for name in $SINK $REST_SINK; do
  if ! sink_exists $name; then
    pw-cli create-node adapter "$(sink_node $name)" >/dev/null
  fi
  if ! wait_until 15 sink_exists $name; then
    echo "test-pipewire: the null sink $name did not appear on PipeWire (see $RUNTIME_DIR/rig.log)" >&2
    exit 69
  fi
done
pactl set-default-sink $SINK
ensure_keeper
[ "$started" = 1 ] && echo "test-pipewire: started PipeWire with null sink $SINK in $RUNTIME_DIR" >&2
echo "$PULSE_SERVER"
