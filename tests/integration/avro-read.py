#!/usr/bin/python3
"""avro-read.py - python3-avro (Debian), an independent reader, reads every
Avro container file avro_sample_writer wrote and checks every value, the
header metadata and the field-id of every field in the embedded schema.

    /usr/bin/python3 avro-read.py DIR
"""
import json
import math
import struct
import sys
import warnings

# Iceberg maps are arrays with logicalType "map", unknown to Avro: expected.
warnings.filterwarnings("ignore", message="Unknown map")

from avro.datafile import DataFileReader
from avro.io import DatumReader

d = sys.argv[1]
failures = 0
checks = 0


def check(cond, what):
    global failures, checks
    checks += 1
    if not cond:
        failures += 1
        if failures <= 30:
            print("FAIL: " + what, file=sys.stderr)


def read(name):
    with open(f"{d}/{name}", "rb") as f:
        r = DataFileReader(f, DatumReader())
        meta = {k: r.get_meta(k) for k in r.meta}
        rows = list(r)
        r.close()
    return meta, rows


def walk_ids(node, path, out):
    """Collects (path, ids) for every record field, array and map."""
    if isinstance(node, list):
        for k, b in enumerate(node):
            walk_ids(b, f"{path}|{k}", out)
    elif isinstance(node, dict):
        t = node.get("type")
        if t == "record":
            for fld in node["fields"]:
                out.append((f"{path}.{fld['name']}", "field-id", fld.get("field-id")))
                walk_ids(fld["type"], f"{path}.{fld['name']}", out)
        elif t == "array":
            if node.get("logicalType") != "map":
                out.append((path + "[]", "element-id", node.get("element-id")))
            walk_ids(node["items"], path + "[]", out)
        elif t == "map":
            out.append((path + "{}", "key-id", node.get("key-id")))
            out.append((path + "{}", "value-id", node.get("value-id")))
            walk_ids(node["values"], path + "{}", out)


def expected_types(i):
    i32 = (i * 2654435761) & 0xFFFFFFFF
    if i32 >= 1 << 31:
        i32 -= 1 << 32
    return {
        "n": None,
        "b": i % 2 == 0,
        "i": i32,
        "l": (i - 500) * 10000000019,
        "f": struct.unpack("<f", struct.pack("<f", i * 0.5 - 3.0))[0],
        "d": i / 3.0,
        "by": bytes((i + k) & 255 for k in range(i % 6)),
        "s": f"str-{i}-\u00e9",
        "r": {"x": -i},
        "a": [i * k for k in range(i % 4)],
        "m": {f"k{k}": i + k for k in range(i % 3)},
        "u": None if i % 4 == 0 else f"u{i}",
        "fx": i.to_bytes(4, "big"),
    }


for name, codec in (("types_null.avro", "null"), ("types_deflate.avro", "deflate")):
    meta, rows = read(name)
    check(meta["avro.codec"] == codec.encode(), f"{name}: codec {meta['avro.codec']}")
    check(meta.get("loams.sample") == b"types", f"{name}: loams.sample metadata")
    check(len(rows) == 1000, f"{name}: {len(rows)} rows")
    bad = 0
    for i, row in enumerate(rows):
        if row != expected_types(i):
            bad += 1
            if bad <= 3:
                check(False, f"{name}: row {i} = {row!r}, want {expected_types(i)!r}")
    check(bad == 0, f"{name}: {bad} wrong rows")
    ids = []
    walk_ids(json.loads(meta["avro.schema"]), "", ids)
    want = {".n": 1, ".b": 2, ".i": 3, ".l": 4, ".f": 5, ".d": 6, ".by": 7, ".s": 8, ".r": 9,
            ".r.x": 10, ".a": 11, ".a[]": 12, ".m": 13, ".u": 16, ".fx": 17}
    got = {p: v for p, k, v in ids if k in ("field-id", "element-id")}
    check(got == want, f"{name}: field ids {got}")
    check([(k, v) for p, k, v in ids if p == ".m{}"] == [("key-id", 14), ("value-id", 15)],
          f"{name}: map key/value ids")

exp = json.load(open(f"{d}/expected.json"))

# The manifest.
meta, rows = read("manifest.avro")
check(meta["avro.codec"] == b"deflate", "manifest: codec")
for k, v in (("schema-id", b"0"), ("partition-spec", b"[]"), ("partition-spec-id", b"0"),
             ("format-version", b"2"), ("content", b"data")):
    check(meta.get(k) == v, f"manifest: metadata {k} = {meta.get(k)!r}")
check(json.loads(meta["schema"])["fields"][0]["name"] == "id", "manifest: schema metadata")
ids = []
walk_ids(json.loads(meta["avro.schema"]), "", ids)
missing = [p for p, k, v in ids if v is None]
check(not missing, f"manifest: fields without ids {missing}")
got = {p: v for p, k, v in ids}
want_ids = {".status": 0, ".snapshot_id": 1, ".sequence_number": 3, ".file_sequence_number": 4,
            ".data_file": 2, ".data_file.content": 134, ".data_file.file_path": 100,
            ".data_file.file_format": 101, ".data_file.partition": 102,
            ".data_file.record_count": 103, ".data_file.file_size_in_bytes": 104,
            ".data_file.column_sizes": 108, ".data_file.column_sizes|1[].key": 117,
            ".data_file.column_sizes|1[].value": 118, ".data_file.value_counts": 109,
            ".data_file.null_value_counts": 110, ".data_file.nan_value_counts": 137,
            ".data_file.lower_bounds": 125, ".data_file.lower_bounds|1[].value": 127,
            ".data_file.upper_bounds": 128, ".data_file.upper_bounds|1[].key": 129,
            ".data_file.key_metadata": 131, ".data_file.split_offsets": 132,
            ".data_file.split_offsets|1[]": 133, ".data_file.equality_ids": 135,
            ".data_file.equality_ids|1[]": 136, ".data_file.sort_order_id": 140,
            ".data_file.referenced_data_file": 143}
