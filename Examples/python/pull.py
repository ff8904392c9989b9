#!/usr/bin/env python3
"""Pulls a 3-second session from libgong into numpy, a buffer at a time, as a host with its own
audio callback would; prints its events and report. Given a WAV file of the same session
rendered offline (`gong render three.toml --bits float --volume=-6 -o three.wav`), checks that
what it pulled is that file, sample for sample.

Run: python3 Examples/python/pull.py [REFERENCE.wav]   (after `make lib`; GONG_LIBRARY names
libgong.so if it is not in .build/debug). Needs numpy (Debian: python3-numpy)."""
import ctypes
import json
import os
import struct
import sys

import numpy as np

here = os.path.dirname(os.path.abspath(__file__))
library = os.environ.get("GONG_LIBRARY", os.path.join(here, "..", "..", ".build", "debug", "libgong.so"))
gong = ctypes.CDLL(library)

GONG_OK, GONG_ERR_ARGUMENT, GONG_ERR_REFUSED, GONG_ERR_OVER = 0, 1, 4, 5
ABI_VERSION = 1
MAX_FRAMES = 8192  # GONG_MAX_PULL_FRAMES
RATE, CHANNELS = 48000, 2
string_out = ctypes.POINTER(ctypes.c_void_p)  # char **, freed with gong_free
float_out = ctypes.POINTER(ctypes.c_float)
gong.gong_abi_version.restype = ctypes.c_uint
gong.gong_session_create_pull_toml.argtypes = [
    ctypes.c_char_p, ctypes.c_char_p, ctypes.c_int, ctypes.c_int, ctypes.POINTER(ctypes.c_void_p), string_out]
gong.gong_session_start.argtypes = [ctypes.c_void_p]
gong.gong_render.argtypes = [ctypes.c_void_p, float_out, ctypes.c_int]
gong.gong_next_event.argtypes = [ctypes.c_void_p, ctypes.c_int, string_out]
gong.gong_session_report.argtypes = [ctypes.c_void_p, string_out]
gong.gong_free.argtypes = [ctypes.c_void_p]
gong.gong_session_free.argtypes = [ctypes.c_void_p]


def take(pointer):
    """The library's string as a Python one, freed."""
    if not pointer.value:
        return None
    text = ctypes.string_at(pointer.value).decode()
    gong.gong_free(pointer.value)
    return text


def read_float_wav(path):
    """The samples of a 32-bit float WAV file (what `gong render --bits float` writes), interleaved."""
    with open(path, "rb") as file:
        data = file.read()
    if data[:4] != b"RIFF" or data[8:12] != b"WAVE":
        sys.exit(f"pull.py: {path} is not a WAV file")
    offset, fmt, samples = 12, None, None
    while offset + 8 <= len(data):
        chunk, size = data[offset:offset + 4], struct.unpack_from("<I", data, offset + 4)[0]
        body = data[offset + 8:offset + 8 + size]
        if chunk == b"fmt ":
            tag, channels, rate, _, _, bits = struct.unpack_from("<HHIIHH", body)
            if tag == 0xFFFE:  # WAVE_FORMAT_EXTENSIBLE: the real tag opens the sub-format GUID
                tag = struct.unpack_from("<H", body, 24)[0]
            fmt = (tag, channels, rate, bits)
        elif chunk == b"data":
            samples = np.frombuffer(body, dtype="<f4")
        offset += 8 + size + (size & 1)
    if fmt != (3, CHANNELS, RATE, 32) or samples is None:
        sys.exit(f"pull.py: {path}: want 32-bit float, {CHANNELS} channels, {RATE} Hz; found (tag, channels, rate, bits) {fmt}")
    return samples


PATTERN = b'name = "three"\n[[phases]]\nname = "sit"\nlength = "3s"\ncue = "bowl"\n'

if gong.gong_abi_version() != ABI_VERSION:
    sys.exit(f"pull.py: libgong has ABI {gong.gong_abi_version()}, this script speaks {ABI_VERSION}")
session, error = ctypes.c_void_p(), ctypes.c_void_p()
if gong.gong_session_create_pull_toml(PATTERN, None, RATE, 3, ctypes.byref(session), ctypes.byref(error)) != GONG_ERR_ARGUMENT:
    sys.exit("pull.py: 3 channels were not refused")
print("refused:", take(error))
if gong.gong_session_create_pull_toml(PATTERN, b'{"gainDB": -6}', RATE, CHANNELS, ctypes.byref(session), ctypes.byref(error)) != GONG_OK:
    sys.exit(f"pull.py: {take(error)}")

buffer = np.ones(MAX_FRAMES * CHANNELS, dtype=np.float32)
pointer = buffer.ctypes.data_as(float_out)
# Before start: silence, and a status that says why.
if gong.gong_render(session, pointer, 256) != GONG_ERR_REFUSED or buffer[:512].any():
    sys.exit("pull.py: pulling before start did not give silence")
if gong.gong_render(session, pointer, MAX_FRAMES + 1) != GONG_ERR_ARGUMENT:
    sys.exit("pull.py: more than GONG_MAX_PULL_FRAMES frames were not refused")

gong.gong_session_start(session)
# Any size a callback may ask for, from 1 frame to the most, in turn.
sizes = [512, 441, 1, 8192, 1000, 7, 4096, 64]
pulled, call = [], 0
while True:
    frames = sizes[call % len(sizes)]
    call += 1
    status = gong.gong_render(session, pointer, frames)
    if status == GONG_ERR_OVER:
        break
    if status != GONG_OK:
        sys.exit(f"pull.py: gong_render returned {status}")
    pulled.append(buffer[:frames * CHANNELS].copy())
pulled = np.concatenate(pulled)

event = ctypes.c_void_p()
while (status := gong.gong_next_event(session, -1, ctypes.byref(event))) == GONG_OK:
    print("event:", json.dumps(json.loads(take(event)), sort_keys=True, separators=(",", ":")))
report = ctypes.c_void_p()
gong.gong_session_report(session, ctypes.byref(report))
print("report:", take(report))
gong.gong_session_free(session)
print(f"pulled: {len(pulled) // CHANNELS} frames in {call - 1} calls")

if len(sys.argv) > 1:
    reference = read_float_wav(sys.argv[1])
    # The session's frames exactly, then silence to the end of the buffer it ended in.
    if len(pulled) < len(reference):
        sys.exit(f"pull.py: pulled {len(pulled)} samples, the offline render has {len(reference)}")
    differing = np.flatnonzero(pulled[:len(reference)] != reference)
    if differing.size:
        first = differing[0]
        sys.exit(f"pull.py: {differing.size} samples differ from the offline render, the first at frame "
                 f"{first // CHANNELS}: {pulled[first]} against {reference[first]}")
    if pulled[len(reference):].any():
        sys.exit("pull.py: sound after the offline render's end")
    print(f"matches: {len(reference) // CHANNELS} frames, every sample equal to the offline render")
sys.exit(0 if status == GONG_ERR_OVER else 70)
