#!/bin/bash
# store-s3-link.sh - links apply into an S3 bucket: `serve --store
# s3://BUCKET/PREFIX` against s3rver on 127.0.0.1 runs a link into an
# Iceberg table and one into a collection while it is killed with SIGKILL
# several times and crashes with files written but not committed
# (link.before_commit, store.write); a last node catches up and runs GC
# with no grace.  Then `table scan`, `collection dump` and `search` with
# --store hold every record exactly once; the Iceberg metadata names
# s3:// URIs whose objects boto3 finds with the sizes the manifests
# record; and the collection's objects in the bucket (listed by boto3) are
# exactly its newest manifest and what it references: GC deleted exactly
# the orphans.
[ -n "${BASH_VERSION:-}" ] || exec bash "$0" "$@"
set -u
. "$(dirname "$0")/link-lib.sh"
. "$src/tests/integration/s3rver-env.sh"

N=400
bucket=loams-test
loams_s3rver_install || die "s3rver is not installed"
loams_s3rver_start "$work/s3rver" "$bucket" || die "s3rver did not start"
s3_cleanup() { loams_s3rver_stop; link_cleanup; }
trap s3_cleanup EXIT
store_args=(--store "s3://$bucket/node1" --store-endpoint "$loams_s3rver_endpoint")
t0=$SECONDS

# start_s3_node NAME [ENV=VALUE...]: start_node with the S3 store.
start_s3_node() {
  local name=$1
  shift
  env "$@" LOAMS_LOG_LEVEL=info "$host" serve --data-dir "$data" --node-id "$name" \
    "${plugin_args[@]}" "${store_args[@]}" --lease-ttl 1000ms --poll-interval 200ms \
    --stop-timeout 5000ms 2>>"$work/$name.log" &
  pid[$name]=$!
}

sql "CREATE STREAM t.s WITH (partitions = 2);
     CREATE LINK t.lt FROM STREAM t.s INTO TABLE t.t
       TRANSFORM (SELECT json_get_str(value, '\$.id') AS id, json_get_int(value, '\$.n') AS n)
       WITH (batch_bytes = '1KiB', batch_interval = '150ms');
     CREATE LINK t.lc FROM STREAM t.s INTO COLLECTION t.c
       TRANSFORM (SELECT json_get_str(value, '\$.id') AS _pk,
                         'record ' || json_get_str(value, '\$.id') AS body)
       WITH (batch_bytes = '1KiB', batch_interval = '150ms', maintenance_interval = '0s')" \
  >/dev/null || die "CREATE failed"
produce() { # produce FROM TO
  for i in $(seq "$1" "$2"); do echo "{\"id\":\"r$i\",\"n\":$i}"; done |
    "$host" produce t.s --data-dir "$data" --key-field id >/dev/null || die "produce failed"
}

# 1. Crashes with files written to the bucket and not committed.
produce 1 160
start_s3_node a LOAMS_FAILPOINTS=link.before_commit=crash@3
wait_dead a 20
start_s3_node b LOAMS_FAILPOINTS=store.write=crash@9
wait_dead b 20
ok "two crashes with files written and not committed"

# 2. SIGKILL while applying, four times, records arriving between kills.
for k in 1 2 3 4; do
  start_s3_node "k$k"
  produce $((160 + (k - 1) * 50 + 1)) $((160 + k * 50))
  sleep "0.$((RANDOM % 8 + 4))"
  kill -KILL "${pid[k$k]}"
  wait "${pid[k$k]}" 2>/dev/null
  unset "pid[k$k]"
done
produce 361 $N
ok "4 SIGKILLs while applying"

# 3. A last node catches up; GC (no grace) deletes the orphans.
start_s3_node z LOAMS_GC_GRACE=0s LOAMS_GC_INTERVAL=300ms
wait_caught_up 40
t=0
while :; do
  left=$("$host" gc status --json --data-dir "$data" |
    /usr/bin/python3 -c 'import json,sys; d=json.load(sys.stdin); print(d["intent"]["count"]+d["orphan"]["count"]+d["obsolete"]["count"])')
  [ "$left" = 0 ] && break
  sleep 0.3
  t=$((t + 1))
  [ "$t" -lt 60 ] || die "GC records left after 18 s: $left"
done
grep -q "pass done: [1-9][0-9]* object(s) deleted" "$work/z.log" || die "GC deleted nothing"
stop_node z
ok "caught up; GC emptied its records"

