#!/bin/bash
# link-search.sh - `loams-host search` over a collection filled by a link in
# two commits (two splits, one document upserted by the second): the hits
# come in the BM25 order of docs/COLLECTION-SPLIT.md (k1 1.2, b 0.75, global
# statistics over live documents, ties by _pk) with the scores a reference
# computed here from the produced records gives; a document whose terms occur
# more, or in a shorter field, ranks first; --field and --k narrow the
# answer; both the table and --json list the splits read (the split objects
# of the store).  Then `loams-host links` prints the link as a table.
[ -n "${BASH_VERSION:-}" ] || exec bash "$0" "$@"
set -u
. "$(dirname "$0")/link-lib.sh"

cat >"$work/first.jsonl" <<'EOF'
{"id":"d1","subject":"printer jam","body":"the printer jams on floor three every morning"}
{"id":"d2","subject":"printer","body":"printer printer printer"}
{"id":"d3","subject":"network outage","body":"vpn down but the printer is fine"}
{"id":"d4","subject":"toner","body":"replace the toner cartridge"}
EOF
cat >"$work/second.jsonl" <<'EOF'
{"id":"d5","subject":"printer on fire in the long hallway next to the kitchen","body":"smoke"}
{"id":"d6","subject":"laptop screen","body":"flickers after the update"}
{"id":"d4","subject":"toner","body":"printer toner low"}
EOF
# The reference: BM25 over the newest version of each document.
cat >"$work/bm25.py" <<'PY'
import json, math, re, sys
def toks(s):
    return re.findall(r"[a-z0-9]+", s.lower())
docs = {}
for path in sys.argv[3:]:
    for line in open(path):
        r = json.loads(line)
        docs[r["id"]] = r
q, fields = sys.argv[1], sys.argv[2].split(",")
k1, b, scores = 1.2, 0.75, {}
for f in fields:
    have = {pk: toks(d[f]) for pk, d in docs.items() if toks(d[f])}
    avg = sum(len(t) for t in have.values()) / len(have)
    for t in dict.fromkeys(toks(q)):
        df = sum(1 for tt in have.values() if t in tt)
        if df == 0:
            continue
        idf = math.log(1 + (len(have) - df + 0.5) / (df + 0.5))
        for pk, tt in have.items():
            tf = tt.count(t)
            if tf:
                scores[pk] = scores.get(pk, 0) + idf * tf * (k1 + 1) / (
                    tf + k1 * (1 - b + b * len(tt) / avg))
for pk, s in sorted(scores.items(), key=lambda kv: (-kv[1], kv[0])):
    print(pk, "%.10f" % s)
PY
ref() { /usr/bin/python3 "$work/bm25.py" "$1" "$2" "$work/first.jsonl" "$work/second.jsonl"; }
search() { "$host" search t.c "$@" --data-dir "$data" "${plugin_args[@]}"; }

sql "CREATE STREAM t.s WITH (partitions = 2);
     CREATE LINK t.l FROM STREAM t.s INTO COLLECTION t.c
       TRANSFORM (SELECT key AS _pk, subject, body) WITH (batch_interval = '100ms');" \
  >/dev/null || die "CREATE failed"
start_node a
"$host" produce t.s --data-dir "$data" --key-field id <"$work/first.jsonl" >/dev/null 2>&1 ||
  die "produce failed"
wait_caught_up 30
"$host" produce t.s --data-dir "$data" --key-field id <"$work/second.jsonl" >/dev/null 2>&1 ||
  die "produce failed"
wait_caught_up 30
stop_node a
ls "$data/objects/t/c/splits/" | grep '\.split$' | sort >"$work/split-files.txt"
[ "$(wc -l <"$work/split-files.txt")" = 2 ] || die "want 2 split objects, have $(cat "$work/split-files.txt")"

# The table: "  N. SCORE PK DOC", then "splits read: N" and one line per split.
check_table() { # check_table WANT_FILE QUERY ARGS...: ranks and 4-decimal scores of the table
  local want=$1
  shift
  search "$@" >"$work/table.txt" || die "search $* failed"
  sed -n 's/^ *[0-9]*\. *\([0-9.]*\) *\([^ ]*\) .*/\2 \1/p' "$work/table.txt" >"$work/got-hits.txt"
  /usr/bin/python3 - "$want" "$work/got-hits.txt" <<'PY' || { cat "$work/table.txt"; die "search $*: ranking differs from BM25"; }
import sys
want = [l.split() for l in open(sys.argv[1])]
got = [l.split() for l in open(sys.argv[2])]
assert [w[0] for w in want] == [g[0] for g in got], (want, got)
for w, g in zip(want, got):
    assert abs(float(w[1]) - float(g[1])) <= 0.00006, (w, g)
PY
}
ref printer subject,body >"$work/want.txt"
[ "$(cut -d' ' -f1 "$work/want.txt" | tr '\n' ' ')" = "d2 d1 d4 d3 d5 " ] ||
  die "the reference ranks $(cut -d' ' -f1 "$work/want.txt" | tr '\n' ' ')"
