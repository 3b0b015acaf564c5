# iceberg-conformance.py - an independent, strict reader of every Iceberg
# table under the directories it is given: every *.metadata.json, every
# manifest list and every manifest they lead to, checked against the table
# spec (format/spec.md of apache/iceberg, format version 2: "Table Metadata
# Fields", "Snapshots", "Snapshot Reference", "Manifest Lists", "Manifests",
# "Sequence Number Inheritance", Appendix C for the JSON forms).
#
#   /usr/bin/python3 iceberg-conformance.py DIR...
#   /usr/bin/python3 iceberg-conformance.py --selftest DIR
#
# The JSON is read strictly: a number with a fraction or an exponent is
# never an integer (Java's Iceberg refuses "snapshot-id": 7.12e+15 and so do
# we), NaN and Infinity are refused, so are repeated member names.  Where
# the spec says long or int the value must be an integer in range; strings,
# booleans, lists and maps must be what the spec says.  Avro files are read
# with python3-avro; their schemas must give the spec's field ids and types
# (long where the spec says long).
#
# Within one metadata file: ids resolve (current-snapshot-id, refs, the
# snapshot log, current-schema-id, default-spec-id, default-sort-order-id,
# each snapshot's schema-id), snapshot ids are unique, sequence numbers are
# unique and at most last-sequence-number, every parent that is still
# listed is older (lower sequence number, earlier or equal timestamp), the
# snapshots form the history of the refs (each one an ancestor of a ref;
# only the oldest of a chain may name a parent that was expired), the
# snapshot log and the metadata log go forward in time.  Across the
# metadata files of one table: a snapshot id means the same snapshot in
# every file that lists it (its manifest list location aside, which
# `table relocate` moves), and last-sequence-number never goes back as the
# version grows.  Manifest lists and manifests: their header metadata
# (snapshot-id, parent-snapshot-id, sequence-number, schema-id, spec id,
# format version, content), lengths, counts, inherited and explicit
# sequence numbers, and the snapshot ids they name (the adding snapshot:
# listed, or older than every listed one, i.e. expired).
#
# Files a metadata file names but that are gone (GC deleted them after an
# expiry or an aborted commit) are allowed only for snapshots that a
# metadata file of the same table at the same or a later version no longer
# lists; the newest metadata must have all its files.  A table copied
# elsewhere (cp -a) is read in place: URIs under the table's location are
# taken relative to the directory the metadata file is in.
#
# Prints what it read (tables, metadata files, snapshots, manifest lists,
# manifests, entries) and exits 1 listing every violation.
#
# --selftest DIR: DIR must hold one conforming table with at least three
# snapshots; copies of it, each damaged in one way (an id printed as a
# double, a broken parent chain, a snapshot log entry or a manifest list
# naming a snapshot that does not exist, a repeated member, a long that is
# a double in an Avro schema, ...), must each be refused with the message
# that names the damage.
import json
import os
import re
import sys

import shutil
import tempfile
import warnings

import avro.datafile
import avro.errors
import avro.io
import avro.schema

# Iceberg's maps are Avro arrays of key/value records tagged logicalType "map".
warnings.filterwarnings("ignore", category=avro.errors.IgnoredLogicalType)

LONG_MIN, LONG_MAX = -(2 ** 63), 2 ** 63 - 1
INT_MIN, INT_MAX = -(2 ** 31), 2 ** 31 - 1

errors = []
counts = dict(tables=0, metadata=0, snapshots=0, lists=0, manifests=0, entries=0, gone=0)


class Float:
    """A JSON number written with a fraction or an exponent."""

    def __init__(self, text):
        self.text = text

    def __repr__(self):
        return self.text


def refuse_constant(name):
    raise ValueError("%s is not JSON" % name)


def no_repeats(pairs):
    seen = {}
    for k, v in pairs:
        if k in seen:
            raise ValueError("member %r appears twice" % k)
        seen[k] = v
    return seen


def strict_loads(text):
    return json.loads(text, parse_float=Float, parse_constant=refuse_constant,
                      object_pairs_hook=no_repeats)


def fail(where, what):
    errors.append("%s: %s" % (where, what))


# ---- typed getters: each records a violation and returns None when bad ----

def is_int(v, lo, hi):
    return type(v) is int and lo <= v <= hi


