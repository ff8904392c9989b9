#!/usr/bin/env python3
"""Does a live session hold at a given buffer? The measurement behind gong's default latencies.

Plays a woodblock every 3 s live through a sound server's null sink and records the sink's
monitor with parec (sample for sample what was played). For each run it reports what gong said
(underruns from its `finished` JSON event) and what was heard: every interval between onsets in
the recording against the scheduled 144 000 frames, and gong's CPU time.

Usage: bench/exactness.py [--server pulseaudio|pipewire] [--device auto|pipewire|pulse|default]
                          [--latency MS[,MS...]|default] [--seconds N] [--load N] [--runs R]
                          [--sink NAME] [--recorder-latency MS] [--player gong|pacat|pw-play]

--sink plays and records on that null sink (default gong_test, which the rig keeps a 20 ms
keeper stream playing on; the PipeWire rig's gong_rest has none, so its graph runs at the
quantum gong asks for, as a desktop's at rest does). --recorder-latency is parec's
--latency-msec (default: parec's own); a long one keeps the recorder from setting the quantum.
--player pacat plays gong's own render of the same session with pacat at the same buffer
(--latency, default 500 ms in 125 ms periods), the plain client gong must not lose to;
--player pw-play plays it with PipeWire's own player (its default latency unless --latency).

On PipeWire the sink's monitor is also recorded by bench/tools/pw-tap.c (built into out/ on
first use), which writes each graph cycle at the driver's position: the intervals "on the graph's
clock", the clock a sound card keeps. parec, like any recorder on the graph, loses the cycles the
whole graph misses when the machine stalls its driver; a player that keeps its place in its own
stream (pacat) then looks exact to it, and one that keeps the schedule on the device's clock
(gong) looks short. The tap shows which was on time. (None: an interval the tap could not place,
its onset just after a cycle the tap itself missed.)

--load N runs N busy loops (`yes > /dev/null`) beside each run. The servers are the test rig's:
scripts/test-pulse.sh and scripts/test-pipewire.sh start them.
"""
import json, os, resource, signal, subprocess, sys, tempfile, time
from array import array

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
# gong as `make build` makes it (the binary people run); run `make build` first.
GONG = os.path.join(ROOT, subprocess.run(["make", "-s", "gong-path"], cwd=ROOT, check=True, capture_output=True, text=True).stdout.strip())
PIPEWIRE_RUNTIME = os.environ.get("GONG_PIPEWIRE_RUNTIME", "/tmp/gong-test-pipewire")


def option(name, default):
    return sys.argv[sys.argv.index(name) + 1] if name in sys.argv else default


server = option("--server", "pulseaudio")
device = option("--device", "auto")
latencies = option("--latency", "default").split(",")
seconds = int(option("--seconds", "60"))
load = int(option("--load", "0"))
runs = int(option("--runs", "1"))
sink = option("--sink", "gong_test")
recorder_latency = option("--recorder-latency", None)
player = option("--player", "gong")

env = dict(os.environ)
if server == "pipewire":
    env["PULSE_SERVER"] = f"unix:{PIPEWIRE_RUNTIME}/pulse/native"
    env["PIPEWIRE_RUNTIME_DIR"] = PIPEWIRE_RUNTIME
scratch = tempfile.mkdtemp()
# On PipeWire a second recorder, bench/tools/pw-tap.c, writes each cycle at the graph's position:
# intervals on the clock a sound card would keep (parec, a follower like any other, loses the
# cycles the whole graph misses, and a player's interval across them with it).
TAP = os.path.join(ROOT, "out", "pw-tap")
sources = [os.path.join(ROOT, "bench", "tools", "pw-tap.c"), os.path.join(ROOT, "Tests", "CPipeWireTap", "pipewire_tap.c")]
if server == "pipewire" and (not os.path.exists(TAP) or os.path.getmtime(TAP) < max(map(os.path.getmtime, sources))):
    os.makedirs(os.path.dirname(TAP), exist_ok=True)
    flags = subprocess.run(["pkg-config", "--cflags", "--libs", "libpipewire-0.3"], check=True, capture_output=True,
                           text=True).stdout.split()
    subprocess.run(["cc", "-O2", "-o", TAP, "-I", os.path.join(ROOT, "Tests", "CPipeWireTap", "include")] + sources
                   + flags + ["-lm"],
                   check=True)
pattern = os.path.join(scratch, "ticks.toml")
with open(pattern, "w") as f:
    f.write(f'warmup = "1s"\nduration = "{seconds}s"\n[[phases]]\nname = "tick"\nlength = "3s"\ncue = "woodblock"\n')


def onsets(samples, threshold=0.01, quiet=48000):
    found, last = [], -quiet - 1
    for index, sample in enumerate(samples):
        if abs(sample) > threshold:
            if index - last > quiet:
                found.append(index)
            last = index
    return found


