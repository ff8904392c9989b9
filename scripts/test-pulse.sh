#!/bin/bash
# Makes sure a PulseAudio server with a null sink named gong_test is running, for the real-time
# tests: it is paced by a real clock like a sound card, and `parec -d gong_test.monitor` records
# exactly what was played. Idempotent. On a machine that already runs PulseAudio it only loads
# the null sink into it. (PipeWire has scripts/test-pipewire.sh.)
# `test-pulse.sh stop` ends the keeper stream on the environment's own server, and the server
# too if this script started it (known by the null sink on its command line); a server that was
# already running is left running.
set -euo pipefail
SINK=gong_test
here=$(dirname "$0")
. "$here/test-server-lib.sh"

if ! command -v pulseaudio >/dev/null || ! command -v pactl >/dev/null || [ ! -e /usr/share/alsa/alsa.conf.d/pulse.conf ]; then
  "$here/install-deps.sh" test
fi
require_tools pulseaudio pactl pacat

# The keepers playing on the environment's own server: pacat with the keeper's client name, and
# no PULSE_SERVER of its own (the PipeWire rig's keeper has one).
own_keeper_pids() {
  local pid
  for pid in $(pgrep -u "$(id -u)" -f "^pacat .*--client-name=$KEEPER_CLIENT" || true); do
    tr '\0' '\n' <"/proc/$pid/environ" 2>/dev/null | grep '^PULSE_SERVER=' >/dev/null || echo "$pid"
  done
}

if [ "${1:-}" = stop ]; then
  stopped=0
  for pid in $(own_keeper_pids) $(pgrep -u "$(id -u)" -f "^pulseaudio .* sink_name=$SINK " || true); do
    kill -TERM "$pid" 2>/dev/null && stopped=1
    for _ in $(seq 1 50); do
      kill -0 "$pid" 2>/dev/null || break
      sleep 0.1
    done
    kill -KILL "$pid" 2>/dev/null || true
  done
  [ "$stopped" = 1 ] || echo "test-pulse: no keeper or PulseAudio of this script's own runs: nothing stopped" >&2
  exit 0
fi

server_answers() { timeout 5 pactl info >/dev/null 2>&1; }

# A PulseAudio that runs is given 15 s to answer before another is started.
started=0
if pgrep -u "$(id -u)" -x pulseaudio >/dev/null; then wait_until 15 server_answers || true; fi
if ! server_answers; then
  # As root (CI) PulseAudio wants -n (no default config) and refuses to exit when idle with
  # --exit-idle-time=-1; the native protocol module lets pactl and the ALSA plugin connect.
  # It daemonizes: its descriptors are closed first, so it never holds a caller's pipe open.
  ( close_inherited_descriptors
    exec pulseaudio --daemonize=yes --exit-idle-time=-1 -n \
      --load="module-null-sink sink_name=$SINK rate=48000 format=float32le channels=2" --load=module-native-protocol-unix \
      --log-target=syslog </dev/null >/dev/null 2>&1 ) || true
  started=1
fi
if ! wait_until 30 server_answers; then
  echo "test-pulse: PulseAudio did not start" >&2
  exit 69
fi
if ! pactl list short sinks | awk '{print $2}' | grep -x "$SINK" >/dev/null; then
  pactl load-module module-null-sink sink_name=$SINK rate=48000 format=float32le channels=2 >/dev/null
fi
pactl set-default-sink $SINK
ensure_keeper
[ "$started" = 1 ] && echo "test-pulse: started PulseAudio with null sink $SINK" >&2
exit 0
