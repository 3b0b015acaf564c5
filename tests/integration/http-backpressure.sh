#!/bin/bash
# http-backpressure.sh - collection write backpressure (docs/LINKS.md,
# "Backpressure"): a producer at about twice a link's apply rate (the
# apply is slowed by the failpoint link.after_read=sleep and a small
# batch_bytes) against max_unapplied_records = 300: it gets 429 with
# Retry-After from 1 to 30 s, the backlog (system.links lag_records, and
# the Loams-Unapplied-Records every write answer carries) never passes
# the budget; with Loams-Backpressure: off it passes 300 but never 1200;
# a write alone over the budget is 413; after the run the collection holds
# every accepted record once (its applied counter is their number and its
# keys are theirs) and no refused one.  Also: the budgets are WITH options
# checked at CREATE and shown in system.links, and a table link's max_lag
# throttles the same way.
[ -n "${BASH_VERSION:-}" ] || exec bash "$0" "$@"
set -u
. "$(dirname "$0")/link-lib.sh"
. "$(dirname "$0")/http-lib.sh"

"$host" init --data-dir "$data" > /dev/null || die "init"
admin=$(make_token '*' admin)
http_start a LOAMS_FAILPOINTS=link.after_read=sleep:400
A=(-H "$(auth "$admin")")

# ---- options checked at CREATE ----
expect 200 POST /v1/sql "${A[@]}" --data-binary "CREATE STREAM shop.orders WITH (partitions = 2)"
expect 400 POST /v1/sql "${A[@]}" --data-binary "CREATE LINK shop.bad FROM STREAM shop.orders
  INTO COLLECTION shop.bad TRANSFORM (SELECT key AS _pk) WITH (max_unapplied_records = 'lots')"
is_error bad_sql
expect 400 POST /v1/sql "${A[@]}" --data-binary "CREATE LINK shop.bad FROM STREAM shop.orders
  INTO COLLECTION shop.bad TRANSFORM (SELECT key AS _pk) WITH (max_lag = '10s')"
is_error bad_sql
expect 400 POST /v1/sql "${A[@]}" --data-binary "CREATE LINK shop.bad FROM STREAM shop.orders
  INTO TABLE shop.bad TRANSFORM (SELECT key AS k) WITH (max_unapplied_bytes = '1MiB')"
is_error bad_sql
expect 200 POST /v1/sql "${A[@]}" --data-binary "CREATE LINK shop.l FROM STREAM shop.orders
  INTO COLLECTION shop.docs TRANSFORM (SELECT key AS _pk, json_get_int(value, '\$.n') AS n)
  WITH (batch_interval = '100ms', batch_bytes = '1KiB', max_unapplied_records = 300,
        max_unapplied_bytes = '1MiB')"
expect 200 GET /v1/links/shop.l "${A[@]}"
[ "$(jbody '[d["max_unapplied_records"], d["max_unapplied_bytes"], d["max_lag_ms"]]')" = \
  '[300, 1048576, null]' ] || die "budgets in system.links: $(cat "$work/body")"
ok "budgets: WITH options checked at CREATE, shown in system.links"

# ---- a producer at twice the apply rate ----
/usr/bin/python3 - "$url" "$admin" "$work" <<'PY' || die "the producer's checks failed"
import json, sys, time, urllib.request, urllib.error
url, token, work = sys.argv[1], sys.argv[2], sys.argv[3]
H = {"Authorization": "Bearer " + token}

def call(method, path, body=None, headers={}):
    req = urllib.request.Request(url + path, data=body, method=method, headers={**H, **headers})
    try:
        with urllib.request.urlopen(req, timeout=30) as r:
            return r.status, dict(r.headers), r.read()
    except urllib.error.HTTPError as e:
        return e.code, dict(e.headers), e.read()

def lag():
    st, _, body = call("GET", "/v1/links/shop.l")
    assert st == 200, body
    return json.loads(body)["lag_records"]

accepted, refused, n = [], [], 0
statuses = {}
max_hdr = max_lag = 0
retry = []
def produce(count, override=False):
    global n, max_hdr
    ids = ["p%d" % (n + i) for i in range(count)]
    n += count
    body = "".join(json.dumps({"id": i, "n": 1}) + "\n" for i in ids).encode()
    hdr = {"Content-Type": "application/x-ndjson"}
    if override:
        hdr["Loams-Backpressure"] = "off"
    st, h, resp = call("POST", "/v1/streams/shop.orders/records?key_field=id", body, hdr)
    statuses[st] = statuses.get(st, 0) + 1
    assert "Loams-Unapplied-Records" in h and "Loams-Unapplied-Bytes" in h, (st, h)
    int(h["Loams-Unapplied-Bytes"])
    if st == 200:
        accepted.extend(ids)
        max_hdr = max(max_hdr, int(h["Loams-Unapplied-Records"]))
    elif st == 429:
        refused.extend(ids)
        e = json.loads(resp)["error"]
        assert e["code"] == "too_many_requests", e
        ra = int(h["Retry-After"])
        assert 1 <= ra <= 30, ra
        retry.append(ra)
    else:
        raise AssertionError("status %d: %s" % (st, resp[:300]))
    return st

# warm up: the apply rate, 20 records a second (well under it)
for _ in range(4):
    assert produce(20) == 200
    time.sleep(1)
t0 = time.time()
while time.time() - t0 < 14:
    produce(20)
    max_lag = max(max_lag, lag())
    time.sleep(0.1)