def get(obj, key, kind, where, required=True):
    if not isinstance(obj, dict):
        fail(where, "is not a JSON object")
        return None
    if key not in obj:
        if required:
            fail(where, "lacks the required %r" % key)
        return None
    v = obj[key]
    ok = {
        "long": lambda: is_int(v, LONG_MIN, LONG_MAX),
        "int": lambda: is_int(v, INT_MIN, INT_MAX),
        "string": lambda: type(v) is str,
        "boolean": lambda: type(v) is bool,
        "list": lambda: type(v) is list,
        "object": lambda: type(v) is dict,
    }[kind]()
    if not ok:
        shown = repr(v) if not isinstance(v, (dict, list)) else type(v).__name__
        fail(where, "%r must be a JSON %s, found %s" % (key, kind, shown))
        return None
    return v


def string_map(obj, key, where, required):
    m = get(obj, key, "object", where, required)
    if m is None:
        return {}
    for k, v in m.items():
        if type(v) is not str:
            fail(where, "%r.%s must be a string, found %r" % (key, k, v))
    return m


# ---- schemas, partition specs, sort orders (Appendix C) ----

def check_type(t, where, ids):
    if type(t) is str:
        return
    if type(t) is not dict:
        fail(where, "a type is neither a name nor an object: %r" % (t,))
        return
    kind = get(t, "type", "string", where)
    if kind == "struct":
        check_struct(t, where, ids)
    elif kind == "list":
        eid = get(t, "element-id", "int", where)
        ids.append(eid)
        get(t, "element-required", "boolean", where)
        check_type(t.get("element"), where + ".element", ids)
    elif kind == "map":
        ids.append(get(t, "key-id", "int", where))
        ids.append(get(t, "value-id", "int", where))
        get(t, "value-required", "boolean", where)
        check_type(t.get("key"), where + ".key", ids)
        check_type(t.get("value"), where + ".value", ids)
    elif kind is not None:
        fail(where, "unknown nested type %r" % kind)


def check_struct(s, where, ids):
    fields = get(s, "fields", "list", where) or []
    for i, f in enumerate(fields):
        fw = "%s.fields[%d]" % (where, i)
        ids.append(get(f, "id", "int", fw))
        get(f, "name", "string", fw)
        get(f, "required", "boolean", fw)
        if "type" not in f:
            fail(fw, "lacks the required 'type'")
        else:
            check_type(f["type"], fw, ids)


def check_schemas(meta, where):
    schemas = get(meta, "schemas", "list", where) or []
    by_id = {}
    last = get(meta, "last-column-id", "int", where)
    for i, s in enumerate(schemas):
        sw = "%s: schemas[%d]" % (where, i)
        sid = get(s, "schema-id", "int", sw)
        if get(s, "type", "string", sw) not in (None, "struct"):
            fail(sw, "type must be \"struct\"")
        ids = []
        check_struct(s, sw, ids)
        ids = [x for x in ids if x is not None]
        if len(set(ids)) != len(ids):
            fail(sw, "field ids repeat: %r" % ids)
        if last is not None and ids and max(ids) > last:
            fail(sw, "field id %d is above last-column-id %d" % (max(ids), last))
        if sid is not None:
            if sid in by_id:
                fail(sw, "schema-id %d repeats" % sid)
            by_id[sid] = s
    cur = get(meta, "current-schema-id", "int", where)
    if cur is not None and cur not in by_id:
        fail(where, "current-schema-id %d is not in schemas" % cur)
    return by_id


def check_specs(meta, where):
    specs = get(meta, "partition-specs", "list", where) or []
    ids = set()
    for i, s in enumerate(specs):
        sw = "%s: partition-specs[%d]" % (where, i)
        ids.add(get(s, "spec-id", "int", sw))
        for j, f in enumerate(get(s, "fields", "list", sw) or []):
            fw = "%s.fields[%d]" % (sw, j)
            get(f, "source-id", "int", fw)
            get(f, "field-id", "int", fw)
            get(f, "name", "string", fw)
            get(f, "transform", "string", fw)
    d = get(meta, "default-spec-id", "int", where)
    if d is not None and d not in ids:
        fail(where, "default-spec-id %d is not in partition-specs" % d)
    get(meta, "last-partition-id", "int", where)
    orders = get(meta, "sort-orders", "list", where) or []
    oids = set()
    for i, o in enumerate(orders):
        ow = "%s: sort-orders[%d]" % (where, i)
        oids.add(get(o, "order-id", "int", ow))
        for j, f in enumerate(get(o, "fields", "list", ow) or []):
            fw = "%s.fields[%d]" % (ow, j)
            get(f, "transform", "string", fw)
            get(f, "source-id", "int", fw)
            if get(f, "direction", "string", fw) not in (None, "asc", "desc"):
                fail(fw, "direction must be asc or desc")
            if get(f, "null-order", "string", fw) not in (None, "nulls-first", "nulls-last"):
                fail(fw, "null-order must be nulls-first or nulls-last")
    d = get(meta, "default-sort-order-id", "int", where)
    if d is not None and d not in oids:
        fail(where, "default-sort-order-id %d is not in sort-orders" % d)
    return ids


