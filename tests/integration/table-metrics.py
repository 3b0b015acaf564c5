# table-metrics.py - compares the column metrics of every live manifest
# entry of an Iceberg table's current snapshot (read with python3-avro)
# with what DuckDB read from the entry's data file (table-metrics.mjs), value
# by value; the expected bounds are computed here from DuckDB's min / max by
# the Iceberg spec (Appendix D single-value serialization; truncate(16)
# metrics: strings to 16 code points, binary to 16 bytes, a truncated upper
# bound incremented at its last code point / byte that can grow, none when
# none can).  Also checks that the data met the edge cases the test is for.
#
#   python3 table-metrics.py TABLE_DIR DUCK_FACTS_JSON
import json, math, os, struct, sys, warnings
warnings.filterwarnings("ignore", message="Unknown map")
import avro.datafile, avro.io

TRUNC = 16
table, facts_path = sys.argv[1], sys.argv[2]
failures, checks = [], 0
hits = {}


def check(cond, what):
    global checks
    checks += 1
    if not cond:
        failures.append(what)


def hit(name):
    hits[name] = hits.get(name, 0) + 1


def read(uri):
    with open(uri[len("file://"):], "rb") as f:
        r = avro.datafile.DataFileReader(f, avro.io.DatumReader())
        rows = list(r)
    return rows


hint = open(table + "/metadata/version-hint.text").read().strip()
meta = json.load(open("%s/metadata/v%s.metadata.json" % (table, hint)))
cur = [s for s in meta["snapshots"] if s["snapshot-id"] == meta["current-snapshot-id"]][0]
schema = [s for s in meta["schemas"] if s["schema-id"] == meta["current-schema-id"]][0]
fields = {}  # name -> (id, type, element id)
for fl in schema["fields"]:
    t = fl["type"]
    if isinstance(t, dict):
        fields[fl["name"]] = (fl["id"], "list<float>", t["element-id"])
    else:
        fields[fl["name"]] = (fl["id"], t, None)

entries = []
for m in read(cur["manifest-list"]):
    for e in read(m["manifest_path"]):
        if e["status"] != 2:
            entries.append(e["data_file"])
facts = {f["uri"]: f for f in json.load(open(facts_path))}


def as_map(kv):
    if kv is None:
        return None
    out = {}
    for x in kv:
        check(x["key"] not in out, "a map repeats key %d" % x["key"])
        out[x["key"]] = x["value"]
    return out


def round_up_str(s):
    cps = list(s)
    if len(cps) <= TRUNC:
        return s
    p = cps[:TRUNC]
    for i in range(TRUNC - 1, -1, -1):
        c = ord(p[i]) + 1
        if 0xD800 <= c <= 0xDFFF:
            c = 0xE000  # surrogates are not code points of UTF-8 text
        if c <= 0x10FFFF:
            return "".join(p[:i]) + chr(c)
    return None


def round_up_bin(b):
    if len(b) <= TRUNC:
        return b
    p = bytearray(b[:TRUNC])
    for i in range(TRUNC - 1, -1, -1):
        if p[i] != 0xFF:
            p[i] += 1
            return bytes(p[:i + 1])
    return None


def serialize(t, v, upper):
    """Appendix D of the spec; v is DuckDB's text for the value."""
    if t == "boolean":
        return bytes([int(v)])
    if t in ("int", "date"):
        return struct.pack("<i", int(v))
    if t in ("long", "timestamptz"):
        return struct.pack("<q", int(v))
    if t in ("float", "double"):
        x = float(v)
        if x == 0.0:
            x = 0.0 if upper else -0.0  # -0.0 precedes +0.0: both zeros are covered
        return struct.pack("<f" if t == "float" else "<d", x)
    if t == "string":
        s = bytes.fromhex(v).decode("utf-8")
        if upper:
            r = round_up_str(s)
            return None if r is None else r.encode("utf-8")
        return "".join(list(s)[:TRUNC]).encode("utf-8")
    if t == "binary":
        b = bytes.fromhex(v)
        return round_up_bin(b) if upper else b[:TRUNC]
    raise ValueError(t)


