#!/bin/bash
# link-vector-index.sh - a collection's vector index through a real link
# (docs/COLLECTION-SPLIT.md, "Vector index"): vectors from embed() (the
# mock OpenAI-compatible server, 127.0.0.1 only) go into a collection whose
# link sets ann_min_vectors = 50, so its split gets a hot build.
#   1. the node crashes at the failpoint hot_build.before_commit (the
#      index built and uploaded, not committed): the collection is still
#      searchable (every split scanned: "vectors: exact"), and the crash
#      left its work dir under <data>/work/active;
#   2. a new node removes that work dir (its process is gone), the hot
#      build commits: the split's manifest entry names the index, search
#      --vector answers through it ("vectors: index"), the same hits as
#      --exact with the same scores (recall@10 = 1 here), a document's own
#      vector finds it first; no work dir is left once the node idles;
#   3. a hybrid query (text and --vector) fuses both rankings;
#   4. `collection describe` shows the index of every split.
[ -n "${BASH_VERSION:-}" ] || exec bash "$0" "$@"
set -u
. "$(dirname "$0")/link-lib.sh"

KEY="sk-loams-test-ann"
export OPENAI_API_KEY="$KEY"
DIMS=16
N=400
/usr/bin/python3 "$src/tests/integration/mock_embed_server.py" --port-file "$work/port" \
  --log "$work/mock.jsonl" --key "$KEY" --dims "$DIMS" 2>"$work/mock.log" &
pid[mock]=$!
for _ in $(seq 50); do [ -s "$work/port" ] && break; sleep 0.1; done
[ -s "$work/port" ] || die "the mock server did not start"
base="http://127.0.0.1:$(cat "$work/port")"
vec() { /usr/bin/python3 "$src/tests/integration/mock_embed_server.py" --vector "$1" --dims "$DIMS"; }
search() { "$host" search docs --data-dir "$data" "${plugin_args[@]}" "$@"; }

/usr/bin/python3 - "$N" >"$work/docs.jsonl" <<'PY'
import json, sys
topics = ["printer", "network", "billing", "laptop", "password"]
for i in range(int(sys.argv[1])):
    print(json.dumps({"id": "d%03d" % i, "body": "%s ticket number %d" % (topics[i % 5], i)}))
PY
sql "CREATE EMBEDDING PROVIDER endpoint USING openai WITH (base_url = '$base', model = 'm',
       dimensions = $DIMS, api_key_env = 'OPENAI_API_KEY');
     CREATE STREAM s WITH (partitions = 2);
     CREATE LINK l FROM STREAM s INTO COLLECTION docs
       TRANSFORM (SELECT key AS _pk, json_get_str(value, '\$.body') AS body,
                         embed('endpoint', json_get_str(value, '\$.body')) AS vec)
       WITH (batch_interval = '500ms', ann_min_vectors = '50');" >/dev/null ||
  die "CREATE failed"
"$host" produce s --data-dir "$data" --key-field id <"$work/docs.jsonl" >/dev/null 2>&1 ||
  die "produce failed"

# ---- 1. a crash between the build and its commit ----------------------
start_node a LOAMS_FAILPOINTS=hot_build.before_commit=crash
wait_dead a 60
grep -q "built the vector index of 'vec'" "$work/a.log" || die "node a built no index: $(tail -5 "$work/a.log")"
ls -d "$data"/work/active/hot-build-* >/dev/null 2>&1 || die "the crash left no work dir (test is void)"
q=$(vec "printer ticket number 10")
search --vector "$q" --k 5 >"$work/crash.txt" || die "search after the crash failed"
grep -q "^  .*vectors: exact)$" "$work/crash.txt" || { cat "$work/crash.txt"; die "want an exact scan after the crash"; }
grep -q "vectors: index" "$work/crash.txt" && die "an uncommitted index answered"
grep -q '^  1\. 1\.0000 *d010 ' "$work/crash.txt" || { cat "$work/crash.txt"; die "d010 is not first"; }
ok "crash at hot_build.before_commit: searchable (exact), work dir left behind"