# ---- one metadata file ----

OPERATIONS = ("append", "replace", "overwrite", "delete")
UUID = re.compile(r"^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$")


def check_metadata(path, meta):
    """Checks one metadata file; returns its snapshots by id."""
    w = path
    if get(meta, "format-version", "int", w) != 2:
        fail(w, "format-version must be 2 (what the writer declares)")
    u = get(meta, "table-uuid", "string", w)
    if u is not None and not UUID.match(u.lower()):
        fail(w, "table-uuid %r is not a UUID" % u)
    get(meta, "location", "string", w)
    last_seq = get(meta, "last-sequence-number", "long", w)
    updated = get(meta, "last-updated-ms", "long", w)
    schemas = check_schemas(meta, w)
    check_specs(meta, w)
    string_map(meta, "properties", w, False)

    snaps = {}
    seqs = set()
    for i, s in enumerate(get(meta, "snapshots", "list", w, False) or []):
        sw = "%s: snapshots[%d]" % (w, i)
        sid = get(s, "snapshot-id", "long", sw)
        get(s, "parent-snapshot-id", "long", sw, False)
        seq = get(s, "sequence-number", "long", sw)
        get(s, "timestamp-ms", "long", sw)
        get(s, "manifest-list", "string", sw)
        if "manifests" in s:
            fail(sw, "'manifests' must be omitted when manifest-list is present")
        summary = string_map(s, "summary", sw, True)
        if summary.get("operation") not in OPERATIONS:
            fail(sw, "summary.operation %r is not one of %s" % (summary.get("operation"),
                                                                 ", ".join(OPERATIONS)))
        sch = get(s, "schema-id", "int", sw, False)
        if sch is not None and sch not in schemas:
            fail(sw, "schema-id %d is not in schemas" % sch)
        if sid is None:
            continue
        if sid in snaps:
            fail(sw, "snapshot-id %d repeats" % sid)
        snaps[sid] = s
        if seq is not None:
            if seq in seqs:
                fail(sw, "sequence-number %d repeats" % seq)
            seqs.add(seq)
            if last_seq is not None and seq > last_seq:
                fail(sw, "sequence-number %d is above last-sequence-number %d" % (seq, last_seq))
    counts["snapshots"] += len(snaps)

    # parents: older, and the snapshots are the history of the refs
    for sid, s in snaps.items():
        pid = s.get("parent-snapshot-id")
        if pid in snaps:
            p = snaps[pid]
            if type(p.get("sequence-number")) is int and type(s.get("sequence-number")) is int \
                    and not p["sequence-number"] < s["sequence-number"]:
                fail(w, "snapshot %d has sequence-number %d, not above its parent %d's %d" % (
                    sid, s["sequence-number"], pid, p["sequence-number"]))
            if type(p.get("timestamp-ms")) is int and type(s.get("timestamp-ms")) is int \
                    and p["timestamp-ms"] > s["timestamp-ms"]:
                fail(w, "snapshot %d is older than its parent %d" % (sid, pid))

    cur = get(meta, "current-snapshot-id", "long", w, False)
    refs = get(meta, "refs", "object", w, False) or {}
    heads = []
    for name, r in refs.items():
        rw = "%s: refs.%s" % (w, name)
        rid = get(r, "snapshot-id", "long", rw)
        if get(r, "type", "string", rw) not in (None, "branch", "tag"):
            fail(rw, "type must be branch or tag")
        if rid is not None:
            if rid not in snaps:
                fail(rw, "snapshot-id %d is not in snapshots" % rid)
            heads.append(rid)
    if cur is not None and cur != -1:
        if cur not in snaps:
            fail(w, "current-snapshot-id %d is not in snapshots" % cur)
        main = refs.get("main")
        if not isinstance(main, dict) or main.get("snapshot-id") != cur:
            fail(w, "refs.main must name current-snapshot-id %d" % cur)
        heads.append(cur)
    elif snaps:
        fail(w, "snapshots are listed but current-snapshot-id is %r" % (cur,))
    reached = set()
    for h in heads:
        x = h
        while x in snaps and x not in reached:
            reached.add(x)
            x = snaps[x].get("parent-snapshot-id")
    for sid in snaps:
        if sid not in reached:
            fail(w, "snapshot %d is not in the history of any ref: a broken parent chain" % sid)

    prev = None
    for i, e in enumerate(get(meta, "snapshot-log", "list", w, False) or []):
        ew = "%s: snapshot-log[%d]" % (w, i)
        ts = get(e, "timestamp-ms", "long", ew)
        lid = get(e, "snapshot-id", "long", ew)
        if lid is not None and lid not in snaps:
            fail(ew, "snapshot-id %d is not in snapshots" % lid)
        if ts is not None:
            if prev is not None and ts < prev:
                fail(ew, "goes back in time (%d after %d)" % (ts, prev))
            prev = ts
    prev = None
    for i, e in enumerate(get(meta, "metadata-log", "list", w, False) or []):
        ew = "%s: metadata-log[%d]" % (w, i)
        ts = get(e, "timestamp-ms", "long", ew)
        get(e, "metadata-file", "string", ew)
        if ts is not None:
            if prev is not None and ts < prev:
                fail(ew, "goes back in time (%d after %d)" % (ts, prev))
            if updated is not None and ts > updated:
                fail(ew, "is after last-updated-ms")
            prev = ts
    return snaps


