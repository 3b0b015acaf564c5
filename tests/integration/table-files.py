# table-files.py - python3-avro, an independent reader, follows an Iceberg
# table the way a file-based reader does: metadata/version-hint.text ->
# v<N>.metadata.json -> the current snapshot's manifest list -> manifests ->
# live data files.  Checks every field-id the spec gives manifest lists and
# manifests, the header metadata Iceberg requires, and the snapshot summary;
# prints the data file URIs (one per line) on stdout and the summary as JSON
# on stderr's last line.
#
#   python3 table-files.py TABLE_DIR
import json, sys
import avro.datafile, avro.io

table = sys.argv[1]
hint = open(table + "/metadata/version-hint.text").read().strip()
meta = json.load(open("%s/metadata/v%s.metadata.json" % (table, hint)))
assert meta["format-version"] == 2, "format-version"
for k in ("table-uuid", "location", "last-sequence-number", "last-updated-ms", "last-column-id",
          "schemas", "current-schema-id", "partition-specs", "default-spec-id",
          "last-partition-id", "sort-orders", "default-sort-order-id", "snapshots",
          "snapshot-log", "metadata-log", "refs", "current-snapshot-id"):
    assert k in meta, "metadata.json lacks " + k
cur = [s for s in meta["snapshots"] if s["snapshot-id"] == meta["current-snapshot-id"]][0]
assert meta["refs"]["main"]["snapshot-id"] == cur["snapshot-id"], "refs.main"
assert 0 < cur["snapshot-id"] < 2 ** 53, "snapshot id range"
summary = cur["summary"]
for k in ("operation", "added-data-files", "added-records", "total-records", "total-data-files",
          "total-files-size", "loams.applied-offsets", "loams.link", "loams.epoch"):
    assert k in summary, "summary lacks " + k


def path_of(uri):
    assert uri.startswith("file:///"), "not an absolute file URI: " + uri
    return uri[len("file://"):]


def read(uri):
    with open(path_of(uri), "rb") as f:
        r = avro.datafile.DataFileReader(f, avro.io.DatumReader())
        meta = {k: (v.decode() if isinstance(v, bytes) else v) for k, v in r.meta.items()}
        rows = list(r)
    return meta, rows


def ids(schema_json):
    out = {}
    def walk(t):
        if isinstance(t, dict):
            if t.get("type") == "record":
                for f in t["fields"]:
                    out[f["name"]] = f.get("field-id")
                    walk(f["type"])
            elif t.get("type") == "array":
                walk(t["items"])
        elif isinstance(t, list):
            for b in t:
                walk(b)
    walk(json.loads(schema_json))
    return out

lmeta, manifests = read(cur["manifest-list"])
lids = ids(lmeta["avro.schema"])
want_list = {"manifest_path": 500, "manifest_length": 501, "partition_spec_id": 502,
             "content": 517, "sequence_number": 515, "min_sequence_number": 516,
             "added_snapshot_id": 503, "added_files_count": 504, "existing_files_count": 505,
             "deleted_files_count": 506, "added_rows_count": 512, "existing_rows_count": 513,
             "deleted_rows_count": 514, "partitions": 507, "key_metadata": 519}
for k, v in want_list.items():
    assert lids.get(k) == v, "manifest list field %s: field-id %r, want %d" % (k, lids.get(k), v)
assert lmeta["format-version"] == "2" and lmeta["snapshot-id"] == str(cur["snapshot-id"])
files = []
for m in manifests:
    mmeta, entries = read(m["manifest_path"])
    for k in ("schema", "schema-id", "partition-spec", "partition-spec-id", "format-version",
              "content"):
        assert k in mmeta, "manifest header lacks " + k
    mids = ids(mmeta["avro.schema"])
    want = {"status": 0, "snapshot_id": 1, "sequence_number": 3, "file_sequence_number": 4,
            "data_file": 2, "content": 134, "file_path": 100, "file_format": 101,
            "record_count": 103, "file_size_in_bytes": 104, "column_sizes": 108,
            "value_counts": 109, "null_value_counts": 110, "nan_value_counts": 137,
            "lower_bounds": 125, "upper_bounds": 128, "split_offsets": 132}
    for k, v in want.items():
        assert mids.get(k) == v, "manifest field %s: field-id %r, want %d" % (k, mids.get(k), v)
    for e in entries:
        if e["status"] == 2:
            continue
        d = e["data_file"]
        assert d["file_format"] == "PARQUET" and d["record_count"] > 0
        if e["status"] == 1:
            assert d["value_counts"] and d["null_value_counts"] is not None and d["column_sizes"]
        files.append(d["file_path"])
for f in files:
    print(f)
sys.stderr.write(json.dumps(summary) + "\n")
