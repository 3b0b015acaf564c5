#!/bin/bash
# link-csv.sh - FORMAT csv end to end: a CSV file with quoted line breaks,
# embedded quotes, CRLF, empty fields, ragged rows, a value that does not
# fit its declared type and an unterminated quote, one row per record,
# produced with `produce --encoding base64`, through a link into a
# collection.  The good rows equal what Python's csv module reads from the
# file; every bad one is dead-lettered once with its line and column.
[ -n "${BASH_VERSION:-}" ] || exec bash "$0" "$@"
set -u
. "$(dirname "$0")/link-lib.sh"

# The rows of the file; id 5, 6, 8 and 9 are bad.
/usr/bin/python3 - "$work/rows.b64" "$work/file.csv" <<'PY'
import base64, sys
rows = [
    '1,plain,simple,10\r\n',
    '2,"quoted, with comma","line one\r\nline two",20\r\n',
    '3,"say ""hi""","",\r\n',
    '4,,"multi\nline\nnote",40\r\n',
    '5,ragged,too few\r\n',
    '6,"ragged\nnewline",x,1,extra\r\n',
    '7,caf\u00e9,"tab\there",-70\r\n',
    '8,typed,bad qty,many\r\n',
    '10,"a,""b"",c",,0\n',
    '9,"unterminated,oops,90\r\n',
]
with open(sys.argv[1], "w") as f:
    for r in rows:
        f.write(base64.b64encode(r.encode()).decode() + "\n")
with open(sys.argv[2], "w", newline="") as f:
    f.write("".join(rows))
PY
sql "CREATE STREAM t.s WITH (partitions = 1);
     CREATE LINK t.l FROM STREAM t.s
       FORMAT csv (columns = 'id:string, name, note, qty:int64')
       INTO COLLECTION t.c
       TRANSFORM (SELECT id AS _pk, name, note, qty)
       WITH (batch_interval = '200ms', on_error = 'dead_letter',
             dead_letter_stream = 't.errors');" >/dev/null || die "CREATE failed"
"$host" produce t.s --encoding base64 --data-dir "$data" <"$work/rows.b64" >/dev/null ||
  die "produce --encoding base64 failed"
# the records are the rows, byte for byte
"$host" stream read t.s --partition 0 --from 0 --limit 100 --json --data-dir "$data" \
  >"$work/source.jsonl" || die "reading t.s failed"
/usr/bin/python3 - "$work/source.jsonl" "$work/rows.b64" <<'PY' || die "the records are not the rows"
import base64, json, sys
got = [json.loads(l)["value"] for l in open(sys.argv[1])]
want = [base64.b64decode(l.strip()).decode() for l in open(sys.argv[2])]
assert got == want, (got, want)
PY
start_node a
wait_caught_up 60
stop_node a
"$host" collection dump t.c --data-dir "$data" "${plugin_args[@]}" >"$work/c.jsonl" ||
  die "dump t.c failed"
/usr/bin/python3 - "$work/file.csv" "$work/c.jsonl" <<'PY' || die "the documents differ from Python's csv reading"
import csv, json, sys
want = {}
with open(sys.argv[1], newline="") as f:
    for row in csv.reader(f):
        if len(row) != 4 or row[0] == "9":
            continue
        if row[3] != "" and not row[3].lstrip("-").isdigit():
            continue
        want[row[0]] = {"name": row[1], "note": row[2],
                        "qty": int(row[3]) if row[3] != "" else None}
assert sorted(want) == ["1", "10", "2", "3", "4", "7"], sorted(want)
got = {}
for d in map(json.loads, open(sys.argv[2])):
    # an unquoted empty field is NULL; Python reads it as ''
    got[d["_pk"]] = {"name": d.get("name") or "", "note": d.get("note") or "",
                     "qty": d.get("qty")}
assert got == want, (got, want)
PY
ok "6 good rows equal Python's csv reading (quoted CRLF and LF, doubled quotes, empty fields)"
parts=$("$host" sql --data-dir "$data" --json "SELECT * FROM system.streams" |
  /usr/bin/python3 -c '
import json, sys
print("".join(str(s["partitions"]) for s in json.load(sys.stdin) if s["stream"] == "t.errors"))')
[ -n "$parts" ] || die "the dead-letter stream t.errors does not exist"
for p in $(seq 0 $((parts - 1))); do
  "$host" stream read t.errors --partition "$p" --from 0 --limit 100 --json --data-dir "$data" ||
    die "reading t.errors failed"
done >"$work/dlq.jsonl"
/usr/bin/python3 - "$work/dlq.jsonl" <<'PY' || die "the dead letters are not the bad rows with their line and column"
import json, sys
want = {
    4: "line 1: 3 fields, expected 4 (a ragged row; columns id, name, note, qty)",
    5: "line 2: 5 fields, expected 4 (a ragged row; columns id, name, note, qty)",
    7: "line 1 column 17 (field 4, 'qty'): 'many' is not an int64 (declared)",
    9: "line 1 column 3 (field 2): unterminated quote",
}
got = {}
for d in (json.loads(l) for l in open(sys.argv[1]) if l.strip()):
    h = d["headers"]
    off = int(h["loams.offset"])
    assert off not in got, ("dead-lettered twice", off)
    got[off] = h["loams.error"]
assert sorted(got) == sorted(want), got
for off, frag in want.items():
    assert got[off].startswith("partition 0 offset %d: " % off), got[off]
    assert frag in got[off], (frag, got[off])
PY
ok "4 bad rows dead-lettered once each with their line and column"
