#!/usr/bin/env python3
"""Live benchmarks of the real-time engine, each against its bar in the same run, on the
PulseAudio null sink (paced by a real clock like a sound card):

1. Time from command start to the first audible frame (CLOCK_MONOTONIC before exec, against the
   first frame's audible time gong reports from the device's timestamps), over several runs,
   with the sink running as a sound card runs, and once from an idle sink.
2. CPU for a live 10-minute two-phase session at 48 kHz against `aplay` playing the same session
   rendered to a WAV file, on the same device, at equal latency: aplay's default (500 ms) and
   gong's default (10 ms). All four play side by side, so they share the machine's state; CPU is
   user + system time from the kernel, which counts the exact time on the CPU.

Usage: bench/live.py [--minutes N] [--rounds R]   (defaults: 10 minutes, 1 round; the
rounds run one after another and the median ratio is reported)
"""
import json, os, statistics, subprocess, sys, tempfile, time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
GONG = os.path.join(ROOT, ".build/release/gong")
def option(name, default):
    return float(sys.argv[sys.argv.index(name) + 1]) if name in sys.argv else default
minutes = option("--minutes", 10.0)
rounds = int(option("--rounds", 1))
SESSION = ["two-phase", "--set", f"meditation={int(minutes * 60 * 0.8)}s", "--set", f"reflection={int(minutes * 60 * 0.2)}s",
           "--rate", "48000", "--channels", "2"]
KEEPER = ["pacat", "--playback", "--raw", "--latency-msec=20", "--device=gong_test", "/dev/zero"]

subprocess.run(["swift", "build", "-c", "release", "--product", "gong"], cwd=ROOT, check=True, stdout=subprocess.DEVNULL)
subprocess.run([os.path.join(ROOT, "scripts/test-pulse.sh")], check=True)
scratch = tempfile.mkdtemp()

def first_frame_heard():
    start = time.monotonic()
    process = subprocess.Popen([GONG, "run", "box", "--cycles", "1", "--device", "pulse", "--json"],
                               stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    heard = None
    for line in process.stdout:
        event = json.loads(line)
        if event["type"] == "firstFrameAudible":
            heard = (event["audible"] - start) * 1000
            break
    process.kill()
    process.wait()
    return heard

# 1. Start-up. An idle null sink (no stream playing) first wakes up, for any client, aplay
# included; a sound card that is already running does not make anyone wait. The keeper stream
# keeps the sink running at a low latency, as a sound card runs.
subprocess.run(["pkill", "-f", "pacat --playback"])
time.sleep(3)
idle = first_frame_heard()
keeper = subprocess.Popen(KEEPER, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
time.sleep(1)
try:
    running = sorted(first_frame_heard() for _ in range(5))
    print(f"start to first frame heard, sink running (5 runs): median {running[2]:.0f} ms, max {running[-1]:.0f} ms (bar: 100 ms)")
    print(f"start to first frame heard, sink idle: {idle:.0f} ms (PulseAudio's null sink waking up)")

    # 2. CPU, live against aplay at equal latency, all four side by side.
    wav = os.path.join(scratch, "session.wav")
    subprocess.run([GONG, "render", *SESSION, "--quiet", "-o", wav], check=True)
    runs = {
        "aplay, default latency (500 ms)": ["aplay", "-q", "-D", "pulse", wav],
        "gong run --latency 500": [GONG, "run", *SESSION, "--device", "pulse", "--quiet", "--latency", "500"],
        "aplay --buffer-time=10000 (10 ms)": ["aplay", "-q", "-D", "pulse", "--buffer-time=10000", "--period-time=5000", wav],
        "gong run, default (10.7 ms)": [GONG, "run", *SESSION, "--device", "pulse", "--quiet"],
    }
    names = list(runs)
    ratios = {"500 ms": [], "10 ms": []}
    for round_number in range(rounds):
        processes = {}
        for name, command in runs.items():
            out = os.path.join(scratch, f"{round_number}-" + name.replace(" ", "_").replace("/", "") + ".time")
            processes[name] = (subprocess.Popen(["/usr/bin/time", "-f", "%U %S %e", "-o", out, *command],
                                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL), out)
        results = {}
        for name, (process, out) in processes.items():
            process.wait()
            user, system, wall = map(float, open(out).read().split()[-3:])
            results[name] = (user + system, wall)
        print(f"round {round_number + 1}: {minutes:g}-minute two-phase at 48 kHz stereo on pulse (CPU = user + system):")
        for name, (cpu, wall) in results.items():
            print(f"  {name:40s} {cpu:6.2f} s CPU over {wall:4.0f} s  ({cpu / wall * 100:.2f}% of a core)")
        ratios["500 ms"].append(results[names[1]][0] / results[names[0]][0])
        ratios["10 ms"].append(results[names[3]][0] / results[names[2]][0])
        print(f"  gong / aplay at 500 ms: {ratios['500 ms'][-1]:.2f}   at 10 ms: {ratios['10 ms'][-1]:.2f}   (bar: at most 1)")
    if rounds > 1:
        print(f"median over {rounds} rounds: gong / aplay at 500 ms {statistics.median(ratios['500 ms']):.2f}, "
              f"at 10 ms {statistics.median(ratios['10 ms']):.2f}")
finally:
    keeper.kill()
    subprocess.run([os.path.join(ROOT, "scripts/test-pulse.sh")], check=True)
