#!/usr/bin/env python3
"""Synthesise gong's sound bank: gong, gong-triple, gong-end, bowl, chime, woodblock, click, and
the bed brown-noise.

Every sound is modal synthesis: a struck object rings in a set of vibration modes, each a
decaying sinusoid with its own frequency, level and decay time. What makes a gong sound like a
gong and not a beep is in the choice of modes:

* Metal plates and bowls have *inharmonic* modes (frequency ratios that are not whole numbers),
  which is why they sound like bells rather than notes.
* Higher modes lose energy faster (radiation and internal friction grow with frequency), so the
  timbre darkens as the sound fades: decay time falls roughly as a power of frequency.
* Real objects are never perfectly round: each mode is split into two close frequencies, which
  beat against each other and give the slow shimmer ("wobble") of a gong or singing bowl.
* A large gong "blooms": energy flows from the low modes struck by the mallet into higher modes
  over the first second, so some partials swell before they decay.
* The mallet adds a short burst of filtered noise at the strike: soft (low-passed) for a felt
  mallet, brighter for wood.

Every file starts on the strike (its first sample is already non-zero: gong schedules the first
frame of a file on the exact frame of the cue) and fades to digital silence at the end.

Requirements: python3 with numpy, and the flac encoder (apt-get install flac). Run from anywhere:
    python3 Sounds/make_sounds.py [OUTPUT_DIR]
The output is deterministic: fixed random seeds, so a rerun reproduces the files.
"""

import os
import shutil
import subprocess
import sys

import numpy as np

RATE = 48000


def modal(duration, modes, seed, attack=0.004, start_level=0.15):
    """Sum of decaying, beating sinusoids.

    modes: list of (frequency Hz, amplitude, decay time constant s, beat Hz, bloom s).
    Each mode is a pair of sinusoids `beat` Hz apart (a split degenerate mode); `bloom` > 0 makes
    the mode swell over that time before it decays (energy arriving from other modes).
    The attack rises from `start_level` rather than zero so the very first sample is the strike.
    """
    rng = np.random.default_rng(seed)
    t = np.arange(int(duration * RATE)) / RATE
    out = np.zeros_like(t)
    for frequency, amplitude, decay, beat, bloom in modes:
        phase1, phase2 = rng.uniform(0, 2 * np.pi, 2)
        # cos, not sin: the mode is at its extreme at the strike, so the sum starts non-zero.
        pair = np.cos(2 * np.pi * (frequency - beat / 2) * t + phase1 * 0.1) \
            + 0.8 * np.cos(2 * np.pi * (frequency + beat / 2) * t + phase2 * 0.1)
        envelope = np.exp(-t / decay)
        if bloom > 0:
            envelope *= 1 - 0.85 * np.exp(-t / bloom)
        out += amplitude * envelope * pair
    rise = start_level + (1 - start_level) * (1 - np.exp(-t / attack))
    return out * rise


def mallet(duration, cutoff, seed, level, decay=0.006):
    """A burst of noise through a one-pole low-pass: the contact of the mallet with the metal."""
    rng = np.random.default_rng(seed)
    n = int(duration * RATE)
    noise = rng.standard_normal(n)
    alpha = np.exp(-2 * np.pi * cutoff / RATE)
    filtered = np.empty(n)
    state = 0.0
    for i in range(n):
        state = (1 - alpha) * noise[i] + alpha * state
        filtered[i] = state
    filtered /= np.max(np.abs(filtered)) + 1e-12
    t = np.arange(n) / RATE
    return level * filtered * np.exp(-t / decay)


def gong_modes(f0, seed, length_scale=1.0):
    """A large tam-tam-like meditation gong: a dense, inharmonic spectrum.

    The lowest modes follow the ratios of a flat circular plate's axisymmetric and diametral
    modes (about 1, 1.59, 2.14, 2.65, 3.16, 3.72, 4.36 — a rimmed, hammered gong stretches them a
    little); above them, a dense random field of modes stands in for the thousands of modes a
    hammered bronze plate has. Decay time falls with frequency (tau ~ f^-0.6, 4 s for the fundamental), and the modes
    above ~4 x f0 bloom over half a second, which is the gong's characteristic swell.
    """
    rng = np.random.default_rng(seed)
    modes = []
    for ratio, amplitude in [(1.0, 1.0), (1.59, 0.55), (2.14, 0.5), (2.65, 0.42), (3.16, 0.36),
                             (3.72, 0.3), (4.36, 0.26)]:
        frequency = f0 * ratio
        decay = length_scale * 4.0 * (f0 / frequency) ** 0.6
        modes.append((frequency, amplitude, decay, rng.uniform(0.2, 0.9), 0.0))
    for _ in range(60):
        frequency = f0 * rng.uniform(4.5, 40.0)
        amplitude = 0.22 * (f0 * 4.5 / frequency) ** 0.9 * rng.uniform(0.5, 1.0)
        decay = length_scale * 4.0 * (f0 / frequency) ** 0.6
        modes.append((frequency, amplitude, decay, rng.uniform(0.5, 3.0), rng.uniform(0.25, 0.8)))
    return modes


