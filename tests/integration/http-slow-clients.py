#!/usr/bin/python3
"""http-slow-clients.py - slow and silent clients against a loams-host node
(tests/integration/http-server.sh).

  http-slow-clients.py HOST PORT
      10 connections send a request's headers a byte a second and one sends
      nothing, for 6 s; meanwhile another client sends GET /healthz every
      50 ms on a keep-alive connection.  Fails unless that client's
      latency stays low (p95 under 100 ms, the slowest under 500 ms),
      the silent connection is closed by the server's idle timeout (2 s)
      and the slow ones, which never go idle, are still open at the end.

  http-slow-clients.py HOST PORT --limit N
      N silent connections fill http_max_connections; a request on one
      more connection must wait until the idle timeout closes one (at
      least 1 s), then succeed.
"""
import http.client
import socket
import sys
import threading
import time

host, port = sys.argv[1], int(sys.argv[2])


def silent(n):
    socks = []
    for _ in range(n):
        s = socket.create_connection((host, port))
        socks.append(s)
    return socks


def closed_within(s, seconds):
    """Seconds until the server closed s, or None."""
    s.settimeout(seconds)
    t0 = time.monotonic()
    try:
        got = s.recv(1)
    except socket.timeout:
        return None
    except ConnectionResetError:
        got = b""
    return time.monotonic() - t0 if got == b"" else None


def limit(n):
    held = silent(n)
    time.sleep(0.3)
    t0 = time.monotonic()
    c = http.client.HTTPConnection(host, port, timeout=20)
    c.request("GET", "/healthz")
    r = c.getresponse()
    body = r.read()
    waited = time.monotonic() - t0
    print(f"request over the limit of {n}: {r.status} after {waited:.2f} s")
    for s in held:
        s.close()
    if r.status != 200 or b'"ok"' not in body:
        sys.exit(f"status {r.status}: {body!r}")
    if waited < 1.0:
        sys.exit(f"answered after {waited:.2f} s: the limit of {n} connections did not hold")


def slow_clients():
    stop = threading.Event()
    slow = []
    head = b"GET /healthz HTTP/1.1\r\nHost: x\r\nX-Slow: " + b"a" * 100
    for _ in range(10):
        s = socket.create_connection((host, port))
        slow.append(s)

    def drip():
        i = 0
        while not stop.is_set() and i < len(head):
            for s in slow:
                s.sendall(head[i : i + 1])
            i += 1
            stop.wait(1.0)

    dripper = threading.Thread(target=drip)
    dripper.start()
    quiet = silent(1)[0]
    closed = {}
    watcher = threading.Thread(target=lambda: closed.update(t=closed_within(quiet, 6)))
    watcher.start()

    c = http.client.HTTPConnection(host, port, timeout=10)
    lat = []
    t_end = time.monotonic() + 6
    while time.monotonic() < t_end:
        t0 = time.monotonic()
        c.request("GET", "/healthz")
        r = c.getresponse()
        r.read()
        lat.append((time.monotonic() - t0) * 1000)
        if r.status != 200:
            sys.exit(f"status {r.status}")
        time.sleep(0.05)
    stop.set()
    dripper.join()
    watcher.join()
    # the slow ones are still open: the server answers once they finish
    still_open = 0
    for s in slow:
        s.settimeout(3)
        try:
            s.sendall(b"\r\n\r\n")
            if s.recv(12).startswith(b"HTTP/1.1"):
                still_open += 1
        except OSError:
            pass
        s.close()
    lat.sort()
    p50, p95, top = lat[len(lat) // 2], lat[int(len(lat) * 0.95)], lat[-1]
    print(
        f"{len(lat)} requests beside 10 slow and 1 silent connections: "
        f"p50 {p50:.1f} ms, p95 {p95:.1f} ms, max {top:.1f} ms; "
        f"silent one closed after {closed.get('t') or 0:.1f} s; {still_open} slow ones open"
    )
    if p95 > 100 or top > 500:
        sys.exit("the other client's latency grew")
    if closed.get("t") is None or not 1.0 <= closed["t"] <= 5.5:
        sys.exit("the silent connection was not closed by the idle timeout")
    if still_open != 10:
        sys.exit("slow connections were closed")


if len(sys.argv) > 3 and sys.argv[3] == "--limit":
    limit(int(sys.argv[4]))
else:
    slow_clients()
