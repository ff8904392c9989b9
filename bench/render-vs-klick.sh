#!/bin/bash
# Renders an hour of two-phase side by side with klick's hour of clicks (the bar set by issue 2:
# `klick -W out.wav -r 48000 -e -s 3 1650 4/4 110`, mono 16-bit), in one hyperfine run, and
# prints the ratios. Every run writes a fresh file (deleted before each run, untimed), so both
# tools pay the same file-system cost.
set -euo pipefail
cd "$(dirname "$0")/.."
swift build -c release --product gong >/dev/null
GONG="$PWD/.build/release/gong"
DIR="$(mktemp -d)"
trap 'rm -rf "$DIR"' EXIT
HOUR=(render two-phase --set meditation=57m --set reflection=3m --rate 48000 --bits 16 --quiet)

hyperfine --warmup 1 --runs "${RUNS:-5}" --prepare "rm -f $DIR/*.wav" --export-json "$DIR/result.json" \
  -n "klick, 1 h mono 16-bit" "klick -W $DIR/klick.wav -r 48000 -e -s 3 1650 4/4 110" \
  -n "gong render two-phase, 1 h mono 16-bit" "$GONG ${HOUR[*]} --channels 1 -o $DIR/mono.wav" \
  -n "gong render two-phase, 1 h stereo 16-bit" "$GONG ${HOUR[*]} --channels 2 -o $DIR/stereo.wav"

python3 - "$DIR/result.json" <<'PY'
import json, sys
results = json.load(open(sys.argv[1]))["results"]
klick = results[0]["mean"]
print()
for r in results:
    print(f'{r["command"]:45s} mean {r["mean"]:.3f} s  (±{r["stddev"]:.3f})  {r["mean"] / klick:.2f}x klick')
PY
