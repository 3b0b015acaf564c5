# table-files.py - python3-avro, an independent reader, follows an Iceberg
# table the way a file-based reader does: metadata/version-hint.text ->
# v<N>.metadata.json -> the current snapshot's manifest list -> manifests ->
# live data files.  Checks every field-id the spec gives manifest lists and
# manifests, the header metadata Iceberg requires, and the snapshot summary;
# prints the data file URIs (one per line) on stdout and the summary as JSON
# on stderr's last line.
#
# It also checks the spec's rules that tie the files together (format v2,
# "Manifest Lists", "Sequence Number Inheritance"): each manifest_file
# record's length, content, partition spec, added / existing / deleted
# file and row counts against the manifest's entries, its sequence number
# against the snapshot that added it, min_sequence_number against the
# entries' data sequence numbers after inheritance; ADDED entries written
# with null sequence numbers (inherited), EXISTING / DELETED ones with
# explicit numbers; the manifest and list headers (snapshot-id,
# sequence-number, parent-snapshot-id, schema-id naming the header's
# schema); the summary's totals against the live files.
#
#   python3 table-files.py TABLE_DIR [CODECS_OUT]
#
# CODECS_OUT, when given, gets one line per Avro file read: its avro.codec
# and its URI (the manifest list first).
import json, os, sys
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
assert 0 < cur["snapshot-id"] < 2 ** 63, "snapshot id range"
assert meta["last-sequence-number"] == cur["sequence-number"], "last-sequence-number"
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

codecs = []
snap_by_id = {s["snapshot-id"]: s for s in meta["snapshots"]}
schema_by_id = {s["schema-id"]: s for s in meta["schemas"]}

lmeta, manifests = read(cur["manifest-list"])
codecs.append((lmeta["avro.codec"], cur["manifest-list"]))
lids = ids(lmeta["avro.schema"])
want_list = {"manifest_path": 500, "manifest_length": 501, "partition_spec_id": 502,
             "content": 517, "sequence_number": 515, "min_sequence_number": 516,
             "added_snapshot_id": 503, "added_files_count": 504, "existing_files_count": 505,
             "deleted_files_count": 506, "added_rows_count": 512, "existing_rows_count": 513,
             "deleted_rows_count": 514, "partitions": 507, "key_metadata": 519}
for k, v in want_list.items():
    assert lids.get(k) == v, "manifest list field %s: field-id %r, want %d" % (k, lids.get(k), v)
assert lmeta["format-version"] == "2" and lmeta["snapshot-id"] == str(cur["snapshot-id"])
assert lmeta["sequence-number"] == str(cur["sequence-number"]), "manifest list sequence-number"
if "parent-snapshot-id" in cur:
    assert lmeta["parent-snapshot-id"] == str(cur["parent-snapshot-id"]), "parent-snapshot-id"
files = []
live_records = 0
for m in manifests:
    where = "manifest " + m["manifest_path"]
    assert m["manifest_length"] == os.path.getsize(path_of(m["manifest_path"])), where + ": length"
    assert m["content"] == 0 and m["partition_spec_id"] == 0, where + ": content / spec id"
    assert m["partitions"] == [], where + ": partitions of an unpartitioned table"
    adder = snap_by_id.get(m["added_snapshot_id"])
    if adder is not None:
        assert m["sequence_number"] == adder["sequence-number"], \
            where + ": sequence_number %d, but snapshot %d has %d" % (
                m["sequence_number"], adder["snapshot-id"], adder["sequence-number"])
    assert m["sequence_number"] <= cur["sequence-number"], where + ": sequence from the future"
    mmeta, entries = read(m["manifest_path"])
    codecs.append((mmeta["avro.codec"], m["manifest_path"]))
    for k in ("schema", "schema-id", "partition-spec", "partition-spec-id", "format-version",
              "content"):
        assert k in mmeta, "manifest header lacks " + k
    assert mmeta["format-version"] == "2" and mmeta["content"] == "data", where + ": header"
    assert mmeta["partition-spec-id"] == "0" and json.loads(mmeta["partition-spec"]) == [], \
        where + ": partition spec header"
    sid = int(mmeta["schema-id"])
    assert sid in schema_by_id, where + ": schema-id %d is not in the table metadata" % sid
    hs, ts = json.loads(mmeta["schema"]), schema_by_id[sid]
    assert hs["fields"] == ts["fields"], where + ": header schema is not schema %d" % sid
    mids = ids(mmeta["avro.schema"])
    want = {"status": 0, "snapshot_id": 1, "sequence_number": 3, "file_sequence_number": 4,
            "data_file": 2, "content": 134, "file_path": 100, "file_format": 101,
            "record_count": 103, "file_size_in_bytes": 104, "column_sizes": 108,
            "value_counts": 109, "null_value_counts": 110, "nan_value_counts": 137,
            "lower_bounds": 125, "upper_bounds": 128, "split_offsets": 132}
    for k, v in want.items():
        assert mids.get(k) == v, "manifest field %s: field-id %r, want %d" % (k, mids.get(k), v)
    counts = {0: [0, 0], 1: [0, 0], 2: [0, 0]}
    live_seqs = []
    for e in entries:
        d = e["data_file"]
        st = e["status"]
        assert st in counts, where + ": status %r" % st
        counts[st][0] += 1
        counts[st][1] += d["record_count"]
        assert d["content"] == 0 and d["partition"] == {}, where + ": content / partition"
        if st == 1:
            # added: numbers inherited from the manifest list (written null)
            assert e["sequence_number"] is None and e["file_sequence_number"] is None, \
                where + ": an ADDED entry with explicit sequence numbers"
            assert e["snapshot_id"] in (None, m["added_snapshot_id"]), where + ": added by?"
            seq = m["sequence_number"]
        else:
            assert e["sequence_number"] is not None and e["file_sequence_number"] is not None, \
                where + ": an EXISTING/DELETED entry must carry its sequence numbers"
            assert e["sequence_number"] <= e["file_sequence_number"] <= m["sequence_number"], \
                where + ": entry sequence numbers"
            seq = e["sequence_number"]
        if st == 2:
            continue
        live_seqs.append(seq)
        assert d["file_format"] == "PARQUET" and d["record_count"] > 0
        if st == 1:
            assert d["value_counts"] and d["null_value_counts"] is not None and d["column_sizes"]
        files.append(d["file_path"])
        live_records += d["record_count"]
    got = ((m["existing_files_count"], m["existing_rows_count"]),
           (m["added_files_count"], m["added_rows_count"]),
           (m["deleted_files_count"], m["deleted_rows_count"]))
    assert got == tuple(tuple(counts[k]) for k in (0, 1, 2)), \
        where + ": file/row counts %r, entries say %r" % (got, counts)
    if live_seqs:
        assert m["min_sequence_number"] == min(live_seqs), \
            where + ": min_sequence_number %d, live entries' minimum %d" % (
                m["min_sequence_number"], min(live_seqs))
assert len(set(files)) == len(files), "a data file is live twice"
assert int(summary["total-records"]) == live_records, "total-records vs the live files"
assert int(summary["total-data-files"]) == len(files), "total-data-files vs the live files"
for f in files:
    print(f)
if len(sys.argv) > 2:
    with open(sys.argv[2], "w") as out:
        for c, uri in codecs:
            out.write("%s %s\n" % (c, uri))
sys.stderr.write(json.dumps(summary) + "\n")
