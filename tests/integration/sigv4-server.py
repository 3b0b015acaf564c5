#!/usr/bin/python3
"""sigv4-server.py PORTFILE AKID SECRET REGION [TOKEN] - a tiny S3 look-alike
on 127.0.0.1 that checks every request's SigV4 signature with botocore (an
independent signer): it recomputes the signature over the request it
received and answers 403 SignatureDoesNotMatch when it differs, when
host, x-amz-date or x-amz-content-sha256 is not signed, or when TOKEN is
given and x-amz-security-token is missing or unsigned.  Requests that
pass are served from memory (PUT, GET with Range, HEAD, DELETE,
ListObjectsV2 with max-keys and continuation) so that a client sees a
working store.  It writes its port to PORTFILE, then one line per
request to stdout: "ok METHOD PATH?QUERY" or "bad METHOD PATH?QUERY: why"."""
import hashlib
import sys
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qsl, unquote, urlsplit
from xml.sax.saxutils import escape

from botocore.auth import SigV4Auth
from botocore.awsrequest import AWSRequest
from botocore.credentials import Credentials

portfile, akid, secret, region = sys.argv[1:5]
token = sys.argv[5] if len(sys.argv) > 5 else None
objects = {}
flaky = {}
uploads = {}  # upload id -> (key, {part number: bytes})
next_upload = [0]


def check(h, body):
    auth = h.headers.get("Authorization", "")
    if not auth.startswith("AWS4-HMAC-SHA256 "):
        return "no SigV4 Authorization header"
    parts = dict(p.strip().split("=", 1) for p in auth[len("AWS4-HMAC-SHA256 "):].split(","))
    cred = parts["Credential"].split("/")
    if cred[0] != akid or cred[2] != region or cred[3] != "s3":
        return "credential scope %s" % "/".join(cred[1:])
    signed = parts["SignedHeaders"].split(";")
    need = ["host", "x-amz-date", "x-amz-content-sha256"] + (["x-amz-security-token"] if token else [])
    for n in need:
        if n not in signed:
            return "%s is not signed" % n
    if token and h.headers.get("x-amz-security-token") != token:
        return "wrong session token"
    sha = h.headers.get("x-amz-content-sha256")
    if sha != "UNSIGNED-PAYLOAD" and sha != hashlib.sha256(body).hexdigest():
        return "x-amz-content-sha256 does not match the body"
    headers = {n: h.headers.get(n, "") for n in signed}
    req = AWSRequest(method=h.command, url="http://%s%s" % (h.headers["Host"], h.path),
                     headers=headers, data=body)
    req.context["timestamp"] = h.headers["x-amz-date"]
    signer = SigV4Auth(Credentials(akid, secret, token), "s3", region)
    # S3 signs the path as sent (no second encoding), like botocore's S3 signer
    signer._normalize_url_path = lambda p: p
    cr = signer.canonical_request(req)
    want = signer.signature(signer.string_to_sign(req, cr), req)
    if want != parts["Signature"]:
        return "signature differs; canonical request was:\n" + cr
    return None


