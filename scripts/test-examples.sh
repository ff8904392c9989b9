#!/bin/bash
# Builds libgong.so, runs the C interface's own test (Tests/c/), and the three embedding examples
# (Examples/: C, Python ctypes, and a Swift package depending on gong by path), each playing a
# 3-second session on ALSA's null device; checks that each saw its session's events, in order,
# and its report. Then the two pull examples, where the host owns the audio: C pulls the session
# and plays it through the PulseAudio test server (scripts/test-pulse.sh), recorded from its
# sink's monitor to show it was heard; Python pulls it into numpy and checks it sample for sample
# against `gong render`.
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

# The C interface's own test (Tests/c/): a pulled session's status counts the frames pulled, at
# any block size and pace, less those pulled while paused.
${CC:-cc} -std=c11 -Wall -Wextra -Werror -Iinclude Tests/c/pull-status.c -L"$LIB" -lgong -lpthread -lm \
  -o "$out/pull-status"
LD_LIBRARY_PATH=$LIB "$out/pull-status" >"$out/pull-status.txt" ||
  { cat "$out/pull-status.txt" >&2; echo "test-examples: C pull status: failed" >&2; exit 1; }
echo "test-examples: C pull status: $(grep -c '^ok ' "$out/pull-status.txt") cases, each where its frames end"

GONG_LIBRARY=$LIB/libgong.so python3 Examples/python/play.py null >"$out/python.txt"
check Python "$out/python.txt"

# The Swift example builds against GongKit alone.
swift build --package-path Examples/swift --scratch-path .build-examples -c "$CONFIGURATION" >/dev/null
.build-examples/$CONFIGURATION/play null >"$out/swift.txt"
check Swift "$out/swift.txt"

# Pulled: C plays what it pulls through pa_simple on the test server's null sink, while parec
# records the sink's monitor; the recording must hold the woodblock (the keeper plays silence).
scripts/test-pulse.sh
${CC:-cc} -std=c11 -Wall -Wextra -Werror -Iinclude Examples/c/pull.c -L"$LIB" -lgong -lpulse-simple -lpulse -lpthread \
  -o "$out/pull-c"
parec -d gong_test.monitor --raw --format=float32le --rate=48000 --channels=2 "$out/heard.raw" &
recorder=$!
sleep 0.5
LD_LIBRARY_PATH=$LIB "$out/pull-c" gong_test >"$out/pull-c.txt"
sleep 0.5
kill "$recorder"
wait "$recorder" 2>/dev/null || true
check "C pull" "$out/pull-c.txt"
grep -q '^played: ' "$out/pull-c.txt" || { echo "test-examples: C pull: nothing played" >&2; exit 1; }
python3 - "$out/heard.raw" <<'PY'
import sys
import numpy as np
heard = np.fromfile(sys.argv[1], dtype="<f4")
peak = float(np.abs(heard).max()) if heard.size else 0.0
# The woodblock at -6 dB; the keeper and an idle sink give exact zeros.
if peak < 0.05:
    sys.exit(f"test-examples: C pull: the sink's monitor heard nothing ({heard.size // 2} frames, peak {peak})")
print(f"test-examples: C pull: heard through PulseAudio, {heard.size // 2} frames recorded, peak {peak:.3f}")
PY

# Pulled into numpy, compared with the offline render of the same pattern and gain.
swift build -c "$CONFIGURATION" --product gong >/dev/null
mkdir -p "$out/config"
printf 'name = "three"\n[[phases]]\nname = "sit"\nlength = "3s"\ncue = "bowl"\n' >"$out/three.toml"
XDG_CONFIG_HOME=$out/config .build/$CONFIGURATION/gong render "$out/three.toml" --bits float --volume=-6 \
  -o "$out/three.wav" --quiet
GONG_LIBRARY=$LIB/libgong.so python3 Examples/python/pull.py "$out/three.wav" >"$out/pull-python.txt"
check "Python pull" "$out/pull-python.txt"
grep '^matches: ' "$out/pull-python.txt" | sed 's/^/test-examples: Python pull: /'