# 4. Every record exactly once, read through --store.
rows=$("$host" table scan t.t --limit 1000000 --data-dir "$data" "${plugin_args[@]}" \
  "${store_args[@]}" | counts id) || die "table scan failed"
[ "$rows" = "$N $N" ] || die "table t.t holds '$rows' rows (all, distinct), want $N $N"
docs=$("$host" collection dump t.c --data-dir "$data" "${plugin_args[@]}" "${store_args[@]}" |
  counts _pk) || die "collection dump failed"
[ "$docs" = "$N $N" ] || die "collection t.c holds '$docs' documents, want $N $N"
hit=$("$host" search t.c "record r123" --k 3 --json --data-dir "$data" "${plugin_args[@]}" \
  "${store_args[@]}") || die "search failed"
echo "$hit" | grep -q '"r123"' || die "search did not find r123: $hit"
# without --store the data dir's own objects/ is empty: nothing to read
"$host" table scan t.t --limit 10 --data-dir "$data" "${plugin_args[@]}" >/dev/null 2>&1 &&
  [ -n "$(ls -A "$data/objects" 2>/dev/null)" ] && die "objects were written to the data dir"
ok "table, collection and search hold every record once ($N)"

# 5. The bucket, read by boto3.
/usr/bin/python3 - "$loams_s3rver_endpoint" "$bucket" <<'PY' || die "bucket check: see above"
import io, json, sys, warnings
warnings.simplefilter("ignore")  # python3-avro on Iceberg's map logical type
import boto3
from botocore.config import Config
import avro.datafile, avro.io
endpoint, bucket = sys.argv[1:3]
s3 = boto3.client("s3", endpoint_url=endpoint, region_name="us-east-1",
                  aws_access_key_id="S3RVER", aws_secret_access_key="S3RVER",
                  config=Config(s3={"addressing_style": "path"}))
def keys(prefix):
    out, tok = [], None
    while True:
        kw = {"Bucket": bucket, "Prefix": prefix}
        if tok:
            kw["ContinuationToken"] = tok
        r = s3.list_objects_v2(**kw)
        out += [o["Key"] for o in r.get("Contents", [])]
        if not r.get("IsTruncated"):
            return out
        tok = r["NextContinuationToken"]
def get(key):
    return s3.get_object(Bucket=bucket, Key=key)["Body"].read()
def key_of(uri):
    assert uri.startswith("s3://%s/" % bucket), uri
    return uri[len("s3://%s/" % bucket):]
def avro_records(data):
    return list(avro.datafile.DataFileReader(io.BytesIO(data), avro.io.DatumReader()))
# the table: the newest metadata, its manifest list, manifests, data files
# the newest metadata: the highest sequence number (NNNNN-UUID.metadata.json)
metas = sorted(k for k in keys("node1/t/t/metadata/")
               if k.endswith(".metadata.json") and k.rsplit("/", 1)[1][0].isdigit())
meta = json.loads(get(metas[-1]))
assert meta["location"].startswith("s3://%s/node1/" % bucket), meta["location"]
snap = [s for s in meta["snapshots"] if s["snapshot-id"] == meta["current-snapshot-id"]][0]
files = rows = 0
for m in avro_records(get(key_of(snap["manifest-list"]))):
    for e in avro_records(get(key_of(m["manifest_path"]))):
        if e["status"] == 2:
            continue
        df = e["data_file"]
        size = s3.head_object(Bucket=bucket, Key=key_of(df["file_path"]))["ContentLength"]
        assert size == df["file_size_in_bytes"], (df["file_path"], size)
        assert get(key_of(df["file_path"]))[:4] == b"PAR1"
        files += 1
        rows += df["record_count"]
assert rows == 400, rows
print("ok: table metadata names s3:// URIs; %d data files, %d rows, sizes as recorded" % (files, rows))
# the collection: exactly the newest manifest and what it references
found = set(keys("node1/t/c/"))
manifests = sorted(k for k in found if "/manifest/" in k)
assert len(manifests) == 1, manifests
m = json.loads(get(manifests[-1]))
refs = {manifests[-1]}
for s in m["splits"]:
    refs.add("node1/" + s["key"])
    if s.get("deletes"):
        refs.add("node1/" + (s["deletes"] if isinstance(s["deletes"], str) else s["deletes"]["key"]))
assert found == refs, (sorted(found - refs), sorted(refs - found))
print("ok: the collection's %d objects are exactly its manifest and what it references" % len(found))
PY
ok "done in $((SECONDS - t0)) s"