class H(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *a):
        pass

    def answer(self, code, body=b"", headers=None):
        self.send_response(code)
        for k, v in (headers or {}).items():
            self.send_header(k, v)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)

    def handle_any(self):
        n = int(self.headers.get("Content-Length", "0") or 0)
        body = self.rfile.read(n) if n else b""
        why = check(self, body)
        print(("ok %s %s" if why is None else "bad %s %s: " + why.replace("%", "%%")) % (self.command, self.path), flush=True)
        if why is not None:
            return self.answer(403, b"<Error><Code>SignatureDoesNotMatch</Code><Message>"
                               + escape(why.splitlines()[0]).encode() + b"</Message></Error>")
        u = urlsplit(self.path)
        q = dict(parse_qsl(u.query, keep_blank_values=True))
        path = unquote(u.path)
        bucket, _, key = path.lstrip("/").partition("/")
        if self.command == "GET" and key == "" and q.get("list-type") == "2":
            prefix, after = q.get("prefix", ""), q.get("continuation-token") or q.get("start-after", "")
            keys = sorted(k for k in objects if k.startswith(prefix) and k > after)
            page = keys[: int(q.get("max-keys", "1000"))]
            trunc = len(page) < len(keys)
            x = "<ListBucketResult><IsTruncated>%s</IsTruncated>" % ("true" if trunc else "false")
            x += "".join("<Contents><Key>%s</Key></Contents>" % escape(k) for k in page)
            if trunc:
                x += "<NextContinuationToken>%s</NextContinuationToken>" % escape(page[-1])
            return self.answer(200, (x + "</ListBucketResult>").encode())
        if "flaky-" in key and flaky.get(key, 0) < 2:
            # the first two requests for a "flaky-" key: 503 SlowDown
            flaky[key] = flaky.get(key, 0) + 1
            return self.answer(503, b"<Error><Code>SlowDown</Code>"
                               b"<Message>Please reduce your request rate.</Message></Error>")
        if key == "" and self.command == "GET" and "uploads" in q:
            x = "<ListMultipartUploadsResult><IsTruncated>false</IsTruncated>"
            x += "".join("<Upload><Key>%s</Key><UploadId>%s</UploadId></Upload>" % (escape(k), u)
                         for u, (k, _) in sorted(uploads.items()))
            return self.answer(200, (x + "</ListMultipartUploadsResult>").encode())
        if self.command == "POST" and "uploads" in q:
            next_upload[0] += 1
            uid = "up%d+/=" % next_upload[0]
            uploads[uid] = (key, {})
            return self.answer(200, ("<InitiateMultipartUploadResult><Key>%s</Key><UploadId>%s"
                                     "</UploadId></InitiateMultipartUploadResult>"
                                     % (escape(key), escape(uid))).encode())
        if "uploadId" in q:
            up = uploads.get(q["uploadId"])
            if up is None or up[0] != key:
                return self.answer(404, b"<Error><Code>NoSuchUpload</Code><Message>no</Message></Error>")
            if self.command == "PUT" and "failpart-" in key and q["partNumber"] == "2":
                return self.answer(400, b"<Error><Code>EntityTooSmall</Code>"
                                   b"<Message>refused on purpose</Message></Error>")
            if self.command == "PUT":
                up[1][int(q["partNumber"])] = body
                return self.answer(200, b"", {"ETag": '"%s"' % hashlib.md5(body).hexdigest()})
            if self.command == "DELETE":
                del uploads[q["uploadId"]]
                return self.answer(204)
            if self.command == "POST":
                import re
                nums = [int(n) for n in re.findall(r"<PartNumber>(\d+)</PartNumber>", body.decode())]
                if nums != sorted(up[1]) or not nums:
                    return self.answer(400, b"<Error><Code>InvalidPart</Code><Message>parts</Message></Error>")
                objects[key] = b"".join(up[1][n] for n in nums)
                del uploads[q["uploadId"]]
                return self.answer(200, b"<CompleteMultipartUploadResult><Key>k</Key></CompleteMultipartUploadResult>")
        if self.command == "PUT":
            objects[key] = body
            return self.answer(200, b"", {"ETag": '"%s"' % hashlib.md5(body).hexdigest()})
        if self.command == "DELETE":
            objects.pop(key, None)
            return self.answer(204)
        if key not in objects:
            return self.answer(404, b"<Error><Code>NoSuchKey</Code><Message>no</Message></Error>")
        data = objects[key]
        rng = self.headers.get("Range")
        if rng:
            a, _, b = rng[len("bytes="):].partition("-")
            data = data[int(a): (int(b) + 1 if b else len(data))]
            return self.answer(206, data)
        return self.answer(200, data)

    do_GET = do_PUT = do_HEAD = do_DELETE = do_POST = handle_any


srv = ThreadingHTTPServer(("127.0.0.1", 0), H)
with open(portfile + ".tmp", "w") as f:
    f.write(str(srv.server_address[1]))
import os
os.rename(portfile + ".tmp", portfile)
srv.serve_forever()