# ---- Avro: manifest lists and manifests ----

LIST_FIELDS = {  # name: (field-id, Avro type, required in v2)
    "manifest_path": (500, "string", True), "manifest_length": (501, "long", True),
    "partition_spec_id": (502, "int", True), "content": (517, "int", True),
    "sequence_number": (515, "long", True), "min_sequence_number": (516, "long", True),
    "added_snapshot_id": (503, "long", True), "added_files_count": (504, "int", True),
    "existing_files_count": (505, "int", True), "deleted_files_count": (506, "int", True),
    "added_rows_count": (512, "long", True), "existing_rows_count": (513, "long", True),
    "deleted_rows_count": (514, "long", True), "partitions": (507, None, False),
    "key_metadata": (519, "bytes", False),
}
ENTRY_FIELDS = {
    "status": (0, "int", True), "snapshot_id": (1, "long", False),
    "sequence_number": (3, "long", False), "file_sequence_number": (4, "long", False),
    "data_file": (2, None, True),
}
DATA_FILE_FIELDS = {
    "content": (134, "int", True), "file_path": (100, "string", True),
    "file_format": (101, "string", True), "partition": (102, None, True),
    "record_count": (103, "long", True), "file_size_in_bytes": (104, "long", True),
    "column_sizes": (108, None, False), "value_counts": (109, None, False),
    "null_value_counts": (110, None, False), "nan_value_counts": (137, None, False),
    "lower_bounds": (125, None, False), "upper_bounds": (128, None, False),
    "split_offsets": (132, None, False), "sort_order_id": (140, "int", False),
}


def base_type(t):
    """The non-null branch of an Avro type (a name or a dict)."""
    if isinstance(t, list):
        rest = [b for b in t if b != "null"]
        return rest[0] if len(rest) == 1 else t
    if isinstance(t, dict) and t.get("type") in ("long", "int", "string", "bytes") \
            and "logicalType" not in t:
        return t["type"]
    return t


def check_record_schema(rec, want, where):
    fields = {f.get("name"): f for f in rec.get("fields", [])} if isinstance(rec, dict) else {}
    for name, (fid, typ, required) in want.items():
        f = fields.get(name)
        if f is None:
            if required:
                fail(where, "the Avro schema lacks the required field %s" % name)
            continue
        if f.get("field-id") != fid:
            fail(where, "field %s has field-id %r, the spec says %d" % (name, f.get("field-id"), fid))
        if typ is not None and base_type(f.get("type")) != typ:
            fail(where, "field %s is %r, the spec says %s" % (name, f.get("type"), typ))
        if required and isinstance(f.get("type"), list) and "null" in f["type"]:
            fail(where, "field %s is required but nullable" % name)
    return fields


avro_cache = {}


def read_avro(path):
    """(header metadata, writer schema, records) of an Avro file, read once."""
    if path not in avro_cache:
        with open(path, "rb") as f:
            r = avro.datafile.DataFileReader(f, avro.io.DatumReader())
            meta = {k: (v.decode() if isinstance(v, bytes) else v) for k, v in r.meta.items()}
            rows = list(r)
        avro_cache[path] = (meta, strict_loads(meta["avro.schema"]), rows)
    return avro_cache[path]


def header_long(meta, key, where):
    v = meta.get(key)
    if v is None:
        fail(where, "the header lacks %s" % key)
        return None
    if not re.match(r"^-?[0-9]+$", v) or not LONG_MIN <= int(v) <= LONG_MAX:
        fail(where, "header %s %r is not a long written as a string" % (key, v))
        return None
    return int(v)


