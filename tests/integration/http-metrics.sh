#!/bin/bash
# http-metrics.sh - GET /metrics on a real node, read by an independent
# parser (Debian's python3-prometheus-client): every family has HELP and
# TYPE and a type the parser accepts, counters end in _total, label values
# with quotes and backslashes survive; the link families follow a link that
# falls behind (paused while records arrive: lag in records and seconds
# grow) and catches up (lag 0, applied counter = records produced, a
# commit-duration histogram whose count grew); HTTP requests are counted by
# route and status; access: 401 without a token, 403 with a token of one
# namespace, 200 with a read token of '*', and without a token when
# metrics_public = true.
[ -n "${BASH_VERSION:-}" ] || exec bash "$0" "$@"
set -u
. "$(dirname "$0")/link-lib.sh"
. "$(dirname "$0")/http-lib.sh"

/usr/bin/python3 -c 'import prometheus_client.parser' 2>/dev/null ||
  die "python3-prometheus-client is missing (scripts/setup.sh installs it)"

"$host" init --data-dir "$data" > /dev/null || die "init"
admin=$(make_token '*' admin)
reader=$(make_token '*' read)
shop_reader=$(make_token shop read)
http_start a
A=(-H "$(auth "$admin")")

# metrics: fetches /metrics with the read token into $work/metrics and
# checks it with the parser; prints nothing.
metrics() {
  expect 200 GET /metrics -H "$(auth "$reader")"
  grep -qi '^content-type: text/plain; version=0.0.4' "$work/headers" ||
    die "/metrics content type: $(grep -i content-type "$work/headers")"
  cp "$work/body" "$work/metrics"
  /usr/bin/python3 - "$work/metrics" <<'PY' || die "/metrics does not parse: $(head -c 2000 "$work/metrics")"
import sys, re
from prometheus_client.parser import text_string_to_metric_families
text = open(sys.argv[1]).read()
fams = list(text_string_to_metric_families(text))
assert fams, "no families"
names = [f.name for f in fams]
assert len(names) == len(set(names)), "a family twice: %s" % names
for f in fams:
    assert f.type in ("counter", "gauge", "histogram"), (f.name, f.type)
    assert f.documentation, "no HELP for %s" % f.name
    assert re.fullmatch(r"[a-zA-Z_:][a-zA-Z0-9_:]*", f.name), f.name
    assert f.name.startswith("loams_"), f.name
# every TYPE counter is spelled NAME_total on its samples and TYPE line
for m in re.finditer(r"^# TYPE (\S+) counter$", text, re.M):
    assert m.group(1).endswith("_total"), m.group(1)
PY
}

# value NAME LABELS: the value of a sample of $work/metrics (parsed by the
# parser), LABELS a Python dict; "none" when absent.
value() {
  /usr/bin/python3 - "$work/metrics" "$1" "$2" <<'PY'
import sys
from prometheus_client.parser import text_string_to_metric_families
want, labels = sys.argv[2], eval(sys.argv[3])
for f in text_string_to_metric_families(open(sys.argv[1]).read()):
    for s in f.samples:
        if s.name == want and s.labels == labels:
            print(repr(s.value)); sys.exit(0)
print("none")
PY
}

# ---- access ----
expect 401 GET /metrics
is_error unauthorized
expect 403 GET /metrics -H "$(auth "$shop_reader")"
is_error forbidden
ok "/metrics: 401 without a token, 403 with a token of one namespace"

# ---- a link that falls behind and catches up ----
# a link name that needs escaping cannot exist (names are identifiers);
# the stream name with a quote cannot either, so escaping is proven by the
# route label of a 404 ("-") and in test_metrics.
expect 200 POST /v1/sql "${A[@]}" --data-binary "CREATE STREAM shop.orders WITH (partitions = 2);
CREATE LINK shop.l FROM STREAM shop.orders INTO COLLECTION shop.docs
  TRANSFORM (SELECT key AS _pk, json_get_int(value, '\$.n') AS n) WITH (batch_interval = '100ms')"