check(len(entries) >= 3, "want several data files, got %d" % len(entries))
for d in entries:
    uri = d["file_path"]
    fx = facts.get(uri)
    if fx is None:
        check(False, "DuckDB did not read " + uri)
        continue
    w = os.path.basename(uri)
    check(d["record_count"] == fx["rows"], "%s: record_count %d, DuckDB reads %d rows" % (w, d["record_count"], fx["rows"]))
    check(d["file_size_in_bytes"] == os.path.getsize(uri[len("file://"):]), w + ": file_size_in_bytes")
    # row groups start at their first chunk's dictionary or data page
    starts = {}
    for c in fx["chunks"]:
        offs = [int(c["data_page_offset"])]
        if c["dictionary_page_offset"] is not None:
            offs.append(int(c["dictionary_page_offset"]))
        g = int(c["row_group_id"])
        starts[g] = min(offs + ([starts[g]] if g in starts else []))
    check(d["split_offsets"] == [starts[g] for g in sorted(starts)],
          "%s: split_offsets %s, row groups start at %s" % (w, d["split_offsets"], [starts[g] for g in sorted(starts)]))
    if len(starts) > 1:
        hit("several row groups")
    # the chunks per leaf field id
    leaf_ids = [int(l["field_id"]) for l in fx["leaves"]]
    per_leaf = {}
    for c in fx["chunks"]:
        fid = leaf_ids[int(c["column_id"])]
        a = per_leaf.setdefault(fid, [0, 0, 0])
        a[0] += int(c["total_compressed_size"])
        a[1] += int(c["num_values"])
        a[2] += int(c["stats_null_count"]) if c["stats_null_count"] is not None else -10**9
    sizes, values, nulls = as_map(d["column_sizes"]), as_map(d["value_counts"]), as_map(d["null_value_counts"])
    nans, lower, upper = as_map(d["nan_value_counts"]), as_map(d["lower_bounds"]), as_map(d["upper_bounds"])
    check(set(sizes) == set(per_leaf), "%s: column_sizes keys %s, leaves %s" % (w, sorted(sizes), sorted(per_leaf)))
    check(set(values) == set(per_leaf) and set(nulls) == set(per_leaf), w + ": value/null count keys")
    want_nan_keys, want_lower, want_upper = set(), {}, {}
    for name, col in fx["columns"].items():
        fid, t, elem = fields[name]
        leaf = elem if elem is not None else fid
        got = (sizes.get(leaf), values.get(leaf), nulls.get(leaf))
        pl = per_leaf.get(leaf, [None] * 3)
        check(got[0] == pl[0], "%s %s: column_sizes %r, DuckDB's chunks total %r" % (w, name, got[0], pl[0]))
        check(got[1] == pl[1], "%s %s: value_counts %r, chunks' num_values %r" % (w, name, got[1], pl[1]))
        check(got[2] == pl[2], "%s %s: null_value_counts %r, chunks' null counts %r" % (w, name, got[2], pl[2]))
        if t == "list<float>":
            check(got[1] == int(col["entries"]), "%s %s: value_counts %r, DuckDB's list entries %s" % (w, name, got[1], col["entries"]))
            check(got[2] == int(col["empty"]), "%s %s: null_value_counts %r, DuckDB's null/empty lists %s" % (w, name, got[2], col["empty"]))
            want_nan_keys.add(leaf)
            check(nans.get(leaf) == int(col["nans"]), "%s %s: nan_value_counts %r, DuckDB %s" % (w, name, nans.get(leaf), col["nans"]))
            if int(col["nans"]) > 0:
                hit("NaN list elements")
            if int(col["nulls"]) > 0:
                hit("null lists")
            if int(col["empty"]) > int(col["nulls"]):
                hit("empty lists")
            continue
        check(got[1] == fx["rows"], "%s %s: value_counts %r of %d rows" % (w, name, got[1], fx["rows"]))
        check(got[2] == int(col["nulls"]), "%s %s: null_value_counts %r, DuckDB reads %s NULLs" % (w, name, got[2], col["nulls"]))
        if t in ("float", "double"):
            want_nan_keys.add(leaf)
            check(nans.get(leaf) == int(col["nans"]), "%s %s: nan_value_counts %r, DuckDB %s" % (w, name, nans.get(leaf), col["nans"]))
            if int(col["nans"]) > 0:
                hit("NaN values")
        if col["min"] is None:
            hit("a column without values")
            continue
        want_lower[leaf] = serialize(t, col["min"], False)
        u = serialize(t, col["max"], True)
        if u is not None:
            want_upper[leaf] = u
        # the edge cases
        if t == "string" and len(bytes.fromhex(col["max"]).decode()) > TRUNC:
            if u is None:
                hit("no upper bound for a string")
            elif len(u.decode()) < TRUNC:
                hit("a string upper bound that dropped code points")
            if u is not None and u.decode()[-1] == "\ue000":
                hit("a string upper bound past the surrogates")
        if t == "binary" and len(bytes.fromhex(col["max"])) > TRUNC:
            hit("no upper bound for binary" if u is None else "a binary upper bound")
        if t == "double" and col["max"] == "inf":
            hit("infinity")
        if t in ("float", "double") and float(col["min"]) == 0.0:
            hit("a zero lower bound")
        if t in ("float", "double") and float(col["max"]) == 0.0:
            hit("a zero upper bound")
    check(set(nans) == want_nan_keys, "%s: nan_value_counts keys %s, want %s" % (w, sorted(nans), sorted(want_nan_keys)))
    for k in sorted(set(want_lower) | set(lower or {})):
        check((lower or {}).get(k) == want_lower.get(k), "%s: lower bound of field %d is %r, want %r" % (w, k, (lower or {}).get(k), want_lower.get(k)))
    for k in sorted(set(want_upper) | set(upper or {})):
        check((upper or {}).get(k) == want_upper.get(k), "%s: upper bound of field %d is %r, want %r" % (w, k, (upper or {}).get(k), want_upper.get(k)))

for h in ("several row groups", "NaN values", "NaN list elements", "null lists", "empty lists",
          "a column without values", "no upper bound for a string",
          "a string upper bound that dropped code points", "a string upper bound past the surrogates",
          "no upper bound for binary", "a binary upper bound", "infinity", "a zero lower bound",
          "a zero upper bound"):
    check(hits.get(h, 0) > 0, "the data never met the case: " + h)
for f in failures[:30]:
    print("FAIL: " + f, file=sys.stderr)
print("table-metrics.py: %d data files, %d checks, %d failed" % (len(entries), checks, len(failures)))
sys.exit(1 if failures else 0)