class Table:
    def __init__(self, dirpath):
        self.dir = dirpath
        self.files = []        # (version, path, meta, snaps)
        self.known = {}        # snapshot id -> (path, snapshot without manifest-list)
        self.lists_read = set()
        self.manifests_read = set()

    def local(self, location, uri, where):
        """The path of a file URI of this table, read in place."""
        if not uri.startswith("file://"):
            fail(where, "%r is not a file URI" % uri)
            return None
        if location and uri.startswith(location.rstrip("/") + "/"):
            return os.path.join(self.dir, uri[len(location.rstrip("/")) + 1:])
        fail(where, "%r is outside the table's location %r" % (uri, location))
        return None


def version_of(path, meta):
    props = meta.get("properties") if isinstance(meta, dict) else None
    v = props.get("loams.metadata-version") if isinstance(props, dict) else None
    if isinstance(v, str) and v.isdigit():
        return int(v)
    m = re.match(r"^v?(\d+)", os.path.basename(path))
    return int(m.group(1)) if m else 0


def check_list(t, path, meta, snap, snaps, schemas, allowed_gone):
    loc = meta.get("location")
    sid = snap["snapshot-id"]
    where = "%s: snapshot %d" % (path, sid)
    lpath = t.local(loc, snap.get("manifest-list", ""), where)
    if lpath is None:
        return
    if not os.path.exists(lpath):
        if allowed_gone:
            counts["gone"] += 1
        else:
            fail(where, "its manifest list %s does not exist" % lpath)
        return
    lw = "manifest list " + lpath
    lmeta, lschema, manifests = read_avro(lpath)
    first = lpath not in t.lists_read
    t.lists_read.add(lpath)
    counts["lists"] += first
    check_record_schema(lschema, LIST_FIELDS, lw)
    if header_long(lmeta, "snapshot-id", lw) not in (None, sid):
        fail(lw, "header snapshot-id %s, the snapshot is %d" % (lmeta["snapshot-id"], sid))
    if header_long(lmeta, "sequence-number", lw) not in (None, snap["sequence-number"]):
        fail(lw, "header sequence-number %s, the snapshot's is %d" % (
            lmeta["sequence-number"], snap["sequence-number"]))
    if "parent-snapshot-id" in snap:
        if lmeta.get("parent-snapshot-id") != str(snap["parent-snapshot-id"]):
            fail(lw, "header parent-snapshot-id %r, the snapshot's is %s" % (
                lmeta.get("parent-snapshot-id"), snap["parent-snapshot-id"]))
    elif lmeta.get("parent-snapshot-id") not in (None, "null"):
        fail(lw, "header parent-snapshot-id %r for a snapshot with no parent" %
             lmeta.get("parent-snapshot-id"))
    if lmeta.get("format-version") != "2":
        fail(lw, "header format-version %r is not \"2\"" % lmeta.get("format-version"))
    oldest_seq = min((s["sequence-number"] for s in snaps.values()), default=0)
    seen_paths = set()
    for m in manifests:
        mw = "%s: manifest %s" % (lw, m.get("manifest_path"))
        typed = True
        for k in ("manifest_length", "sequence_number", "min_sequence_number",
                  "added_snapshot_id", "added_rows_count", "existing_rows_count",
                  "deleted_rows_count"):
            if not is_int(m.get(k), LONG_MIN, LONG_MAX):
                fail(mw, "%s %r is not a long" % (k, m.get(k)))
                typed = False
        for k in ("partition_spec_id", "content", "added_files_count", "existing_files_count",
                  "deleted_files_count"):
            if not is_int(m.get(k), INT_MIN, INT_MAX):
                fail(mw, "%s %r is not an int" % (k, m.get(k)))
                typed = False
        if type(m.get("manifest_path")) is not str:
            fail(mw, "manifest_path is not a string")
            typed = False
        if not typed:
            continue
        if m["sequence_number"] > snap["sequence-number"]:
            fail(mw, "sequence_number %d is above the snapshot's %d" % (
                m["sequence_number"], snap["sequence-number"]))
        if m["min_sequence_number"] > m["sequence_number"]:
            fail(mw, "min_sequence_number above sequence_number")
        adder = m["added_snapshot_id"]
        if adder in snaps:
            if snaps[adder]["sequence-number"] != m["sequence_number"]:
                fail(mw, "sequence_number %d, but snapshot %d (which added it) has %d" % (
                    m["sequence_number"], adder, snaps[adder]["sequence-number"]))
        elif not m["sequence_number"] < oldest_seq:
            fail(mw, "added_snapshot_id %d does not resolve (not listed, not expired)" % adder)
        if adder == sid and m["sequence_number"] != snap["sequence-number"]:
            fail(mw, "a manifest this snapshot added has another sequence number")
        if m["manifest_path"] in seen_paths:
            fail(mw, "listed twice")
        seen_paths.add(m["manifest_path"])
        mpath = t.local(loc, m["manifest_path"], mw)
        if mpath is None:
            continue
        if not os.path.exists(mpath):
            if allowed_gone:
                counts["gone"] += 1
            else:
                fail(mw, "the manifest does not exist")
            continue
        if m["manifest_length"] != os.path.getsize(mpath):
            fail(mw, "manifest_length %d, the file has %d bytes" % (
                m["manifest_length"], os.path.getsize(mpath)))
        check_manifest(t, mpath, m, snaps, oldest_seq, schemas, mw)


