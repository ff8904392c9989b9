#!/usr/bin/env python3
"""Two gong binaries side by side in one run, on ALSA's null device (no sound server, no card):
start-up and resident memory, for issue 34's "no worse than today's release".

For each binary, runs alternating with the other's:
  version   wall time of `gong --version` (process start and exit)
  first cue command start to the first `cue` line of `gong run box --device null --json`
            (the first block rendered and written; null gives no `firstFrameAudible`)
  sit       the peak resident memory (getrusage's ru_maxrss, which is VmHWM at exit) of
            `gong run two-phase --device null` played to its end: ALSA's null takes frames as fast
            as they come, so the 18-minute sit with its three gongs ends in a fraction of a second
  bells     VmRSS and VmHWM of `gong bells --every 6h --device null` 5 s after it started,
            asleep between bells
Each binary has a scratch HOME and cache of its own (XDG_CACHE_HOME), warmed by one sit first, so
prepared sounds are read back as a person's second session would. Medians are printed.

Usage: bench/side-by-side.py --gong LABEL=PATH --gong LABEL=PATH [--runs N]   (default 10 runs)
"""
import json, os, statistics, subprocess, sys, tempfile, time

runs = int(sys.argv[sys.argv.index("--runs") + 1]) if "--runs" in sys.argv else 10
gongs = [sys.argv[i + 1].split("=", 1) for i, a in enumerate(sys.argv) if a == "--gong"]
if len(gongs) < 2:
    sys.exit(__doc__)
scratch = tempfile.mkdtemp(prefix="gong-side-by-side-")
environments = {}
for label, _ in gongs:
    home = os.path.join(scratch, label)
    os.makedirs(os.path.join(home, "cache"))
    environments[label] = dict(os.environ, HOME=home, XDG_CACHE_HOME=os.path.join(home, "cache"),
                               XDG_CONFIG_HOME=os.path.join(home, "config"),
                               XDG_DATA_HOME=os.path.join(home, "data"), XDG_STATE_HOME=os.path.join(home, "state"))


def memory(pid):
    fields = {}
    with open(f"/proc/{pid}/status") as status:
        for line in status:
            key, _, value = line.partition(":")
            if key in ("VmRSS", "VmHWM"):
                fields[key] = int(value.split()[0]) / 1024  # MiB
    return fields["VmRSS"], fields["VmHWM"]


def version(path, env):
    start = time.monotonic()
    subprocess.run([path, "--version"], env=env, check=True, stdout=subprocess.DEVNULL)
    return (time.monotonic() - start) * 1000


def first_cue(path, env):
    start = time.monotonic()
    process = subprocess.Popen([path, "run", "box", "--device", "null", "--json", "--no-history"],
                               stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, env=env)
    heard = None
    for line in process.stdout:
        if json.loads(line)["type"] == "cue":
            heard = (time.monotonic() - start) * 1000
            break
    process.kill()
    process.wait()
    if heard is None:
        sys.exit(f"side-by-side: {path} played no cue on null")
    return heard


def peak(path, env, arguments):
    process = subprocess.Popen([path] + arguments, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                               stdin=subprocess.DEVNULL, env=env)
    _, status, usage = os.wait4(process.pid, 0)
    process.returncode = os.waitstatus_to_exitcode(status)
    if process.returncode != 0:
        sys.exit(f"side-by-side: {path} {' '.join(arguments)} failed ({process.returncode})")
    return usage.ru_maxrss / 1024  # MiB


def resident(path, env, arguments):
    process = subprocess.Popen([path] + arguments, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)
    time.sleep(5)
    if process.poll() is not None:
        sys.exit(f"side-by-side: {path} {' '.join(arguments)} ended early ({process.returncode})")
    figures = memory(process.pid)
    process.kill()
    process.wait()
    return figures


SIT = ["run", "two-phase", "--device", "null", "--no-history"]
BELLS = ["bells", "--every", "6h", "--device", "null"]
for label, path in gongs:
    peak(path, environments[label], SIT)  # warms the prepared-sound cache
results = {label: {"version": [], "first cue": [], "sit peak": [], "bells rss": [], "bells hwm": []}
           for label, _ in gongs}
for run in range(runs):
    for label, path in (gongs if run % 2 == 0 else list(reversed(gongs))):
        env, figures = environments[label], results[label]
        figures["version"].append(version(path, env))
        figures["first cue"].append(first_cue(path, env))
        if run < max(3, runs // 3):  # memory varies little: a few runs
            figures["sit peak"].append(peak(path, env, SIT))
            rss, hwm = resident(path, env, BELLS)
            figures["bells rss"].append(rss)
            figures["bells hwm"].append(hwm)

print(f"side-by-side: {runs} alternating runs (memory: {max(3, runs // 3)}), medians; ms, MiB")
print(f"{'':10s}" + "".join(f"{label:>14s}" for label, _ in gongs))
for key in ("version", "first cue", "sit peak", "bells rss", "bells hwm"):
    print(f"{key:10s}" + "".join(f"{statistics.median(results[label][key]):14.1f}" for label, _ in gongs))
for key in ("version", "first cue"):
    for label, _ in gongs:
        values = sorted(results[label][key])
        print(f"  {key} {label}: min {values[0]:.1f}, max {values[-1]:.1f}")
