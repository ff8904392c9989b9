#!/bin/bash
# CPU of gong feeding a snapserver's FIFO, against `cat` of the same render into the same pipe.
#
# A snapserver of the run's own (own config, ports and state, in a temporary directory; stopped at
# the end) reads the FIFO; no client is needed, the server reads at the stream's rate regardless.
# Each way plays the same session in real time — the `interval` pattern, a bowl every 3 s for
# DURATION (default 1m), then the end gong rung out, at gong's defaults — and GNU time reports
# the user and system CPU of the process that feeds the pipe. RUNS alternating runs of each
# (default 3). Processes carry GONG_TEST_RUN when set, like the tests'.
#
# Usage: bench/snapcast-cpu.sh [GONG]   (default .build/release/gong)
set -euo pipefail
gong=$(realpath "${1:-.build/release/gong}")
runs=${RUNS:-3}
pattern=(interval --set bell=3s --duration "${DURATION:-1m}")
work=$(mktemp -d /tmp/gong-snapcast-cpu.XXXXXX)
export XDG_STATE_HOME=$work/state XDG_DATA_HOME=$work/data XDG_CONFIG_HOME=$work/config
server=
cleanup() { [ -n "$server" ] && kill -TERM "$server" 2>/dev/null; wait 2>/dev/null; rm -rf "$work"; }
trap cleanup EXIT
ports=($(python3 -c '
import socket
s=[socket.socket() for _ in range(2)]
for x in s: x.bind(("127.0.0.1",0))
print(" ".join(str(x.getsockname()[1]) for x in s))'))
mkdir -p "$work/snapserver"
cat >"$work/snapserver.conf" <<CONF
[server]
datadir = $work/snapserver
[stream]
source = pipe://$work/fifo?name=gong&mode=create
port = ${ports[0]}
[tcp]
port = ${ports[1]}
[http]
enabled = false
CONF
snapserver -c "$work/snapserver.conf" >"$work/snapserver.log" 2>&1 &
server=$!
sleep 1
# The same frames gong plays, with the second of silence it puts ahead of an idle stream.
"$gong" render "${pattern[@]}" -o "$work/render.wav" >/dev/null
sox "$work/render.wav" -t raw -e signed -b 16 "$work/render.raw" pad 1 0
echo "seconds of audio: $(soxi -D "$work/render.wav") (+1 s lead-in)"
printf '%-6s %8s %8s %8s %8s\n' way user sys total wall
for run in $(seq 1 "$runs"); do
  /usr/bin/time -f "cat %U %S %e" -o "$work/cat.time" sh -c "cat '$work/render.raw' > '$work/fifo'"
  /usr/bin/time -f "gong %U %S %e" -o "$work/gong.time" \
    "$gong" run "${pattern[@]}" --quiet --device "snapcast:$work/fifo?control=127.0.0.1:${ports[1]}" </dev/null >/dev/null 2>&1
  for way in cat gong; do
    read -r name user sys wall < <(tail -1 "$work/$way.time")
    printf '%-6s %8s %8s %8.2f %8s\n' "$name" "$user" "$sys" "$(echo "$user + $sys" | bc)" "$wall"
  done
done
