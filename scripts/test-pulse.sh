#!/bin/bash
# Makes sure a PulseAudio server with a null sink named gong_test is running, for the real-time
# tests: it is paced by a real clock like a sound card, and `parec -d gong_test.monitor` records
# exactly what was played. Idempotent. On a machine that already runs PulseAudio or PipeWire it
# only loads the null sink into it.
set -euo pipefail
SINK=gong_test

if ! command -v pulseaudio >/dev/null || ! command -v pactl >/dev/null || [ ! -e /usr/share/alsa/alsa.conf.d/pulse.conf ]; then
  "$(dirname "$0")/install-deps.sh" test
fi

started=0
if ! pactl info >/dev/null 2>&1; then
  # As root (CI) PulseAudio wants -n (no default config) and refuses to exit when idle with
  # --exit-idle-time=-1; the native protocol module lets pactl and the ALSA plugin connect.
  pulseaudio --daemonize=yes --exit-idle-time=-1 -n \
    --load="module-null-sink sink_name=$SINK rate=48000 format=float32le channels=2" --load=module-native-protocol-unix --log-target=syslog 2>/dev/null || true
  started=1
fi
for _ in $(seq 1 100); do
  pactl info >/dev/null 2>&1 && break
  sleep 0.1
done
if ! pactl info >/dev/null 2>&1; then
  echo "test-pulse: PulseAudio did not start" >&2
  exit 69
fi
if ! pactl list short sinks | awk '{print $2}' | grep -qx "$SINK"; then
  pactl load-module module-null-sink sink_name=$SINK rate=48000 format=float32le channels=2 >/dev/null
fi
pactl set-default-sink $SINK

# A silent stream keeps the sink running, as a sound card always runs: an idle null sink takes
# about 2 s to wake for each new or recovering stream. Its latency is low, as a sound card's is:
# the null sink sleeps as long as its most patient stream allows, and a new stream behind a
# stream with pacat's default 2 s latency waits as long to be heard. It ends by itself after an
# hour. Every inherited descriptor is closed first, so it never holds a caller's pipe open.
KEEPER="pacat --playback --raw --latency-msec=20 --device=$SINK"
if ! pgrep -f "$KEEPER" >/dev/null; then
  (
    for fd in /proc/$BASHPID/fd/*; do
      n=${fd##*/}
      [ "$n" -gt 2 ] 2>/dev/null && eval "exec $n>&-"
    done
    exec setsid timeout 3600 $KEEPER /dev/zero </dev/null >/dev/null 2>&1
  ) &
fi
[ "$started" = 1 ] && echo "test-pulse: started PulseAudio with null sink $SINK" >&2
exit 0
