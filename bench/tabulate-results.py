#!/usr/bin/env python3
"""Prints the tables of bench/RESULTS.md from the JSON reports in bench/results/ that
`gong bench jitter --json` and `gong bench compare --json` wrote, so the figures there are the
runs' own. Usage: bench/tabulate-results.py [DIR]"""
import glob, json, os, sys

directory = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(os.path.abspath(__file__)), "results")

def load(name):
    with open(os.path.join(directory, name)) as f:
        return json.load(f)

def us(value, digits=1):
    return "-" if value is None else f"{value:,.{digits}f}"

def runs(kind):
    found = []
    for server in ["pulseaudio", "pipewire"]:
        for load_threads in [0, 2]:
            name = f"{kind}-{server}-load{load_threads}.json"
            if os.path.exists(os.path.join(directory, name)):
                found.append((server, load_threads, load(name)))
    return found

print("### gong bench jitter, 1 minute each, `--device pulse` at the default 500 ms\n")
print("| server | busy threads | measure | count | min | p50 | p99 | p99.9 | max | beyond |")
print("|---|---|---|---|---|---|---|---|---|---|")
for server, busy, report in runs("jitter"):
    for key, label in [("wakeLatency", "wake-up, device grid (µs)"), ("timerLatency", "wake-up, 1 ms timer (µs)"),
                       ("renderTime", "render time (µs)"), ("cueError", "cue error (µs)")]:
        d = report[key]
        print(f"| {server} | {busy} | {label} | {d['count']} | {us(d['min'])} | {us(d['p50'])} | {us(d['p99'])} | "
              f"{us(d['p999'])} | {us(d['max'])} | {d['beyondRange']} |")
    clock = report["deviceClock"]
    jitter = clock["jitter"]
    print(f"| {server} | {busy} | device clock: {us(clock['driftPPM'])} ppm, report jitter (µs) | {jitter['count']} | "
          f"{us(jitter['min'])} | {us(jitter['p50'])} | {us(jitter['p99'])} | {us(jitter['p999'])} | {us(jitter['max'])} | "
          f"{jitter['beyondRange']} |")
    print(f"| {server} | {busy} | underruns {report['underruns']}, frames lost {report['framesLost']}, device losses "
          f"{report['deviceLosses']}; audio thread {report['priority']['policy']} nice {report['priority']['nice']}; "
          f"load {report['conditions']['loadAverageBefore'][0]} → {report['conditions']['loadAverageAfter'][0]} | | | | | | | |")

print("\n### gong bench compare, a woodblock every 2 s for 30 s (15 cues)\n")
print("| server | busy threads | method | found | p50 error | p99 error | max error | drift | last cue |")
print("|---|---|---|---|---|---|---|---|---|")
for server, busy, report in runs("compare"):
    for m in report["methods"]:
        def both(frames, ms):
            return "-" if frames is None else f"{frames} fr ({ms:.2f} ms)"
        print(f"| {server} | {busy} | {m['label']} | {m['found']}/{m['scheduled']} | "
              f"{both(m['p50Frames'], m['p50Milliseconds'])} | {both(m['p99Frames'], m['p99Milliseconds'])} | "
              f"{both(m['maxFrames'], m['maxMilliseconds'])} | {us(m['driftMillisecondsPerMinute'])} ms/min | "
              f"{us(m['lastErrorMilliseconds'])} ms |")