for p, v in want_ids.items():
    check(got.get(p) == v, f"manifest: id of {p} is {got.get(p)}, want {v}")
check(len(rows) == 1, f"manifest: {len(rows)} entries")
e = rows[0]
df = e["data_file"]
check(e["status"] == 1 and e["snapshot_id"] == 4242424242424242, "manifest: status/snapshot")
check(e["sequence_number"] is None and e["file_sequence_number"] is None, "manifest: seq null")
check(df["content"] == 0 and df["file_format"] == "PARQUET", "manifest: content/format")
check(df["file_path"] == exp["file_path"], f"manifest: file_path {df['file_path']}")
check(df["partition"] == {}, "manifest: partition")
check(df["record_count"] == exp["record_count"] == 3000, "manifest: record_count")
check(df["file_size_in_bytes"] == exp["file_size"], "manifest: file size")
import os
check(exp["file_size"] == os.path.getsize(exp["file_path"]), "manifest: file size on disk")


def as_map(kv):
    return {x["key"]: x["value"] for x in kv}


cols = {c["id"]: c for c in exp["columns"]}
check(as_map(df["column_sizes"]) == {i: c["size"] for i, c in cols.items()}, "column_sizes")
check(as_map(df["value_counts"]) == {i: c["values"] for i, c in cols.items()}, "value_counts")
check(as_map(df["null_value_counts"]) == {i: c["nulls"] for i, c in cols.items()}, "nulls")
check(as_map(df["null_value_counts"]) == {1: 0, 2: 300, 3: 429, 4: 0}, "nulls are right")
check(as_map(df["nan_value_counts"]) == {3: 0}, "nan counts")
lb, ub = as_map(df["lower_bounds"]), as_map(df["upper_bounds"])
check(lb == {i: bytes.fromhex(c["lower"]) for i, c in cols.items()}, "lower bounds")
check(ub == {i: bytes.fromhex(c["upper"]) for i, c in cols.items()}, "upper bounds")
# The bounds decode to the data's real minimum and maximum.
check(struct.unpack("<q", lb[1])[0] == 1000 and struct.unpack("<q", ub[1])[0] == 3999, "id bounds")
check(lb[2] == b"name-00001-a-lon" and ub[2] == b"name-02999-a-loo", f"name bounds {lb[2]} {ub[2]}")
check(struct.unpack("<d", lb[3])[0] == -8.5 and struct.unpack("<d", ub[3])[0] == 4488.5,
      f"score bounds {struct.unpack('<d', lb[3])[0]} {struct.unpack('<d', ub[3])[0]}")
check(df["split_offsets"] == exp["splits"] and len(exp["splits"]) > 1, "split offsets")
check(df["sort_order_id"] == 0 and df["equality_ids"] is None, "sort order / equality ids")

# The manifest list.
meta, rows = read("manifest-list.avro")
check(meta["avro.codec"] == b"null", "manifest list: codec")
check(meta.get("snapshot-id") == b"4242424242424242" and meta.get("format-version") == b"2",
      "manifest list: metadata")
ids = []
walk_ids(json.loads(meta["avro.schema"]), "", ids)
check(not [p for p, k, v in ids if v is None], "manifest list: every field has an id")
got = {p: v for p, k, v in ids}
for p, v in {".manifest_path": 500, ".manifest_length": 501, ".partition_spec_id": 502,
             ".content": 517, ".sequence_number": 515, ".min_sequence_number": 516,
             ".added_snapshot_id": 503, ".added_files_count": 504, ".existing_files_count": 505,
             ".deleted_files_count": 506, ".added_rows_count": 512, ".existing_rows_count": 513,
             ".deleted_rows_count": 514, ".partitions": 507, ".partitions|1[]": 508,
             ".partitions|1[].contains_null": 509, ".partitions|1[].contains_nan": 518,
             ".partitions|1[].lower_bound": 510, ".partitions|1[].upper_bound": 511,
             ".key_metadata": 519}.items():
    check(got.get(p) == v, f"manifest list: id of {p} is {got.get(p)}, want {v}")
check(len(rows) == 1, "manifest list: one manifest")
m = rows[0]
check(m["manifest_path"] == exp["manifest_path"] and m["manifest_length"] == exp["manifest_length"]
      and exp["manifest_length"] == os.path.getsize(exp["manifest_path"]), "manifest list: path/length")
check(m["added_files_count"] == 1 and m["added_rows_count"] == 3000 and m["partitions"] == [],
      f"manifest list: counts {m}")

print(f"avro-read.py: {checks} checks, {failures} failed")
sys.exit(1 if failures else 0)