def check_manifest(t, mpath, mfile, snaps, oldest_seq, schemas, mw):
    mmeta, mschema, entries = read_avro(mpath)
    if mpath not in t.manifests_read:
        t.manifests_read.add(mpath)
        counts["manifests"] += 1
        counts["entries"] += len(entries)
    fields = check_record_schema(mschema, ENTRY_FIELDS, mw)
    df = fields.get("data_file")
    if df is not None:
        check_record_schema(base_type(df.get("type")), DATA_FILE_FIELDS, mw + " data_file")
    for k in ("schema", "schema-id", "partition-spec", "partition-spec-id", "format-version",
              "content"):
        if k not in mmeta:
            fail(mw, "the header lacks %s" % k)
    sid = header_long(mmeta, "schema-id", mw)
    if sid is not None and sid not in schemas:
        fail(mw, "header schema-id %d is not in the table metadata" % sid)
    if "schema" in mmeta:
        check_struct(strict_loads(mmeta["schema"]), mw + " header schema", [])
    if "partition-spec" in mmeta and type(strict_loads(mmeta["partition-spec"])) is not list:
        fail(mw, "header partition-spec is not a list of fields")
    if header_long(mmeta, "partition-spec-id", mw) != mfile["partition_spec_id"]:
        fail(mw, "header partition-spec-id differs from the list's partition_spec_id")
    if mmeta.get("format-version") != "2" or mmeta.get("content") not in ("data", "deletes"):
        fail(mw, "header format-version/content %r/%r" % (
            mmeta.get("format-version"), mmeta.get("content")))
    n = {0: [0, 0], 1: [0, 0], 2: [0, 0]}
    for i, e in enumerate(entries):
        ew = "%s entry %d" % (mw, i)
        st = e.get("status")
        if st not in n:
            fail(ew, "status %r" % st)
            continue
        d = e.get("data_file") or {}
        for k in ("record_count", "file_size_in_bytes"):
            if not is_int(d.get(k), 0, LONG_MAX):
                fail(ew, "data_file.%s %r is not a non-negative long" % (k, d.get(k)))
        if type(d.get("file_path")) is not str or type(d.get("file_format")) is not str:
            fail(ew, "data_file lacks file_path or file_format")
        n[st][0] += 1
        n[st][1] += d.get("record_count") or 0
        seq, fseq, esid = e.get("sequence_number"), e.get("file_sequence_number"), \
            e.get("snapshot_id")
        if st == 1:
            if esid not in (None, mfile["added_snapshot_id"]):
                fail(ew, "an ADDED entry names snapshot %r, the list says %d" % (
                    esid, mfile["added_snapshot_id"]))
        else:
            if seq is None or fseq is None:
                fail(ew, "an EXISTING or DELETED entry must carry both sequence numbers")
            elif not seq <= fseq <= mfile["sequence_number"]:
                fail(ew, "sequence numbers %d/%d out of order (manifest %d)" % (
                    seq, fseq, mfile["sequence_number"]))
            # the snapshot that added the file (EXISTING) or deleted it
            if esid is None:
                fail(ew, "an EXISTING or DELETED entry must name its snapshot")
            elif esid in snaps:
                if st == 0 and fseq is not None and snaps[esid]["sequence-number"] != fseq:
                    fail(ew, "snapshot %d added the file at sequence %d, the entry says %d" % (
                        esid, snaps[esid]["sequence-number"], fseq))
            elif not ((fseq is not None and fseq < oldest_seq) or
                      mfile["sequence_number"] < oldest_seq):
                fail(ew, "snapshot_id %d does not resolve (not listed, not expired)" % esid)
    got = {0: (mfile["existing_files_count"], mfile["existing_rows_count"]),
           1: (mfile["added_files_count"], mfile["added_rows_count"]),
           2: (mfile["deleted_files_count"], mfile["deleted_rows_count"])}
    for st in n:
        if tuple(n[st]) != got[st]:
            fail(mw, "status %d: the list counts %r, the manifest holds %r" % (st, got[st], n[st]))