def gong(f0=110.0, seed=1, duration=18.0, length_scale=1.0, strike=1.0):
    body = modal(duration, gong_modes(f0, seed, length_scale), seed, attack=0.006)
    body = body / np.max(np.abs(body))
    hit = mallet(duration, cutoff=900, seed=seed + 100, level=0.25, decay=0.008)
    return strike * (body + hit)


def bowl():
    """A Tibetan singing bowl struck with a padded mallet.

    Mode ratios measured on singing bowls are close to 1 : 2.71 : 5.02 : 7.91 : 11.4 (the (2,0),
    (3,0), (4,0)… bending modes of a shell); each is a doublet split by the bowl's asymmetry,
    beating at 0.5–3 Hz, and the fundamental rings longest (about half a minute to silence).
    """
    f0 = 262.0
    modes = [
        (f0 * 1.00, 1.00, 5.0, 0.9, 0.0),
        (f0 * 2.71, 0.55, 3.2, 1.7, 0.0),
        (f0 * 5.02, 0.30, 1.8, 2.3, 0.0),
        (f0 * 7.91, 0.16, 1.0, 2.9, 0.0),
        (f0 * 11.4, 0.08, 0.6, 3.4, 0.0),
    ]
    body = modal(36.0, modes, seed=7, attack=0.003)
    body = body / np.max(np.abs(body))
    return body + mallet(36.0, cutoff=1500, seed=107, level=0.12, decay=0.004)


def chime():
    """A small, soft bell (koshi/tingsha-like): bell-like inharmonic ratios, a few seconds long."""
    f0 = 1046.5
    modes = [
        (f0 * 1.00, 1.00, 1.6, 1.2, 0.0),
        (f0 * 2.76, 0.35, 0.8, 2.5, 0.0),
        (f0 * 5.40, 0.12, 0.35, 3.5, 0.0),
        (f0 * 0.50, 0.25, 1.2, 0.7, 0.0),  # the hum tone below the strike note, as in bells
    ]
    body = modal(4.5, modes, seed=11, attack=0.0015)
    body = body / np.max(np.abs(body))
    return body + mallet(4.5, cutoff=4000, seed=111, level=0.08, decay=0.002)


def woodblock():
    """A hollow woodblock: two or three strongly damped modes and a bright knock."""
    modes = [
        (780.0, 1.0, 0.045, 0.0, 0.0),
        (1630.0, 0.45, 0.025, 0.0, 0.0),
        (2710.0, 0.2, 0.015, 0.0, 0.0),
    ]
    body = modal(0.3, modes, seed=13, attack=0.0008, start_level=0.3)
    body = body / np.max(np.abs(body))
    return body + mallet(0.3, cutoff=6000, seed=113, level=0.35, decay=0.0015)


def click():
    """A soft tap: a short noise transient and one quickly damped high mode."""
    body = modal(0.08, [(2200.0, 1.0, 0.008, 0.0, 0.0)], seed=17, attack=0.0005, start_level=0.4)
    body = body / np.max(np.abs(body))
    return body + mallet(0.08, cutoff=5000, seed=117, level=0.5, decay=0.0012)


def gong_triple():
    """Three strikes of the gong about 2.7 s apart, each a little different in strength."""
    strikes = [(0.0, 1.0, 21), (2.7, 0.82, 22), (5.4, 0.92, 23)]
    out = np.zeros(int(35.4 * RATE))
    for start, strength, seed in strikes:
        sound = gong(f0=110.0, seed=seed, duration=30.0, strike=strength)
        offset = int(start * RATE)
        out[offset:offset + len(sound)] += sound
    return out