render = os.path.join(scratch, "render.wav")
if player != "gong":
    subprocess.run([GONG, "render", pattern, "--channels", option("--channels", "2"), "-o", render], check=True,
                   capture_output=True)


def run_once(latency):
    raw = os.path.join(scratch, "monitor.raw")
    recorder = subprocess.Popen(["chrt", "-f", "60", "parec", "-d", f"{sink}.monitor", "--format=float32le", "--rate=48000",
                                 "--channels=1", "--raw", raw]
                                + ([f"--latency-msec={recorder_latency}"] if recorder_latency else []), env=env)
    tap_raw = os.path.join(scratch, "tap.f32")
    tap = subprocess.Popen(["chrt", "-f", "60", TAP, sink, str(seconds + 120), tap_raw], env=env,
                           stderr=subprocess.PIPE, text=True) if server == "pipewire" else None
    time.sleep(0.3)
    target = device if sink == "gong_test" or device in ("auto", "default") else f"{device}:{sink}"
    command = [GONG, "run", pattern, "--device", target, "--channels", option("--channels", "2"), "--json"]
    if latency != "default":
        command += ["--latency", latency]
    if player == "pacat":
        milliseconds = 500 if latency == "default" else int(latency)
        command = ["pacat", "--playback", f"--device={sink}", f"--latency-msec={milliseconds}",
                   f"--process-time-msec={milliseconds // 4}", "--file-format=wav", render]
    elif player == "pw-play":
        command = ["pw-play", "--target", sink] + ([] if latency == "default" else ["--latency", f"{latency}ms"]) + [render]
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    result = subprocess.run(command, env=env, capture_output=True, text=True)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    time.sleep(0.3)
    recorder.kill()
    recorder.wait()
    tap_off, tap_said = None, ""
    if tap:
        tap.send_signal(signal.SIGTERM)
        tap_said = tap.communicate()[1].strip()
        tap_samples = array("f")
        with open(tap_raw, "rb") as f:
            tap_samples.frombytes(f.read())
        tap_heard = onsets(tap_samples)
        # An onset right after a hole (a cycle the tap itself did not get) may have begun in it:
        # the intervals either side of it cannot be placed, and are marked None.
        placed = [not any(x != x for x in tap_samples[max(0, at - 2048):at]) for at in tap_heard]
        tap_off = [(index, b - a - 144000 if placed[index] and placed[index + 1] else None)
                   for index, (a, b) in enumerate(zip(tap_heard, tap_heard[1:]))
                   if b - a != 144000 or not (placed[index] and placed[index + 1])]
    samples = array("f")
    with open(raw, "rb") as f:
        samples.frombytes(f.read())
    events = [json.loads(line) for line in result.stdout.splitlines() if line.startswith("{")]
    finished = next((e for e in events if e["type"] == "finished"), {})
    started = next((e for e in events if e["type"] == "started"), {})
    heard = onsets(samples)
    intervals = [b - a for a, b in zip(heard, heard[1:])]
    off = [(index, i - 144000) for index, i in enumerate(intervals) if i != 144000]  # (which interval, frames off)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    xruns = [(e.get("frame"), e.get("lostFrames")) for e in events if e["type"] == "xrun"]
    return {"xrunEvents": xruns, "heard": finished.get("heard"), "latencyMs": started.get("latencyMs"), "status": result.returncode, "xruns": finished.get("xruns"),
            "cues": len(heard), "intervals": len(intervals), "off": off, "tapOff": tap_off, "tapSaid": tap_said, "cpu": cpu, "stderr": result.stderr.strip()}


# Killed (SIGTERM), it still ends its busy loops: the `finally` below runs.
signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
busy = [subprocess.Popen(["sh", "-c", "exec yes > /dev/null"]) for _ in range(load)]
try:
    print(f"server {server}, {player + ' playing gong render' if player != 'gong' else 'device ' + device}, sink {sink}, "
          f"recorder latency {recorder_latency or 'parec default'}, {seconds} s a run, {load} busy loops")
    for latency in latencies:
        for run in range(runs):
            r = run_once(latency)
            print(f"  latency {latency:>7} (granted {r['latencyMs']} ms): exit {r['status']}, xruns reported {r['xruns']}, "
                  f"cues heard {r['cues']}, intervals off {len(r['off'])}/{r['intervals']} {r['off'][:8]}, cpu {r['cpu']:.2f} s, "
                  f"gong's verdict {r['heard']}" + (f", xruns at (frame, lost) {r['xrunEvents']}" if r["xrunEvents"] else "")
                  + (f", stderr: {r['stderr']}" if r["stderr"] else "")
                  + (f"\n    on the graph's clock: intervals off {len(r['tapOff'])} {r['tapOff'][:8]} ({r['tapSaid']})"
                     if r["tapOff"] is not None else ""), flush=True)
finally:
    for process in busy:
        process.kill()