def same_snapshot(a, b):
    strip = lambda s: {k: v for k, v in s.items() if k != "manifest-list"}
    return json.dumps(strip(a), sort_keys=True, default=repr) == \
        json.dumps(strip(b), sort_keys=True, default=repr)


def check_table(t):
    counts["tables"] += 1
    t.files.sort(key=lambda f: (f[0], f[1]))
    last_seq = None
    for version, path, meta, snaps in t.files:
        for sid, s in snaps.items():
            prior = t.known.get(sid)
            if prior is not None and not same_snapshot(prior[1], s):
                fail(path, "snapshot %d differs from the one %s lists: ids must not be "
                     "reused or changed" % (sid, prior[0]))
            elif prior is None:
                t.known[sid] = (path, s)
        ls = meta.get("last-sequence-number")
        if type(ls) is int and last_seq is not None and ls < last_seq[0] and version > last_seq[1]:
            fail(path, "last-sequence-number %d went back from %d" % (ls, last_seq[0]))
        if type(ls) is int:
            last_seq = (ls, version)
    for i, (version, path, meta, snaps) in enumerate(t.files):
        # a file may be gone when a metadata file at this version or later
        # no longer lists the snapshot (expired, or an aborted commit)
        later = [f[3] for f in t.files if f[1] != path and f[0] >= version]
        schemas = {s.get("schema-id"): s for s in meta.get("schemas", []) if isinstance(s, dict)}
        for sid, s in snaps.items():
            if not isinstance(s.get("manifest-list"), str) or \
                    type(s.get("sequence-number")) is not int:
                continue
            gone_ok = any(sid not in other for other in later)
            check_list(t, path, meta, s, snaps, schemas, gone_ok)


def reset():
    errors.clear()
    avro_cache.clear()
    for k in counts:
        counts[k] = 0


def rewrite_avro(path, edit_schema=None, edit_row=None):
    """Rewrites an Avro file in place, keeping its header metadata."""
    with open(path, "rb") as f:
        r = avro.datafile.DataFileReader(f, avro.io.DatumReader())
        meta = dict(r.meta)
        rows = list(r)
    sj = json.loads(meta["avro.schema"].decode())
    if edit_schema:
        edit_schema(sj)
    schema = avro.schema.parse(json.dumps(sj))
    with open(path, "wb") as f:
        w = avro.datafile.DataFileWriter(f, avro.io.DatumWriter(), schema,
                                         codec=meta["avro.codec"].decode())
        for k, v in meta.items():
            if not k.startswith("avro."):
                w.set_meta(k, v)
        for row in rows:
            w.append(edit_row(row) if edit_row else row)
        w.close()


