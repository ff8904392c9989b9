#!/usr/bin/env python3
"""Live benchmarks of issue 3, each against its bar in the same run, on the PulseAudio null sink
(paced by a real clock like a sound card; a parec on its monitor keeps it running, as a card is):

1. CPU for a live 10-minute two-phase session at 48 kHz versus `aplay` playing the same session
   rendered to a WAV file, on the same device (user + system seconds, from the kernel).
2. Time from command start to the first audible frame (CLOCK_MONOTONIC before exec, versus the
   first frame's audible time gong reports from the device's timestamps), over several runs.

Usage: bench/live.py [--minutes N] (default 10; the two sessions run side by side).
"""
import json, os, subprocess, sys, tempfile, time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
GONG = os.path.join(ROOT, ".build/release/gong")
minutes = float(sys.argv[sys.argv.index("--minutes") + 1]) if "--minutes" in sys.argv else 10.0
meditation = f"{int(minutes * 60 * 0.8)}s"
reflection = f"{int(minutes * 60 * 0.2)}s"
SESSION = ["two-phase", "--set", f"meditation={meditation}", "--set", f"reflection={reflection}", "--rate", "48000", "--channels", "2"]

subprocess.run(["swift", "build", "-c", "release", "--product", "gong"], cwd=ROOT, check=True, stdout=subprocess.DEVNULL)
subprocess.run([os.path.join(ROOT, "scripts/test-pulse.sh")], check=True)
scratch = tempfile.mkdtemp()
monitor = subprocess.Popen(["parec", "-d", "gong_test.monitor", "--raw", os.devnull])
time.sleep(0.5)

try:
    # 2. Start-up: command start → first frame heard (the device's own timestamp), over five runs,
    # with the sink already running as a sound card always is (a silent stream keeps it busy).
    # From an idle PulseAudio null sink every client waits for the sink's own ~2 s wake-up; that
    # is shown separately.
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
    idle = first_frame_heard()
    keeper = subprocess.Popen(["pacat", "--playback", "--raw", "/dev/zero"])
    time.sleep(1)
    running = sorted(first_frame_heard() for _ in range(5))
    keeper.kill()
    print(f"start to first frame heard, sink running (5 runs): median {running[2]:.0f} ms, max {running[-1]:.0f} ms (bar: 100 ms)")
    print(f"start to first frame heard, sink idle: {idle:.0f} ms (PulseAudio's null sink waking up)")

    # 1. CPU, live versus aplay, at aplay's default latency and at gong's 10 ms, all four side by
    # side (each process's own CPU, from the kernel via /usr/bin/time).
    wav = os.path.join(scratch, "session.wav")
    subprocess.run([GONG, "render", *SESSION, "--quiet", "-o", wav], check=True)
    runs = {
        "aplay, default latency": ["aplay", "-q", "-D", "pulse", wav],
        "gong run, --latency 500 --period 4096": [GONG, "run", *SESSION, "--device", "pulse", "--quiet", "--latency", "500", "--period", "4096"],
        "aplay, 10 ms (--buffer-time=10000)": ["aplay", "-q", "-D", "pulse", "--buffer-time=10000", "--period-time=5000", wav],
        "gong run, default 10 ms": [GONG, "run", *SESSION, "--device", "pulse", "--quiet"],
    }
    processes = {}
    for name, command in runs.items():
        out = os.path.join(scratch, name.replace(" ", "_").replace("/", "") + ".time")
        processes[name] = (subprocess.Popen(["/usr/bin/time", "-f", "%U %S %e", "-o", out, *command],
                                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL), out)
    results = {}
    for name, (process, out) in processes.items():
        process.wait()
        user, system, wall = map(float, open(out).read().split()[-3:])
        results[name] = (user + system, wall)
    print(f"{minutes:g}-minute two-phase at 48 kHz stereo on pulse (CPU = user + system):")
    for name, (cpu, wall) in results.items():
        print(f"  {name:40s} {cpu:6.2f} s CPU over {wall:4.0f} s  ({cpu / wall * 100:.2f}% of a core)")
    names = list(results)
    print(f"  gong / aplay at aplay's default latency: {results[names[1]][0] / results[names[0]][0]:.2f}")
    print(f"  gong / aplay at 10 ms:                   {results[names[3]][0] / results[names[2]][0]:.2f}   (bar: at most 1)")
finally:
    monitor.kill()
