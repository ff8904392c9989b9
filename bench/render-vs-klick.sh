#!/bin/bash
# Renders an hour of two-phase side by side with klick's hour of clicks (the bar set by issue 2:
# `klick -W out.wav -r 48000 -e -s 3 1650 4/4 110`, mono 16-bit), at 48 kHz (the rate of gong's
# sound bank) and at 44.1 kHz (where gong converts the bank), each rate in one hyperfine run,
# and prints the ratios to klick at the same rate. Every run writes a fresh file (deleted before
# each run, untimed), so both tools pay the same file-system cost. gong's converted sounds go to
# a scratch cache: warm after hyperfine's warm-up run; one more run at 44.1 kHz empties it first.
set -euo pipefail
cd "$(dirname "$0")/.."
make --no-print-directory build >/dev/null
GONG="$PWD/$(make -s gong-path)"
DIR="$(mktemp -d)"
trap 'rm -rf "$DIR"' EXIT
export XDG_CACHE_HOME="$DIR/cache"
HOUR=(render two-phase --set meditation=57m --set reflection=3m --bits 16 --quiet)

for RATE in 48000 44100; do
  hyperfine --warmup 1 --runs "${RUNS:-5}" --prepare "rm -f $DIR/*.wav" --export-json "$DIR/result-$RATE.json" \
    -n "klick, 1 h mono 16-bit, $RATE Hz" "klick -W $DIR/klick.wav -r $RATE -e -s 3 1650 4/4 110" \
    -n "gong render two-phase, 1 h mono 16-bit, $RATE Hz" "$GONG ${HOUR[*]} --rate $RATE --channels 1 -o $DIR/mono.wav" \
    -n "gong render two-phase, 1 h stereo 16-bit, $RATE Hz" "$GONG ${HOUR[*]} --rate $RATE --channels 2 -o $DIR/stereo.wav"
done
hyperfine --runs "${RUNS:-5}" --prepare "rm -rf $DIR/*.wav $DIR/cache" --export-json "$DIR/result-cold.json" \
  -n "gong render two-phase, 1 h mono 16-bit, 44100 Hz, cache emptied" "$GONG ${HOUR[*]} --rate 44100 --channels 1 -o $DIR/mono.wav"

python3 - "$DIR" <<'PY'
import json, sys
results = {name: json.load(open(f"{sys.argv[1]}/result-{name}.json"))["results"] for name in ("48000", "44100", "cold")}
print()
for rate in ("48000", "44100"):
    klick = results[rate][0]["mean"]
    rows = results[rate] + (results["cold"] if rate == "44100" else [])
    for r in rows:
        print(f'{r["command"]:62s} mean {r["mean"]:.3f} s  (±{r["stddev"]:.3f})  {r["mean"] / klick:.2f}x klick at {rate} Hz')
PY