def selftest(src):
    reset()
    if main([src], quiet=True) != 0:
        print("selftest: the table under %s does not conform to begin with" % src)
        return 1
    metas = []
    for dirpath, _, filenames in os.walk(src):
        metas += [os.path.join(dirpath, n) for n in filenames if n.endswith(".metadata.json")]

    def newest(d):
        best = None
        for dirpath, _, filenames in os.walk(d):
            for n in filenames:
                if n.endswith(".metadata.json") and not n.startswith("v"):
                    p = os.path.join(dirpath, n)
                    m = json.load(open(p))
                    v = version_of(p, m)
                    if best is None or v > best[0]:
                        best = (v, p, m)
        return best

    def edit_json(fn):
        def run(d):
            _, p, m = newest(d)
            text = fn(m, open(p).read())
            with open(p, "w") as f:
                f.write(text if isinstance(text, str) else json.dumps(m, indent=2))
        return run

    def snaps_of(m):
        return sorted(m["snapshots"], key=lambda s: s["sequence-number"])

    def as_double(m, text):  # what cJSON did to carried snapshot ids
        sid = snaps_of(m)[0]["snapshot-id"]
        return re.sub(r'("snapshot-id":\s*)%d\b' % sid, r"\g<1>%.15g" % float(sid), text)

    def chain_hole(m, text):
        snaps_of(m)[-1]["parent-snapshot-id"] = 1234567

    def log_ghost(m, text):
        m["snapshot-log"][-1]["snapshot-id"] = 7654321

    def seq_ahead(m, text):
        m["last-sequence-number"] = snaps_of(m)[-1]["sequence-number"] - 1

    def ref_astray(m, text):
        m["current-snapshot-id"] = snaps_of(m)[0]["snapshot-id"]

    def seq_float(m, text):
        return re.sub(r'("last-sequence-number":\s*)(\d+)', r"\g<1>\g<2>.0", text)

    def repeated(m, text):
        return text.replace('"format-version"', '"location": "x",\n  "format-version"', 1)

    def list_of_current(d):
        _, p, m = newest(d)
        cur = [s for s in m["snapshots"] if s["snapshot-id"] == m["current-snapshot-id"]][0]
        return Table(os.path.dirname(os.path.dirname(p))).local(m["location"],
                                                               cur["manifest-list"], p)

    def list_ghost_adder(d):
        def row(r):
            r["added_snapshot_id"] = 99999999
            r["sequence_number"] += 0
            return r
        rewrite_avro(list_of_current(d), edit_row=row)

    def list_long_as_double(d):
        def sch(sj):
            for f in sj["fields"]:
                if f["name"] == "added_rows_count":
                    f["type"] = "double"

        def row(r):
            r["added_rows_count"] = float(r["added_rows_count"])
            return r
        rewrite_avro(list_of_current(d), sch, row)

    cases = [
        ("a snapshot id printed as a double", edit_json(as_double), "must be a JSON long"),
        ("a hole in the parent chain", edit_json(chain_hole), "broken parent chain"),
        ("a snapshot log entry for no snapshot", edit_json(log_ghost),
         "snapshot-log[%s]: snapshot-id 7654321 is not in snapshots"),
        ("a sequence number above last-sequence-number", edit_json(seq_ahead),
         "is above last-sequence-number"),
        ("current-snapshot-id and refs.main disagree", edit_json(ref_astray),
         "refs.main must name current-snapshot-id"),
        ("a long written as 12.0", edit_json(seq_float), "'last-sequence-number' must be a JSON long"),
        ("a repeated member", edit_json(repeated), "appears twice"),
        ("a manifest added by no snapshot", list_ghost_adder,
         "added_snapshot_id 99999999 does not resolve"),
        ("a long that is a double in a manifest list", list_long_as_double,
         "field added_rows_count is 'double', the spec says long"),
    ]
    bad = 0
    for what, damage, want in cases:
        tmp = tempfile.mkdtemp(prefix="iceberg-selftest-")
        try:
            d = os.path.join(tmp, "t")
            shutil.copytree(src, d, symlinks=True)
            damage(d)
            reset()
            rc = main([d], quiet=True)
            pat = re.escape(want).replace(re.escape("%s"), r"\d+")
            hit = [e for e in errors if re.search(pat, e)]
            if rc == 0 or not hit:
                bad += 1
                print("selftest: NOT refused: %s (want %r; got %r)" % (what, want, errors[:3]))
            else:
                print("selftest: refused: %s: %s" % (what, hit[0][-160:]))
        finally:
            shutil.rmtree(tmp)
    print("selftest: %d of %d damaged copies refused" % (len(cases) - bad, len(cases)))
    return 1 if bad else 0


def main(roots, quiet=False):
    tables = {}
    for root in roots:
        for dirpath, dirnames, filenames in os.walk(root):
            dirnames.sort()
            if os.path.basename(dirpath) != "metadata":
                continue
            for name in sorted(filenames):
                if not name.endswith(".metadata.json"):
                    continue
                path = os.path.join(dirpath, name)
                counts["metadata"] += 1
                try:
                    with open(path, "rb") as f:
                        meta = strict_loads(f.read().decode("utf-8"))
                except (ValueError, UnicodeDecodeError) as e:
                    fail(path, "not strict JSON: %s" % e)
                    continue
                tdir = os.path.dirname(dirpath)
                t = tables.setdefault(tdir, Table(tdir))
                snaps = check_metadata(path, meta)
                t.files.append((version_of(path, meta), path, meta, snaps))
    for tdir in sorted(tables):
        check_table(tables[tdir])
    if quiet:
        return 1 if errors else 0
    print("iceberg-conformance: %(tables)d tables, %(metadata)d metadata files, "
          "%(snapshots)d snapshots, %(lists)d manifest lists, %(manifests)d manifests, "
          "%(entries)d manifest entries, %(gone)d files gone (expired)" % counts)
    for e in errors[:50]:
        print("  " + e)
    if len(errors) > 50:
        print("  ... and %d more" % (len(errors) - 50))
    return 1 if errors else 0


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "--selftest":
        sys.exit(selftest(sys.argv[2]))
    if len(sys.argv) < 2 or sys.argv[1].startswith("-"):
        sys.stderr.write("usage: iceberg-conformance.py DIR... | --selftest DIR\n")
        sys.exit(2)
    sys.exit(main(sys.argv[1:]))