metrics
[ "$(value loams_link_lag_records '{"link": "shop.l"}')" = 0.0 ] ||
  die "lag of a new link: $(grep lag "$work/metrics")"
[ "$(value loams_link_state '{"link": "shop.l", "state": "running"}')" = 1.0 ] ||
  die "state: $(grep state "$work/metrics")"
expect 200 POST /v1/sql "${A[@]}" --data-binary "PAUSE LINK shop.l"
sleep 1
produce() { # produce FIRST LAST
  seq "$1" "$2" | sed 's/.*/{"id":"k&","n":&}/' > "$work/batch"
  expect 200 POST "/v1/streams/shop.orders/records?key_field=id" "${A[@]}" \
    -H 'Content-Type: application/x-ndjson' --data-binary @"$work/batch"
}
produce 1 40
sleep 1.2
metrics
lag1=$(value loams_link_lag_records '{"link": "shop.l"}')
lag1s=$(value loams_link_lag_seconds '{"link": "shop.l"}')
[ "$lag1" = 40.0 ] || die "lag after 40 records while paused: $lag1"
/usr/bin/python3 -c "import sys; sys.exit(0 if float('$lag1s') >= 1.0 else 1)" ||
  die "lag seconds while paused: $lag1s"
[ "$(value loams_link_state '{"link": "shop.l", "state": "paused"}')" = 1.0 ] ||
  die "paused state: $(grep state "$work/metrics")"
produce 41 60
sleep 1
metrics
lag2=$(value loams_link_lag_records '{"link": "shop.l"}')
lag2s=$(value loams_link_lag_seconds '{"link": "shop.l"}')
[ "$lag2" = 60.0 ] || die "lag after 60 records: $lag2"
/usr/bin/python3 -c "import sys; sys.exit(0 if float('$lag2s') > float('$lag1s') else 1)" ||
  die "lag seconds do not grow while behind: $lag1s then $lag2s"
ok "/metrics: a paused link's lag grows (40 then 60 records, $lag1s then $lag2s s)"

expect 200 POST /v1/sql "${A[@]}" --data-binary "RESUME LINK shop.l"
t=0
while :; do
  metrics
  l=$(value loams_link_lag_records '{"link": "shop.l"}')
  [ "$l" = 0.0 ] && break
  t=$((t + 1))
  [ "$t" -lt 60 ] || die "the link does not catch up in 30 s (lag $l)"
  sleep 0.5
done
[ "$(value loams_link_lag_seconds '{"link": "shop.l"}')" = 0.0 ] || die "lag seconds after"
[ "$(value loams_link_applied_records_total '{"link": "shop.l"}')" = 60.0 ] ||
  die "applied: $(grep applied "$work/metrics")"
n=$(value loams_link_commit_duration_seconds_count '{"link": "shop.l"}')
inf=$(value loams_link_commit_duration_seconds_bucket '{"link": "shop.l", "le": "+Inf"}')
[ "$n" != none ] && [ "$n" = "$inf" ] && [ "$n" != 0.0 ] ||
  die "commit histogram: count $n, +Inf $inf"
lc=$(value loams_link_last_commit_timestamp_seconds '{"link": "shop.l"}')
/usr/bin/python3 -c "import sys,time; sys.exit(0 if abs(time.time() - float('$lc')) < 120 else 1)" ||
  die "last commit time $lc"
ok "/metrics: after RESUME the lag is 0, 60 applied, $n commits in the histogram"

# ---- the node's families ----
[ "$(value loams_tasks_running '{"class": "link-apply"}')" = 1.0 ] ||
  die "running link tasks: $(grep tasks_running "$work/metrics")"
r=$(value loams_lease_renewals_total '{}')
[ "$r" != none ] && [ "$r" != 0.0 ] || die "lease renewals: $r"
for f in loams_tasks_queued loams_task_queue_age_seconds loams_gc_backlog_records \
  loams_process_resident_memory_bytes loams_task_memory_peak_bytes loams_lease_losses_total; do
  grep -q "^# TYPE $f " "$work/metrics" || die "no family $f"