# ---- 2. the next node cleans up and commits the index -----------------
start_node b
t=0
until search --vector "$q" --k 5 2>/dev/null | grep -q "vectors: index)$"; do
  sleep 0.3
  t=$((t + 1))
  [ "$t" -lt 100 ] || die "no index answered within 30 s: $(grep -i 'hot' "$work/b.log" | tail -5)"
done
wait_caught_up 30
t=0
until [ -z "$(find "$data/work" -mindepth 2 2>/dev/null)" ]; do
  sleep 0.2
  t=$((t + 1))
  [ "$t" -lt 100 ] || die "work dirs left: $(ls -R "$data/work")"
done
grep -q "work dir hot-build-.* was left by process" "$work/b.log" || die "node b did not report the dead work dir"
stop_node b
ok "node b removed the dead work dir, committed the index"

# index answers == exact answers, scores identical; own vector first
for i in 7 123 250 399; do
  body=$(sed -n "$((i + 1))p" "$work/docs.jsonl" | /usr/bin/python3 -c 'import json,sys; print(json.load(sys.stdin)["body"])')
  v=$(vec "$body")
  search --vector "$v" --k 10 --json >"$work/idx.json" || die "indexed search failed"
  search --vector "$v" --k 10 --exact --json >"$work/exact.json" || die "exact search failed"
  /usr/bin/python3 - "$work/idx.json" "$work/exact.json" "$i" <<'PY' || die "query $i: the index differs from the exact scan"
import json, sys
a, b = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
big = [s for s in a["splits"] if s["live"] >= 50]
assert big and all(s["vector_search"] == "index" for s in big), a["splits"]
assert all(s["vector_search"] == "exact" for s in b["splits"]), b["splits"]
ha = [(h["_pk"], h["score"]) for h in a["hits"]]
hb = [(h["_pk"], h["score"]) for h in b["hits"]]
assert ha == hb, (ha, hb)
assert ha[0][0] == "d%03d" % int(sys.argv[3]) and abs(ha[0][1] - 1) < 1e-6, ha[0]
assert sum(s["matched"] for s in a["splits"]) < sum(s["matched"] for s in b["splits"])
PY
done
ok "4 queries: the index gives the exact scan's hits and scores"

# ---- 3. hybrid ---------------------------------------------------------
search "printer" --vector "$q" --k 5 --json >"$work/hybrid.json" || die "hybrid search failed"
/usr/bin/python3 - "$work/hybrid.json" <<'PY' || die "the hybrid answer is wrong"
import json, sys
a = json.load(open(sys.argv[1]))
assert a["mode"] == "hybrid", a["mode"]
h = a["hits"]
assert len(h) == 5
# d010 is a printer ticket and the vector's own document: in both lists, first
assert h[0]["_pk"] == "d010" and h[0]["vector_rank"] == 1 and h[0]["text_rank"] is not None, h[0]
for x in h:
    want = sum(1.0 / (60 + r) for r in (x["text_rank"], x["vector_rank"]) if r is not None)
    assert abs(x["score"] - want) < 1e-9, x
PY
ok "hybrid: d010 first, scores are reciprocal rank fusion"

# ---- 4. describe -----------------------------------------------------
"$host" collection describe docs --data-dir "$data" "${plugin_args[@]}" >"$work/describe.txt" ||
  die "collection describe failed"
grep -Eq "^  default/docs/splits/[^ ]+ .*index vec: hnsw cosine, [0-9]+ vectors, [0-9]+ bytes$" "$work/describe.txt" ||
  { cat "$work/describe.txt"; die "describe shows no index"; }
grep -q "index: none" "$work/describe.txt" && { cat "$work/describe.txt"; die "a split lacks its index"; }
ok "collection describe lists each split's index"
