#!/usr/bin/env python3
"""Start-up at each output rate: command start to the first frame heard, on the PulseAudio null
sink, with the converted-sound cache cold (emptied before the run) and warm.

Time is CLOCK_MONOTONIC taken just before gong is started, against the `audible` time of the
`firstFrameAudible` JSON event (the device's own timestamp of when the first frame is heard), as
in live.py. The bank's files are 48 kHz: at 44.1 and 96 kHz a cold start converts the sounds the
pattern uses, a warm one reads them from the cache. The cache is a scratch directory, never the
user's own. The null sink runs at 48 kHz, so at the other rates the server converts too, as a
sound server does for any client.

Usage: bench/first-frame.py [--runs N] [--pattern NAME] [--gong PATH]   (defaults: 5 runs, box,
the gong `make build` makes; run it under `flock /tmp/gong-live.lock` on a shared machine).
--gong measures another binary: the one a release installed (/usr/bin/gong from the .deb, or
PREFIX/bin/gong from the tarball), to compare with the build tree's.
"""
import json, os, shutil, statistics, subprocess, sys, tempfile, time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
runs = int(sys.argv[sys.argv.index("--runs") + 1]) if "--runs" in sys.argv else 5
pattern = sys.argv[sys.argv.index("--pattern") + 1] if "--pattern" in sys.argv else "box"

if "--gong" in sys.argv:
    GONG = os.path.abspath(sys.argv[sys.argv.index("--gong") + 1])
else:
    # gong as `make build` makes it: the binary people run.
    subprocess.run(["make", "--no-print-directory", "build"], cwd=ROOT, check=True, stdout=subprocess.DEVNULL)
    GONG = os.path.join(ROOT, subprocess.run(["make", "-s", "gong-path"], cwd=ROOT, check=True, capture_output=True, text=True).stdout.strip())
if subprocess.run(["pactl", "info"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL).returncode != 0:
    subprocess.run([os.path.join(ROOT, "scripts/test-pulse.sh")], check=True)
cache = tempfile.mkdtemp(prefix="gong-first-frame-cache-")
environment = dict(os.environ, XDG_CACHE_HOME=cache)


def first_frame_heard(rate):
    start = time.monotonic()
    process = subprocess.Popen([GONG, "run", pattern, "--device", "pulse", "--rate", str(rate), "--json"],
                               stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, env=environment)
    heard = None
    for line in process.stdout:
        event = json.loads(line)
        if event["type"] == "firstFrameAudible":
            heard = (event["audible"] - start) * 1000
            break
    process.kill()
    process.wait()
    if heard is None:
        sys.exit(f"first-frame: gong at {rate} Hz reported no first frame")
    return heard


try:
    print(f"{GONG}: command start to first frame heard, `gong run {pattern} --device pulse --rate R` ({runs} runs each; bar: 100 ms warm)")
    for rate in (44100, 48000, 96000):
        cold = []
        for _ in range(runs):
            shutil.rmtree(cache, ignore_errors=True)
            os.makedirs(cache)
            cold.append(first_frame_heard(rate))
        warm = [first_frame_heard(rate) for _ in range(runs)]
        print(f"  {rate:6d} Hz   cold cache: median {statistics.median(cold):5.0f} ms, max {max(cold):5.0f} ms"
              f"   warm cache: median {statistics.median(warm):5.0f} ms, max {max(warm):5.0f} ms")
finally:
    shutil.rmtree(cache, ignore_errors=True)