print("budget 300: statuses %s, max backlog %d (headers %d), Retry-After %s..%s" %
      (statuses, max_lag, max_hdr, min(retry, default=None), max(retry, default=None)))
assert statuses.get(429, 0) > 0, statuses
assert statuses.get(200, 0) > 0, statuses
assert max_lag <= 300 and max_hdr <= 300, (max_lag, max_hdr)
# the override: up to 4x
over_max = 0
statuses.clear()
t0 = time.time()
while time.time() - t0 < 6:
    produce(60, override=True)
    over_max = max(over_max, lag())
    time.sleep(0.05)
print("override: statuses %s, max backlog %d (headers %d)" % (statuses, over_max, max_hdr))
assert over_max > 300 and over_max <= 1200 and max_hdr <= 1200, (over_max, max_hdr)
assert statuses.get(429, 0) > 0, statuses
# a write alone over the budget
big = "".join(json.dumps({"id": "big%d" % i}) + "\n" for i in range(301)).encode()
st, h, resp = call("POST", "/v1/streams/shop.orders/records?key_field=id", big,
                   {"Content-Type": "application/x-ndjson"})
assert st == 413 and "Loams-Unapplied-Records" in h, (st, resp)
assert json.loads(resp)["error"]["code"] == "payload_too_large"
st, h, resp = call("POST", "/v1/streams/shop.orders/records", b"x",
                   {"Loams-Backpressure": "maybe"})
assert st == 400, st
json.dump({"accepted": accepted, "refused": refused}, open(work + "/produced.json", "w"))
PY
ok "a producer at twice the apply rate: 429 with Retry-After, the backlog within the budget (4x with the override), 413 for one write over it"

# ---- a table link's max_lag ----
expect 200 POST /v1/sql "${A[@]}" --data-binary "CREATE STREAM shop.events;
CREATE LINK shop.t FROM STREAM shop.events INTO TABLE shop.events_t
  TRANSFORM (SELECT key AS k) WITH (batch_interval = '100ms', max_lag = '2s');
PAUSE LINK shop.t"
expect 200 GET /v1/links/shop.t "${A[@]}"
[ "$(jbody '[d["max_lag_ms"], d["max_unapplied_records"], d["max_unapplied_bytes"]]')" = \
  '[2000, null, null]' ] || die "max_lag in system.links: $(cat "$work/body")"
sleep 1 # a run that started before the PAUSE has stopped
expect 200 POST /v1/streams/shop.events/records "${A[@]}" --data-binary 'one'
sleep 2.5
expect 429 POST /v1/streams/shop.events/records "${A[@]}" --data-binary 'two'
is_error too_many_requests
ra=$(sed -n 's/^Retry-After: *\([0-9]*\).*/\1/ip' "$work/headers")
[ -n "$ra" ] && [ "$ra" -ge 1 ] && [ "$ra" -le 30 ] || die "Retry-After '$ra'"
expect 200 POST /v1/streams/shop.events/records "${A[@]}" -H 'Loams-Backpressure: off' \
  --data-binary 'three'
grep -qi '^Loams-Unapplied-Records: 2' "$work/headers" || die "headers: $(cat "$work/headers")"
ok "a table link's max_lag = '2s': 429 once its oldest unapplied record is 2 s old (Retry-After $ra), 4x with the override"
# ALTER LINK changes a budget for the next write: no max_lag, no 429
expect 429 POST /v1/streams/shop.events/records "${A[@]}" --data-binary 'four'
expect 200 POST /v1/sql "${A[@]}" --data-binary "ALTER LINK shop.t SET (max_lag = 'none')"
expect 200 GET /v1/links/shop.t "${A[@]}"
[ "$(jbody '[d["max_lag_ms"], d["max_unapplied_records"]]')" = '[null, null]' ] ||
  die "max_lag after ALTER LINK: $(cat "$work/body")"
expect 200 POST /v1/streams/shop.events/records "${A[@]}" --data-binary 'four'
ok "ALTER LINK shop.t SET (max_lag = 'none'): the next write goes in"

# ---- exactly the accepted records ----
t=0
while :; do
  expect 200 GET /v1/links/shop.l "${A[@]}"
  [ "$(jbody 'd["lag_records"]')" = 0 ] && break
  t=$((t + 1))
  [ "$t" -lt 240 ] || die "the link does not catch up in 60 s"
  sleep 0.25
done
sleep 0.5
expect 200 GET /v1/links/shop.l "${A[@]}"
applied=$(jbody 'd["applied_records"]')
stop_node a
"$host" collection dump shop.docs --data-dir "$data" "${plugin_args[@]}" > "$work/dump" ||
  die "collection dump"
/usr/bin/python3 - "$work" "$applied" <<'PY' || die "the collection is not the accepted records"
import json, sys
work, applied = sys.argv[1], int(sys.argv[2])
p = json.load(open(work + "/produced.json"))
acc, ref = p["accepted"], p["refused"]
keys = [json.loads(l)["_pk"] for l in open(work + "/dump") if l.strip()]
assert len(keys) == len(set(keys)), "a key twice"
assert applied == len(acc), ("applied", applied, "accepted", len(acc))
assert set(keys) == set(acc), (len(keys), len(acc), sorted(set(keys) ^ set(acc))[:10])
assert not set(keys) & set(ref)
print("collection: %d accepted records applied once, %d refused absent" % (len(acc), len(ref)))
PY
ok "the collection holds every accepted record once and no refused one"
