#!/usr/bin/python3
"""mock_embed_server.py - an OpenAI-compatible embeddings server for the
tests and the benchmark, on 127.0.0.1 only, standard library only.

  mock_embed_server.py --port-file F --log F [--key K] [--dims N]
                       [--tpm N] [--rpm N] [--latency-ms N]
  mock_embed_server.py --vector TEXT --dims N   prints the vector of TEXT

POST /v1/embeddings (OpenAI: input array, model, dimensions,
encoding_format float|base64), /embed (text-embeddings-inference) and
/api/embed (Ollama).  The vector of a text is deterministic:
v[i] = (((sha256(text)[i % 32] + 7 * i) % 255) - 127) / 128, exact in
float32.  Tokens: ceil(bytes / 4) per text, at least 1 (usage.prompt_tokens).

With --key, a request without "Authorization: Bearer K" gets 401 with a
message that quotes the key it received (so the test sees the client
scrub it).  With --tpm / --rpm the server answers 429 with Retry-After
when a request would take the last 60 s past the limit (it is counted
anyway in the log as refused).

Faults: POST /control {"faults": ["429:2", "500", "slow:1500",
"malformed", "dims:3"], "down": false} queues one fault per following
embeddings request ("429:S" = 429 with Retry-After S seconds; "slow:MS" =
answer after MS; "dims:N" = vectors of N numbers); "down": true answers
503 to every request until set false.

The log has one JSON line per embeddings request: t (seconds, monotonic),
status, n, tokens, texts, model, dims, auth (whether the key matched).
"""
import argparse
import base64
import hashlib
import json
import math
import os
import struct
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


def vector(text, dims):
    h = hashlib.sha256(text.encode("utf-8")).digest()
    return [(((h[i % 32] + 7 * i) % 255) - 127) / 128.0 for i in range(dims)]


def tokens(text):
    return max(1, math.ceil(len(text.encode("utf-8")) / 4))


class State:
    def __init__(self, args):
        self.args = args
        self.lock = threading.Lock()
        self.faults = []
        self.down = False
        self.window = []  # (t, tokens) of accepted requests in the last 60 s
        self.log = open(args.log, "a", buffering=1) if args.log else None

    def record(self, entry):
        if self.log:
            with self.lock:
                self.log.write(json.dumps(entry) + "\n")


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, fmt, *args):
        pass

    def reply(self, code, body, headers=()):
        data = body if isinstance(body, bytes) else json.dumps(body).encode()
        self.send_response(code)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        for k, v in headers:
            self.send_header(k, v)
        self.end_headers()
        self.wfile.write(data)

    def do_POST(self):
        st = self.server.state
        length = int(self.headers.get("Content-Length", "0"))
        raw = self.rfile.read(length)
        if self.path == "/control":
            c = json.loads(raw)
            with st.lock:
                st.faults.extend(c.get("faults", []))
                if "down" in c:
                    st.down = bool(c["down"])
            return self.reply(200, {"ok": True})
        if self.path not in ("/v1/embeddings", "/embed", "/api/embed"):
            return self.reply(404, {"error": {"message": "no route " + self.path}})
        now = time.monotonic()
        try:
            req = json.loads(raw)
        except ValueError:
            return self.reply(400, {"error": {"message": "the body is not JSON"}})
        texts = req.get("inputs") if self.path == "/embed" else req.get("input")
        if isinstance(texts, str):
            texts = [texts]
        model = req.get("model", "")
        dims = int(req.get("dimensions") or st.args.dims)
        ntok = sum(tokens(t) for t in texts or [])
        entry = {"t": now, "n": len(texts or []), "tokens": ntok, "texts": texts, "model": model,
                 "dims": dims, "path": self.path}
        auth = self.headers.get("Authorization", "")
        entry["auth"] = not st.args.key or auth == "Bearer " + st.args.key
        if st.args.key and not entry["auth"]:
            entry["status"] = 401
            st.record(entry)
            got = auth[7:] if auth.startswith("Bearer ") else auth
            return self.reply(401, {"error": {"message": "Incorrect API key provided: " + got,
                                              "type": "invalid_request_error"}})
        fault = None
        with st.lock:
            down = st.down
            if not down and st.faults:
                fault = st.faults.pop(0)
            limited = False
            if not down and fault is None and (st.args.tpm or st.args.rpm):
                st.window = [(t, k) for t, k in st.window if now - t < 60]
                if st.args.rpm and len(st.window) + 1 > st.args.rpm:
                    limited = True
                if st.args.tpm and sum(k for _, k in st.window) + ntok > st.args.tpm:
                    limited = True
                if not limited:
                    st.window.append((now, ntok))
        if down:
            entry["status"] = 503
            st.record(entry)
            return self.reply(503, {"error": {"message": "the service is down"}})
        if not fault and limited:
            entry["status"] = 429
            st.record(entry)
            return self.reply(429, {"error": {"message": "rate limit reached"}},
                              [("Retry-After", "1")])
        out_dims = dims
        if fault:
            kind, _, arg = fault.partition(":")
            if kind == "429":
                entry["status"] = 429
                st.record(entry)
                return self.reply(429, {"error": {"message": "Rate limit reached for requests"}},
                                  [("Retry-After", arg or "1")])
            if kind == "500":
                entry["status"] = 500
                st.record(entry)
                return self.reply(500, {"error": {"message": "The server had an error"}})
            if kind == "malformed":
                entry["status"] = 200
                entry["malformed"] = True
                st.record(entry)
                return self.reply(200, b'{"object":"list","data":[{"index":0,"embedding":[0.1,')
            if kind == "slow":
                time.sleep(int(arg) / 1000.0)
            if kind == "dims":
                out_dims = int(arg)
        if st.args.latency_ms:
            time.sleep(st.args.latency_ms / 1000.0)
        vecs = [vector(t, out_dims) for t in texts]
        entry["status"] = 200
        entry["done"] = time.monotonic()
        st.record(entry)
        if self.path == "/embed":
            return self.reply(200, vecs)
        if self.path == "/api/embed":
            return self.reply(200, {"model": model, "embeddings": vecs, "prompt_eval_count": ntok})
        b64 = req.get("encoding_format") == "base64"
        data = []
        for i, v in enumerate(vecs):
            emb = base64.b64encode(struct.pack("<%df" % len(v), *v)).decode() if b64 else v
            data.append({"object": "embedding", "index": i, "embedding": emb})
        data.reverse()  # indexes, not order, place the vectors
        self.reply(200, {"object": "list", "data": data, "model": model,
                         "usage": {"prompt_tokens": ntok, "total_tokens": ntok}})


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--port-file")
    ap.add_argument("--log")
    ap.add_argument("--key")
    ap.add_argument("--dims", type=int, default=8)
    ap.add_argument("--tpm", type=int, default=0)
    ap.add_argument("--rpm", type=int, default=0)
    ap.add_argument("--latency-ms", type=int, default=0)
    ap.add_argument("--vector")
    args = ap.parse_args()
    if args.vector is not None:
        print(json.dumps(vector(args.vector, args.dims)))
        return
    srv = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    srv.daemon_threads = True
    srv.state = State(args)
    tmp = args.port_file + ".tmp"
    with open(tmp, "w") as f:
        f.write(str(srv.server_address[1]))
    os.rename(tmp, args.port_file)
    srv.serve_forever()


if __name__ == "__main__":
    main()
