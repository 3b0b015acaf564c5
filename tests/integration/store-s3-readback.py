#!/usr/bin/python3
"""store-s3-readback.py ENDPOINT BUCKET SIG_ENDPOINT TOKEN - reads back
with boto3 (an independent client) what tests/unit/test_store_s3 left
under keep/ on s3rver: the multipart object and the small one byte for
byte (the pattern of the test); and asks the signature server
(sigv4-server.py, which implements ListMultipartUploads) that the aborted
writer left no upload and the committed one left mp/ok whole."""
import sys

import boto3
from botocore.config import Config

endpoint, bucket, sig_endpoint, token = sys.argv[1:5]
s3 = boto3.client("s3", endpoint_url=endpoint, region_name="us-east-1",
                  aws_access_key_id="S3RVER", aws_secret_access_key="S3RVER",
                  config=Config(s3={"addressing_style": "path"}))


def pattern(n):
    return bytes(((i * 131 + i // 7) & 0xFF) for i in range(n))


bad = 0
for key, size in (("keep/multipart", 12 * 1024 * 1024 + 17), ("keep/small", 1000)):
    body = s3.get_object(Bucket=bucket, Key=key)["Body"].read()
    if body != pattern(size):
        print("FAIL: %s: %d bytes read, not the %d written" % (key, len(body), size))
        bad += 1
    else:
        print("ok: %s read back byte for byte (%d bytes)" % (key, size))
sig = boto3.client("s3", endpoint_url=sig_endpoint, region_name="eu-west-3",
                   aws_access_key_id="AKIDTEST", aws_secret_access_key="sig-secret/+=",
                   aws_session_token=token, config=Config(s3={"addressing_style": "path"}))
body = sig.get_object(Bucket="sig", Key="p/mp/ok")["Body"].read()
if body != pattern(11 * 1024 * 1024):
    print("FAIL: p/mp/ok: %d bytes read, not the pattern" % len(body))
    bad += 1
else:
    print("ok: p/mp/ok (3 parts) read back byte for byte")
keys = [o["Key"] for o in sig.list_objects_v2(Bucket="sig", Prefix="p/mp/").get("Contents", [])]
if "p/mp/aborted" in keys:
    print("FAIL: the aborted writer left p/mp/aborted")
    bad += 1
uploads = sig.list_multipart_uploads(Bucket="sig").get("Uploads", [])
if uploads:
    print("FAIL: multipart uploads left: %s" % [(u["Key"], u["UploadId"]) for u in uploads])
    bad += 1
else:
    print("ok: no multipart upload left (ListMultipartUploads)")
sys.exit(1 if bad else 0)
