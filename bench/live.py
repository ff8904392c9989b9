#!/usr/bin/env python3
"""Live benchmarks of the real-time engine, each against its bar in the same run, on a sound
server's null sink (paced by a real clock like a sound card):

1. Time from command start to the first audible frame (CLOCK_MONOTONIC before exec, against the
   first frame's audible time gong reports from the device's timestamps), over several runs,
   with the sink running as a sound card runs, and once from an idle sink.
2. CPU for a live two-phase session at 48 kHz against `aplay` playing the same session rendered
   to a WAV file on the same server: each at its own defaults (the bar: what a user runs), and
   with the same buffer and period (gong's default on both sides), on gong's own PulseAudio
   client and through ALSA's plugin, the route aplay takes. Each pair plays side by side, alone,
   so both share the machine's state; CPU is user + system time from the kernel.

Usage: bench/live.py [--minutes N] [--rounds R] [--pair LABEL-PREFIX] [--server pulseaudio|pipewire]
(defaults: 10 minutes, 1 round of the three pairs, on PulseAudio; with more rounds the median
ratio is reported)
"""
import json, os, statistics, subprocess, sys, tempfile, time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
def option(name, default):
    return float(sys.argv[sys.argv.index(name) + 1]) if name in sys.argv else default
minutes = option("--minutes", 10.0)
rounds = int(option("--rounds", 1))
SESSION = ["two-phase", "--set", f"meditation={int(minutes * 60 * 0.8)}s", "--set", f"reflection={int(minutes * 60 * 0.2)}s",
           "--rate", "48000", "--channels", "2"]
KEEPER = ["pacat", "--playback", "--raw", "--latency-msec=20", "--device=gong_test", "--client-name=gong-bench-keeper", "/dev/zero"]
server = sys.argv[sys.argv.index("--server") + 1] if "--server" in sys.argv else "pulseaudio"
env = dict(os.environ)
if server == "pipewire":
    address = subprocess.run([os.path.join(ROOT, "scripts/test-pipewire.sh")], check=True, capture_output=True, text=True).stdout.strip()
    env["PULSE_SERVER"] = address.splitlines()[-1]

# gong as `make build` makes it: the binary people run.
subprocess.run(["make", "--no-print-directory", "build"], cwd=ROOT, check=True, stdout=subprocess.DEVNULL)
GONG = os.path.join(ROOT, subprocess.run(["make", "-s", "gong-path"], cwd=ROOT, check=True, capture_output=True, text=True).stdout.strip())
subprocess.run([os.path.join(ROOT, "scripts/test-pulse.sh")], check=True)
scratch = tempfile.mkdtemp()

def first_frame_heard():
    start = time.monotonic()
    process = subprocess.Popen([GONG, "run", "box", "--cycles", "1", "--json"],
                               stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, env=env)
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
keeper = subprocess.Popen(KEEPER, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)
time.sleep(3)  # the keeper itself waits out the idle sink's wake-up
try:
    running = sorted(first_frame_heard() for _ in range(5))
    print(f"start to first frame heard, sink running (5 runs): median {running[2]:.0f} ms, max {running[-1]:.0f} ms (bar: 100 ms)")
    print(f"start to first frame heard, sink idle: {idle:.0f} ms (PulseAudio's null sink waking up)")

    # 2. CPU, live against aplay at equal latency: each pair side by side, alone on the machine,
    # so both share its state and nothing else competes.
    wav = os.path.join(scratch, "session.wav")
    subprocess.run([GONG, "render", *SESSION, "--quiet", "-o", wav], check=True)
    # At the defaults is what a user runs: aplay's through ALSA's plugin is 24 000 frames in
    # periods of 6 000 (500 ms); gong's, with no --device, is its own PulseAudio client at 500 ms
    # in periods of 6 000 (it takes back what a key press changes). Through ALSA's plugin, which
    # cannot take back, gong keeps 150 ms in periods of 2 400: that route is measured at its
    # default and with aplay at the same buffer.
    aplay150 = ["aplay", "-q", "-D", "pulse", "--buffer-size=7200", "--period-size=2400", wav]
    pairs = {
        "defaults, gong's own client": (["aplay", "-q", "-D", "pulse", wav], [GONG, "run", *SESSION, "--quiet"]),
        "defaults, via ALSA's plugin": (["aplay", "-q", "-D", "pulse", wav], [GONG, "run", *SESSION, "--device", "default", "--quiet"]),
        "150 ms both, via ALSA's plugin": (aplay150, [GONG, "run", *SESSION, "--device", "default", "--quiet"]),
    }
    if "--pair" in sys.argv:  # the pairs whose label starts so: "defaults", "defaults, gong's" or "150"
        pairs = {label: commands for label, commands in pairs.items() if label.startswith(sys.argv[sys.argv.index("--pair") + 1])}
    ratios = {label: [] for label in pairs}

    def cpu_side_by_side(commands):
        runs = []
        for index, command in enumerate(commands):
            out = os.path.join(scratch, f"{index}.time")
            runs.append((subprocess.Popen(["/usr/bin/time", "-f", "%U %S %e", "-o", out, *command],
                                          stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env), out))
        results = []
        for process, out in runs:
            process.wait()
            user, system, wall = map(float, open(out).read().split()[-3:])
            results.append((user + system, wall))
        return results

    print(f"{minutes:g}-minute two-phase at 48 kHz stereo on {server}'s null sink, CPU = user + system:")
    for round_number in range(rounds):
        for label, (aplay, gong) in pairs.items():
            (aplay_cpu, aplay_wall), (gong_cpu, gong_wall) = cpu_side_by_side([aplay, gong])
            ratios[label].append(gong_cpu / aplay_cpu)
            print(f"  round {round_number + 1}, {label:24s} aplay {aplay_cpu:6.2f} s over {aplay_wall:4.0f} s ({aplay_cpu / aplay_wall * 100:.2f}% of a core)"
                  f"   gong {gong_cpu:6.2f} s over {gong_wall:4.0f} s ({gong_cpu / gong_wall * 100:.2f}%)   gong / aplay {ratios[label][-1]:.2f}")
    for label, values in ratios.items():
        print(f"gong / aplay at {label}: median {statistics.median(values):.2f} over {len(values)} round(s)   (bar: at most 1)")
finally:
    keeper.kill()
    subprocess.run([os.path.join(ROOT, "scripts/test-pulse.sh")], check=True)
    subprocess.run([os.path.join(ROOT, "scripts/test-pipewire.sh")], check=True, stdout=subprocess.DEVNULL)
