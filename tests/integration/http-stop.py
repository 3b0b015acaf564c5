#!/usr/bin/python3
"""http-stop.py - a graceful stop with requests in flight
(tests/integration/http-server.sh).

  http-stop.py HOST PORT PID

The node runs with the failpoint http.before_handler=sleep:2000@2, so its
second request takes 2 s.  A keep-alive connection K makes the first
request; another connection makes the second; while that one is in
progress the node gets SIGTERM; K then makes a third request.  The second
must be answered 200 (a request in progress finishes), the third 503 with
Connection: close in the error shape (nothing new starts during a stop),
and the node must exit.
"""
import http.client
import json
import os
import signal
import sys
import threading
import time

host, port, pid = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
k = http.client.HTTPConnection(host, port, timeout=10)
k.request("GET", "/healthz")
first = k.getresponse()
first.read()
if first.status != 200:
    sys.exit(f"first request: {first.status}")

second = {}


def slow():
    c = http.client.HTTPConnection(host, port, timeout=10)
    c.request("GET", "/healthz")
    r = c.getresponse()
    second["status"] = r.status
    second["body"] = r.read()


t = threading.Thread(target=slow)
t0 = time.monotonic()
t.start()
time.sleep(0.5)
os.kill(pid, signal.SIGTERM)
time.sleep(0.3)
k.request("GET", "/healthz")
third = k.getresponse()
body = json.loads(third.read())
t.join()
print(
    f"in flight at SIGTERM: {second.get('status')} after {time.monotonic() - t0:.2f} s; "
    f"new request during the stop: {third.status} ({body['error']['code']}), "
    f"Connection: {third.getheader('Connection')}"
)
if second.get("status") != 200:
    sys.exit("the request in progress did not finish")
if third.status != 503 or body["error"]["code"] != "unavailable":
    sys.exit("a request during the stop was not refused with 503")
if (third.getheader("Connection") or "").lower() != "close":
    sys.exit("no Connection: close during the stop")