check_table "$work/want.txt" printer
grep -q "^5 hits of 6 live documents" "$work/table.txt" || { cat "$work/table.txt"; die "hit count line"; }
grep -q "^splits read: 2$" "$work/table.txt" || { cat "$work/table.txt"; die "no 'splits read: 2'"; }
for s in $(cat "$work/split-files.txt"); do
  grep -Eq "^  t/c/splits/$s \([0-9]+ docs, [0-9]+ matched\)$" "$work/table.txt" ||
    { cat "$work/table.txt"; die "split $s is not listed as read"; }
done
grep -Eq "^  t/c/splits/[^ ]+ \(4 docs, 3 matched\)$" "$work/table.txt" &&
  grep -Eq "^  t/c/splits/[^ ]+ \(3 docs, 2 matched\)$" "$work/table.txt" ||
  { cat "$work/table.txt"; die "per-split docs/matched counts are wrong"; }
ok "search printer: $(cut -d' ' -f1 "$work/got-hits.txt" | tr '\n' ' ')(BM25 order and scores), 2 splits read"

# a shorter field ranks first: subject only, "printer" (1 token) > "printer jam" > d5's long subject
ref printer subject >"$work/want.txt"
[ "$(cut -d' ' -f1 "$work/want.txt" | tr '\n' ' ')" = "d2 d1 d5 " ] || die "reference for --field subject"
check_table "$work/want.txt" printer --field subject
ref "toner smoke" subject,body | head -n 2 >"$work/want.txt"
check_table "$work/want.txt" "toner smoke" --k 2
[ "$(wc -l <"$work/got-hits.txt")" = 2 ] || die "--k 2 gave $(wc -l <"$work/got-hits.txt") hits"
ok "--field subject: d2 d1 d5; --k 2: $(cut -d' ' -f1 "$work/got-hits.txt" | tr '\n' ' ')"

# --json: the plugin's answer
search "printer jam" --json >"$work/answer.json" || die "search --json failed"
ref "printer jam" subject,body >"$work/want.txt"
/usr/bin/python3 - "$work/answer.json" "$work/want.txt" "$work/split-files.txt" <<'PY' || die "search --json differs"
import json, sys
a = json.load(open(sys.argv[1]))
want = [l.split() for l in open(sys.argv[2])]
files = sorted("t/c/splits/" + l.strip() for l in open(sys.argv[3]))
assert a["collection"] == "t.c" and a["mode"] == "text" and a["live_docs"] == 6, a
assert [h["_pk"] for h in a["hits"]] == [w[0] for w in want], (a["hits"], want)
for h, w in zip(a["hits"], want):
    assert abs(h["score"] - float(w[1])) < 1e-6, (h, w)  # the answer prints 9 digits
    assert h["split"] in files, h
d1 = [h for h in a["hits"] if h["_pk"] == "d1"][0]
assert d1["doc"] == {"subject": "printer jam",
                     "body": "the printer jams on floor three every morning"}, d1
d4 = [h for h in a["hits"] if h["_pk"] == "d4"][0]
assert d4["doc"]["body"] == "printer toner low" and d4["split"] != d1["split"], d4  # newest wins
assert sorted(s["key"] for s in a["splits"]) == files, a["splits"]
assert sum(s["matched"] for s in a["splits"]) == len(want), a["splits"]
PY
ok "search --json: hits, scores, stored documents and splits as computed"

# the links table
"$host" links --data-dir "$data" >"$work/links.txt" || die "links failed"
/usr/bin/python3 - "$work/links.txt" <<'PY' || { cat "$work/links.txt"; die "links table is not as documented"; }
import re, sys
lines = open(sys.argv[1]).read().splitlines()
assert lines[0].split() == ["LINK", "STATE", "TARGET", "APPLIED", "SKIPPED", "DLQ", "LAG",
                            "LAG_S", "LAST", "COMMIT"], lines[0]
row = lines[1].split()
assert row[:9] == ["t.l", "running", "t.c", "7", "0", "0", "0", "0.0"] + row[8:9], row
assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ", row[8]), row
parts = {}
assert re.fullmatch(r"    memory: peak [\d.]+ (B|KiB|MiB) of the run \(budget 1GiB\)", lines[-1]), lines
for l in lines[2:-1]:
    m = re.fullmatch(r"    partition (\d+): applied (\d+) of (\d+)", l)
    assert m, l
    parts[int(m.group(1))] = (int(m.group(2)), int(m.group(3)))
assert sorted(parts) == [0, 1], parts
assert all(a == h for a, h in parts.values()) and sum(a for a, _ in parts.values()) == 7, parts
PY
ok "links table: t.l running, 7 applied, both partitions caught up, last commit and peak memory shown"