def brown_noise(duration=12.0, seed=11):
    """Brown (red) noise: white noise integrated, its level falling 6 dB an octave.

    A slightly leaky integrator (pole at 0.9995, about 4 Hz) keeps it from wandering off, and a
    one-second equal-power crossfade of its end into its start makes the file loop without a seam
    (gong crossfades any bed again as it loads it; here the file is a clean loop on its own too).
    """
    rng = np.random.default_rng(seed)
    white = rng.standard_normal(int((duration + 1.0) * RATE))
    out = np.zeros_like(white)
    level = 0.0
    for index, sample in enumerate(white):
        level = 0.9995 * level + sample
        out[index] = level
    out -= np.mean(out)
    fade = RATE
    head, tail = out[:fade], out[-fade:]
    angle = np.linspace(0, np.pi / 2, fade, endpoint=False)
    looped = out[:-fade].copy()
    looped[:fade] = head * np.sin(angle) + tail * np.cos(angle)
    return looped


def finish(samples, peak_db, floor_db=-84.0, fade_seconds=0.5):
    """Normalise the peak, cut the tail where it falls below the floor, and fade to zero."""
    samples = samples / np.max(np.abs(samples)) * 10 ** (peak_db / 20)
    # Cut after the last sample whose short-term level is above the floor.
    window = int(0.05 * RATE)
    level = np.sqrt(np.convolve(samples ** 2, np.ones(window) / window, mode="same"))
    loud = np.nonzero(level > 10 ** (floor_db / 20))[0]
    end = min(len(samples), (loud[-1] if len(loud) else window) + 1)
    samples = samples[:end].copy()
    fade = min(int(fade_seconds * RATE), len(samples) // 4)
    samples[-fade:] *= np.cos(np.linspace(0, np.pi / 2, fade)) ** 2
    samples[-1] = 0.0
    return samples


def write_flac(samples, path):
    """24-bit samples, raw (little-endian, signed, mono), through the reference FLAC encoder at
    its tightest within FLAC's subset: -8 with the exhaustive model and precision searches
    (-e -p), 6.7 % smaller than sox's -8 for the same samples, bit for bit (lossless; only
    encoding is slower). No padding block: nothing adds tags to these files. --input-size: told the
    length, flac writes a seek table (a point every 10 s), as it does for a file."""
    pcm = np.clip(np.round(samples * 8388607), -8388608, 8388607).astype(np.int32)
    raw = pcm.astype("<i4").tobytes()
    packed = b"".join(raw[i:i + 3] for i in range(0, len(raw), 4))
    subprocess.run(
        ["flac", "--silent", "--force", "-8", "-e", "-p", "--no-padding",
         "--force-raw-format", "--endian=little", "--sign=signed", "--channels=1", "--bps=24",
         f"--sample-rate={RATE}", f"--input-size={len(packed)}", "-o", path, "-"],
        input=packed, check=True)


SOUNDS = {
    # name: (synthesis, peak dBFS)
    "gong": (lambda: gong(f0=110.0, seed=1, duration=30.0), -3.0),
    "gong-triple": (gong_triple, -3.0),
    "gong-end": (lambda: gong(f0=82.4, seed=3, duration=42.0, length_scale=1.4), -3.0),
    "bowl": (bowl, -3.0),
    "chime": (chime, -6.0),
    "woodblock": (woodblock, -6.0),
    "click": (click, -6.0),
}

# Beds loop under a session: normalised, but not cut or faded like a struck sound.
BEDS = {
    "brown-noise": (brown_noise, -6.0),
}


def main():
    if shutil.which("flac") is None:
        sys.exit("make_sounds.py: flac is needed to write FLAC (apt-get install flac)")
    output = sys.argv[1] if len(sys.argv) > 1 else os.path.dirname(os.path.abspath(__file__))
    os.makedirs(output, exist_ok=True)
    for name, (synthesise, peak_db) in SOUNDS.items():
        samples = finish(synthesise(), peak_db)
        assert abs(samples[0]) >= 1e-3, f"{name}: the first sample must be the strike"
        path = os.path.join(output, name + ".flac")
        write_flac(samples, path)
        print(f"{name:12s} {len(samples) / RATE:6.2f} s  peak {peak_db:+.1f} dBFS  -> {path}")
    for name, (synthesise, peak_db) in BEDS.items():
        samples = synthesise()
        samples = samples / np.max(np.abs(samples)) * 10 ** (peak_db / 20)
        path = os.path.join(output, name + ".flac")
        write_flac(samples, path)
        print(f"{name:12s} {len(samples) / RATE:6.2f} s  peak {peak_db:+.1f} dBFS  -> {path} (a bed)")


if __name__ == "__main__":
    main()
