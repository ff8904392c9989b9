#!/usr/bin/env python3
"""What `gong bells` costs between bells, against `sleep` for as long.

Starts `gong bells` with one bell a day (at a time just past, so none falls in the run), in
directories of the run's own, rings one bell with `gong ctl ring` so the waiting process has rung
before it is measured, then for SECONDS (default 600) counts the waiting process's CPU (its own
getrusage, given by `gong ctl status`) and its wake-ups (the times its threads gave up the
processor, from /proc), beside `sleep SECONDS` started at the same moment (its CPU from wait4).
The second status query is counted in gong's figures: one wake-up and its CPU.

Usage: bench/bells-idle.py [GONG] [SECONDS]   (default .build/release/gong, 600; DEVICE=null)
"""
import datetime
import json
import os
import shutil
import subprocess
import sys
import time

from idle_process import private_world, wake_ups_and_cpu

gong = os.path.realpath(sys.argv[1] if len(sys.argv) > 1 else ".build/release/gong")
seconds = float(sys.argv[2]) if len(sys.argv) > 2 else 600.0
device = os.environ.get("DEVICE", "null")
work, env = private_world("gong-bells-idle.")


def ctl(*words):
    done = subprocess.run([gong, "ctl", "--json", *words], env=env, capture_output=True, text=True, timeout=30)
    if done.returncode != 0:
        sys.exit(f"bells-idle: gong ctl {' '.join(words)} failed: {done.stderr.strip()}")
    return json.loads(done.stdout)["bells"]


past = (datetime.datetime.now() - datetime.timedelta(minutes=2)).strftime("%H:%M")
bells = subprocess.Popen(
    [gong, "bells", "--at", past, "--device", device], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
try:
    socket = os.path.join(env["XDG_RUNTIME_DIR"], "gong", f"{bells.pid}.sock")
    deadline = time.monotonic() + 60
    while not os.path.exists(socket):
        if bells.poll() is not None or time.monotonic() > deadline:
            sys.exit(f"bells-idle: gong bells did not start: {bells.stderr.read().decode().strip()}")
        time.sleep(0.05)
    ctl("ring")
    deadline = time.monotonic() + 30
    while ctl("status")["rungToday"] < 1:
        if time.monotonic() > deadline:
            sys.exit("bells-idle: gong ctl ring rang nothing in 30 s")
        time.sleep(0.5)
    before = ctl("status")
    woke_before, _, _ = wake_ups_and_cpu(bells.pid)
    sleeper = subprocess.Popen(["sleep", str(seconds)])
    time.sleep(seconds)
    woke_after, _, threads = wake_ups_and_cpu(bells.pid)
    after = ctl("status")
    _, _, usage = os.wait4(sleeper.pid, 0)
    gong_ms = after["cpuMs"] - before["cpuMs"]
    sleep_ms = (usage.ru_utime + usage.ru_stime) * 1000
    print(f"bells-idle: {seconds:g} s after one bell on {device}, one status query included")
    print(f"  gong bells  {gong_ms:8.3f} ms CPU  {woke_after - woke_before:5d} wake-ups  {threads} thread(s)")
    print(f"  sleep       {sleep_ms:8.3f} ms CPU  (the whole process, from wait4)")
    print(f"  the bell's own process: {after['ringingCpuMs']:.0f} ms CPU")
finally:
    bells.terminate()
    bells.wait(timeout=30)
    shutil.rmtree(work, ignore_errors=True)
