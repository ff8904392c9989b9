#!/bin/bash
# Builds libgong.so and runs the three embedding examples (Examples/: C, Python ctypes, and a
# Swift package depending on gong by path), each playing a 3-second session on ALSA's null
# device; checks that each saw its session's events, in order, and its report.
set -euo pipefail
cd "$(dirname "$0")/.."
CONFIGURATION=${CONFIGURATION:-debug}
make --no-print-directory lib CONFIGURATION="$CONFIGURATION" >/dev/null
LIB=.build/$CONFIGURATION
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT

# What every example must print: an error refused with its message, the session's events from
# started to finished with the bowl on frame 0, and the report.
check() {
  local name=$1 file=$2
  grep -q '^refused: ' "$file" || { echo "test-examples: $name printed no refused input" >&2; exit 1; }
  [ "$(grep '^event: ' "$file" | head -1 | grep -c '"type":"started"')" = 1 ] || { echo "test-examples: $name: the first event is not started" >&2; cat "$file" >&2; exit 1; }
  [ "$(grep '^event: ' "$file" | tail -1 | grep -c '"type":"finished"')" = 1 ] || { echo "test-examples: $name: the last event is not finished" >&2; cat "$file" >&2; exit 1; }
  grep '^event: ' "$file" | grep '"type":"cue"' | grep -q '"frame":0' || { echo "test-examples: $name: no cue on frame 0" >&2; exit 1; }
  grep -q '^report: ' "$file" || { echo "test-examples: $name printed no report" >&2; exit 1; }
  echo "test-examples: $name: $(grep -c '^event: ' "$file") events, started to finished, and the report"
}

${CC:-cc} -std=c11 -Wall -Wextra -Werror -Iinclude Examples/c/play.c -L"$LIB" -lgong -o "$out/play-c"
LD_LIBRARY_PATH=$LIB "$out/play-c" null >"$out/c.txt"
check C "$out/c.txt"

GONG_LIBRARY=$LIB/libgong.so python3 Examples/python/play.py null >"$out/python.txt"
check Python "$out/python.txt"

# The Swift example builds against GongKit alone.
swift build --package-path Examples/swift --scratch-path .build-examples -c "$CONFIGURATION" >/dev/null
.build-examples/$CONFIGURATION/play null >"$out/swift.txt"
check Swift "$out/swift.txt"
