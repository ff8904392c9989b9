#!/usr/bin/env python3
"""Plays a 3-second session through libgong with ctypes and prints its events, then its report.

Run: python3 Examples/python/play.py [DEVICE]   (default: null; after `make lib`;
GONG_LIBRARY names libgong.so if it is not in .build/debug)."""
import ctypes
import json
import os
import sys

here = os.path.dirname(os.path.abspath(__file__))
library = os.environ.get("GONG_LIBRARY", os.path.join(here, "..", "..", ".build", "debug", "libgong.so"))
gong = ctypes.CDLL(library)

GONG_OK, GONG_ERR_ARGUMENT, GONG_ERR_OVER = 0, 1, 5
ABI_VERSION = 1
string_out = ctypes.POINTER(ctypes.c_void_p)  # char **, freed with gong_free
gong.gong_abi_version.restype = ctypes.c_uint
gong.gong_session_create_toml.argtypes = [ctypes.c_char_p, ctypes.c_char_p, ctypes.c_char_p, ctypes.POINTER(ctypes.c_void_p), string_out]
gong.gong_session_start.argtypes = [ctypes.c_void_p]
gong.gong_next_event.argtypes = [ctypes.c_void_p, ctypes.c_int, string_out]
gong.gong_session_report.argtypes = [ctypes.c_void_p, string_out]
gong.gong_set_gain.argtypes = [ctypes.c_void_p, ctypes.c_double, string_out]
gong.gong_free.argtypes = [ctypes.c_void_p]
gong.gong_session_free.argtypes = [ctypes.c_void_p]


def take(pointer):
    """The library's string as a Python one, freed."""
    if not pointer.value:
        return None
    text = ctypes.string_at(pointer.value).decode()
    gong.gong_free(pointer.value)
    return text


PATTERN = b'name = "three"\n[[phases]]\nname = "sit"\nlength = "3s"\ncue = "bowl"\n'

if gong.gong_abi_version() != ABI_VERSION:
    sys.exit(f"play.py: libgong has ABI {gong.gong_abi_version()}, this script speaks {ABI_VERSION}")
device = (sys.argv[1] if len(sys.argv) > 1 else "null").encode()
session, error = ctypes.c_void_p(), ctypes.c_void_p()
if gong.gong_session_create_toml(PATTERN, b'{"rate": 7}', device, ctypes.byref(session), ctypes.byref(error)) != GONG_ERR_ARGUMENT:
    sys.exit("play.py: a rate of 7 Hz was not refused")
print("refused:", take(error))
if gong.gong_session_create_toml(PATTERN, None, device, ctypes.byref(session), ctypes.byref(error)) != GONG_OK:
    sys.exit(f"play.py: {take(error)}")
if gong.gong_set_gain(session, 99.0, ctypes.byref(error)) != GONG_ERR_ARGUMENT:
    sys.exit("play.py: a gain of 99 dB was not refused")
print("refused:", take(error))
gong.gong_session_start(session)
event = ctypes.c_void_p()
while (status := gong.gong_next_event(session, -1, ctypes.byref(event))) == GONG_OK:
    print("event:", json.dumps(json.loads(take(event)), sort_keys=True, separators=(",", ":")))
report = ctypes.c_void_p()
gong.gong_session_report(session, ctypes.byref(report))
print("report:", take(report))
gong.gong_session_free(session)
sys.exit(0 if status == GONG_ERR_OVER else 70)
