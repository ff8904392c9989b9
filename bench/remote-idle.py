#!/usr/bin/env python3
"""What `gong remote` costs while nothing happens: with no phone connected, then with one.

Starts `gong remote` on 127.0.0.1 in directories of the run's own (as `nobody` through setpriv
when run as root, which gong remote refuses to be), pairs one phone with a code from
`gong remote pair` (its HTTP connections then closed), and for SECONDS (default 600) counts the
remote's wake-ups (the times its threads gave up the processor, from /proc/PID/task/*/status)
and CPU (utime + stime from /proc/PID/stat) with no phone connected; then opens one WebSocket
as a phone does (it answers the remote's pings, as a browser does) and counts the same for
SECONDS more with nothing happening. No session runs and no `gong bells`. Also the remote's
threads and resident memory at the end.

Usage: bench/remote-idle.py [GONG] [SECONDS]   (default .build/release/gong, 600)
"""
import base64
import json
import os
import select
import shutil
import socket
import subprocess
import sys
import time

from idle_process import private_world, wake_ups_and_cpu

gong = os.path.realpath(sys.argv[1] if len(sys.argv) > 1 else ".build/release/gong")
seconds = float(sys.argv[2]) if len(sys.argv) > 2 else 600.0
work, env = private_world("gong-remote-idle.")
as_user = []
if os.geteuid() == 0:
    as_user = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", "--"]
    for directory, _, _ in os.walk(work):
        os.chown(directory, 65534, 65534)

with socket.socket() as probe:
    probe.bind(("127.0.0.1", 0))
    port = probe.getsockname()[1]


def resident_kb(pid):
    with open(f"/proc/{pid}/status") as status:
        return next(int(line.split()[1]) for line in status if line.startswith("VmRSS:"))


def http(method, path, body=None, headers=()):
    with socket.create_connection(("127.0.0.1", port), timeout=10) as connection:
        data = json.dumps(body).encode() if body is not None else b""
        head = [f"{method} {path} HTTP/1.1", f"Host: 127.0.0.1:{port}", f"Origin: http://127.0.0.1:{port}",
                f"Content-Length: {len(data)}", "Connection: close", *headers]
        connection.sendall(("\r\n".join(head) + "\r\n\r\n").encode() + data)
        reply = b""
        while chunk := connection.recv(65536):
            reply += chunk
    status = int(reply.split(b" ", 2)[1])
    return status, reply.split(b"\r\n\r\n", 1)[1]


def measure(what, pid, phone=None):
    woke_before, cpu_before, _ = wake_ups_and_cpu(pid)
    pings = 0
    ends = time.monotonic() + seconds
    while (left := ends - time.monotonic()) > 0:
        if phone is None:
            time.sleep(left)
            continue
        ready, _, _ = select.select([phone], [], [], left)
        if ready:
            pings += answer_pings(phone)
    woke_after, cpu_after, threads = wake_ups_and_cpu(pid)
    print(f"  {what:<34} {woke_after - woke_before:5d} wake-ups  {cpu_after - cpu_before:7.1f} ms CPU"
          f"  {threads} threads" + (f"  ({pings} pings answered)" if phone is not None else ""))


def answer_pings(phone):
    """Reads what came; a ping is answered with a pong carrying its payload (masked, as a client
    must). Returns how many pings there were."""
    data = phone.recv(65536)
    if not data:
        sys.exit("remote-idle: the remote closed the phone's WebSocket")
    pings = 0
    while len(data) >= 2:
        opcode, length = data[0] & 0x0F, data[1] & 0x7F
        offset = 2
        if length == 126:
            length, offset = int.from_bytes(data[2:4], "big"), 4
        payload, data = data[offset:offset + length], data[offset + length:]
        if opcode == 0x9:
            pings += 1
            mask = os.urandom(4)
            phone.sendall(bytes([0x8A, 0x80 | len(payload)]) + mask
                          + bytes(b ^ mask[i % 4] for i, b in enumerate(payload)))
    return pings


remote = subprocess.Popen(as_user + [gong, "remote", "--listen", f"127.0.0.1:{port}"], env=env,
                          stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
try:
    deadline = time.monotonic() + 60
    while True:
        try:
            if http("GET", "/")[0] == 200:
                break
        except OSError:
            pass
        if remote.poll() is not None or time.monotonic() > deadline:
            sys.exit(f"remote-idle: gong remote did not start: {remote.stderr.read().decode().strip()}")
        time.sleep(0.1)
    printed = subprocess.run(as_user + [gong, "remote", "pair", "--url", f"http://127.0.0.1:{port}/"], env=env,
                             capture_output=True, text=True, check=True).stdout
    code = next(line.replace(" ", "") for line in printed.splitlines()
                if line.strip() and line.replace(" ", "").isdigit())
    status, body = http("POST", "/api/pair", {"code": code, "name": "bench", "bearer": True})
    if status != 200:
        sys.exit(f"remote-idle: pairing failed: {status} {body.decode()}")
    token = json.loads(body)["token"]
    time.sleep(float(os.environ.get("SETTLE", "1")))  # the pairing's connections closed and gone

    print(f"remote-idle: gong remote, {seconds:g} s each, nothing happening")
    measure("no phone connected", remote.pid)

    phone = socket.create_connection(("127.0.0.1", port), timeout=10)
    key = base64.b64encode(os.urandom(16)).decode()
    phone.sendall(("\r\n".join([
        "GET /ws HTTP/1.1", f"Host: 127.0.0.1:{port}", f"Origin: http://127.0.0.1:{port}", "Upgrade: websocket",
        "Connection: Upgrade", "Sec-WebSocket-Version: 13", f"Sec-WebSocket-Key: {key}",
        f"Authorization: Bearer {token}"]) + "\r\n\r\n").encode())
    answer = phone.recv(65536)
    if b" 101 " not in answer.split(b"\r\n", 1)[0]:
        sys.exit(f"remote-idle: the WebSocket was refused: {answer[:200]!r}")
    time.sleep(1)  # its hello (and the status it is sent) are not idling
    if select.select([phone], [], [], 0)[0]:
        answer_pings(phone)
    measure("one phone connected (WebSocket)", remote.pid, phone)
    print(f"  resident memory {resident_kb(remote.pid) / 1024:.1f} MB; binary {os.path.getsize(gong) / 1e6:.2f} MB")
    phone.close()
finally:
    remote.terminate()
    remote.wait(timeout=30)
    shutil.rmtree(work, ignore_errors=True)