done
rss=$(value loams_process_resident_memory_bytes '{}')
/usr/bin/python3 -c "import sys; sys.exit(0 if float('$rss') > 1e6 else 1)" || die "rss $rss"
expect 404 GET '/no/such"path' -H "$(auth "$reader")"
metrics
p=$(value loams_http_requests_total '{"route": "streams.produce", "status": "200"}')
[ "$p" = 2.0 ] || die "produce requests: $p"
[ "$(value loams_http_requests_total '{"route": "-", "status": "404"}')" = 1.0 ] ||
  die "404s: $(grep requests_total "$work/metrics")"
[ "$(value loams_http_requests_total '{"route": "metrics", "status": "403"}')" = 1.0 ] ||
  die "403s: $(grep requests_total "$work/metrics")"
ok "/metrics: tasks, leases, process memory, GC backlog, HTTP requests by route and status"
stop_node a

# ---- metrics_public ----
http_start b LOAMS_METRICS_PUBLIC=true
expect 200 GET /metrics
expect 401 GET /v1/links
ok "/metrics: metrics_public = true needs no token (and only /metrics)"
stop_node b

# ---- maintenance debt ----
# Maintenance measures the debt at the start of each pass; with its commit
# refused (the failpoint) the debt stays, pass after pass: one small data
# file, or split, per commit, until there are enough to rewrite.
http_start c LOAMS_METRICS_PUBLIC=true LOAMS_FAILPOINTS=link.after_maintain=error
expect 200 POST /v1/sql "${A[@]}" --data-binary "CREATE STREAM shop.ev;
CREATE LINK shop.lt FROM STREAM shop.ev INTO TABLE shop.evt
  TRANSFORM (SELECT key AS k) WITH (batch_interval = '100ms', maintenance_interval = '1s');
CREATE LINK shop.lc FROM STREAM shop.ev INTO COLLECTION shop.evc
  TRANSFORM (SELECT key AS _pk) WITH (batch_interval = '100ms', maintenance_interval = '1s',
    merge_min_splits = 2)"
for i in 1 2 3; do
  expect 200 POST "/v1/streams/shop.ev/records?key_field=id" "${A[@]}" \
    -H 'Content-Type: application/x-ndjson' --data-binary "{\"id\":\"e$i\"}"
  for l in lt lc; do # applied: the next record makes a commit of its own
    t=0
    until expect 200 GET /v1/links/shop.$l "${A[@]}" && [ "$(jbody 'd["applied_records"]')" = "$i" ]; do
      t=$((t + 1))
      [ "$t" -lt 100 ] || die "shop.$l does not apply record $i: $(cat "$work/body")"
      sleep 0.1
    done
  done
done
t=0
while :; do
  expect 200 GET /metrics
  cp "$work/body" "$work/metrics"
  ft=$(value loams_target_maintenance_debt_files '{"target": "shop.evt", "kind": "table"}')
  fc=$(value loams_target_maintenance_debt_files '{"target": "shop.evc", "kind": "collection"}')
  [ "$ft" = 3.0 ] && [ "$fc" = 3.0 ] && break
  t=$((t + 1))
  [ "$t" -lt 60 ] || die "maintenance debt: table $ft files, collection $fc files"
  sleep 0.25
done
for tk in '"target": "shop.evt", "kind": "table"' '"target": "shop.evc", "kind": "collection"'; do
  b=$(value loams_target_maintenance_debt_bytes "{$tk}")
  /usr/bin/python3 -c "import sys; sys.exit(0 if float('$b') > 100 else 1)" ||
    die "maintenance debt bytes of {$tk}: $b"
done
grep -q "failpoint link.after_maintain" "$work/c.log" || die "no maintenance pass failed"
ok "/metrics: maintenance debt of a table and a collection (3 small files, 3 splits) while maintenance cannot commit"
stop_node c
