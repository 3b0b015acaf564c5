#!/bin/sh
# stream-cli.sh - the stream log through the CLI: sql creates and drops
# streams (with positioned errors), produce appends stdin (plain and keyed
# JSON, several producers at once, --progress; a line that is not a JSON
# object is refused saying what is wrong and where), stream read/list/describe
# show it back (every digit of a timestamp, every byte of a key and value).
set -eu
host="${top_builddir:?}/core/loams-host"
d=$(mktemp -d /tmp/stream-cli.XXXXXX)
trap 'rm -rf "$d"' EXIT
fail() { echo "FAIL: $*"; exit 1; }

"$host" sql --data-dir "$d/data" \
  "CREATE STREAM shop.orders WITH (partitions = 4, retention = '7d'); CREATE STREAM plain" \
  > "$d/out" || fail "create"
grep -q 'created stream shop.orders (partitions 4, retention 7d' "$d/out" || fail "create output"

# A second create is refused with the position and a caret.
if "$host" sql --data-dir "$d/data" "CREATE STREAM shop.orders" 2> "$d/err"; then
  fail "duplicate create succeeded"
fi
grep -q 'line 1, column 15: stream shop.orders already exists' "$d/err" || fail "dup msg"
grep -q '^  *\^$' "$d/err" || fail "caret"
# A syntax error names what was expected.
if "$host" sql --data-dir "$d/data" "CREATE LINK l FROM STREAM s INT TABLE t" 2> "$d/err"; then
  fail "bad statement accepted"
fi
grep -q "expected FORMAT or INTO, found 'INT'" "$d/err" || fail "syntax msg"
# A link needs its plugins: without any plugin dir the decoder is missing,
# and the message says so at the statement's position.
if "$host" sql --data-dir "$d/data" --no-default-plugin-dirs -f - 2> "$d/err" <<'SQL'
CREATE LINK l FROM STREAM shop.orders INTO COLLECTION c TRANSFORM (SELECT key AS _pk);
SQL
then
  fail "CREATE LINK executed without plugins"
fi
grep -q "line 1, column 1: FORMAT json: no decoder plugin 'decoder-json' or 'json' is loaded" \
  "$d/err" || fail "no-plugin msg"
grep -q "^DETAIL: No decoder plugin is loaded. The plugin path is empty.$" "$d/err" ||
  fail "no-plugin detail: $(cat "$d/err")"
grep -q "^HINT: .*--plugin-dir DIR or LOAMS_PLUGIN_PATH" "$d/err" || fail "no-plugin hint"

# Plain lines: values without keys, round-robin.
seq 1 1000 | "$host" produce default.plain --data-dir "$d/data" > "$d/out"
grep -q '^produced 1000 records' "$d/out" || fail "produce plain"
"$host" stream read plain --data-dir "$d/data" > "$d/read"
[ "$(wc -l < "$d/read")" -eq 1000 ] || fail "read back count"
[ "$(head -1 "$d/read")" = 1 ] && [ "$(tail -1 "$d/read")" = 1000 ] || fail "read back order"

# --progress on a slow input: a line on stderr (not a terminal: one per
# line) when a batch lands a second or more after the last, then the summary.
{ seq 1 5; sleep 1.5; seq 6 10; sleep 1.5; seq 11 15; } |
  "$host" produce default.plain --data-dir "$d/data" --batch 5 --progress > "$d/out" 2> "$d/progress"
grep -q '^produced 15 records (21 bytes) to default.plain in ' "$d/out" ||
  fail "summary after --progress: $(cat "$d/out")"
grep -Eq '^(10 records, 0\.0 MB|15 records, 0\.0 MB), [0-9]+ records/s$' "$d/progress" ||
  fail "no progress line: $(cat "$d/progress")"
if grep -Evq '^(10|15) records, 0\.0 MB, [0-9]+ records/s$' "$d/progress"; then
  fail "stderr has more than progress lines: $(cat "$d/progress")"
fi

# Keyed JSON from two producers at once; each key lands on its FNV-1a partition.
i=0
while [ $i -lt 2000 ]; do echo "{\"id\":\"k$((i % 100))\",\"n\":$i}"; i=$((i + 1)); done > "$d/in.json"
"$host" produce shop.orders --data-dir "$d/data" --key-field id --batch 500 < "$d/in.json" > "$d/o1" &
p1=$!
"$host" produce shop.orders --data-dir "$d/data" --key-field id --batch 7 < "$d/in.json" > "$d/o2"
wait $p1
grep -q 'partitions touched: 4 of 4' "$d/o1" || fail "partitions touched"
total=0
for p in 0 1 2 3; do
  n=$("$host" stream read shop.orders --data-dir "$d/data" --partition $p --json | wc -l)
  total=$((total + n))
done
[ "$total" -eq 4000 ] || fail "keyed total $total"
# Every record of a key is in one partition: count distinct (key, partition) pairs.
pairs=$(for p in 0 1 2 3; do
  "$host" stream read shop.orders --data-dir "$d/data" --partition $p --json |
    sed -n 's/.*"partition":\([0-9]*\).*"key":"\([^"]*\)".*/\2 \1/p'
done | sort -u | wc -l)
[ "$pairs" -eq 100 ] || fail "a key in several partitions ($pairs pairs)"
# --from and --limit.
"$host" stream read shop.orders --data-dir "$d/data" --partition 0 --from 5 --limit 3 --json \
  > "$d/r"
[ "$(wc -l < "$d/r")" -eq 3 ] || fail "limit"
head -1 "$d/r" | grep -q '"offset":5,' || fail "from"

"$host" stream list --data-dir "$d/data" > "$d/list"
grep -q '^shop.orders .* 4 .* 7d .* 4000 ' "$d/list" || fail "list: $(cat "$d/list")"
"$host" stream describe shop.orders --data-dir "$d/data" --json > "$d/desc"
grep -q '"partitions":4' "$d/desc" || fail "describe"
"$host" sql --data-dir "$d/data" "SELECT * FROM system.streams" | grep -q '^default.plain ' ||
  fail "system.streams"

# produce --key-field on a line that is not a JSON object says what is wrong
# and where (the byte, from 1; a lone surrogate escape included); a key or
# value holding \u0000 is kept whole, another value as its JSON text, every
# digit.
"$host" sql --data-dir "$d/data" "CREATE STREAM diag" > /dev/null
before='the 0 records before it were appended'
expect_produce_error() { # expect_produce_error INPUT MESSAGE
  if printf '%s\n' "$1" | "$host" produce diag --data-dir "$d/data" --key-field id \
    > /dev/null 2> "$d/err"; then
    fail "produce accepted: $1"
  fi
  [ "$(cat "$d/err")" = "loams-host produce: stdin line 1: $2; $before" ] ||
    fail "produce of $1: $(cat "$d/err")"
}
expect_produce_error '{"id":"\ud800"}' \
  "byte 8: lone surrogate \\ud800 (a high surrogate \\ud800-\\udbff must be followed by a low one, \\udc00-\\udfff): not valid JSON"
expect_produce_error '{"id":"x\udc00y"}' \
  "byte 9: lone surrogate \\udc00 (a low surrogate \\udc00-\\udfff must follow a high one, \\ud800-\\udbff): not valid JSON"
expect_produce_error '{"id":"a","v":"\ud800 elsewhere"}' \
  "byte 16: lone surrogate \\ud800 (a high surrogate \\ud800-\\udbff must be followed by a low one, \\udc00-\\udfff): not valid JSON"
expect_produce_error '{"id": 1,}' "byte 10: expected a member name (a string): not valid JSON"
expect_produce_error '[1, 2]' "it is an array, not a JSON object (a key or value field needs one)"
printf '%s\n' '{"id":"k\u0000x","v":"a\u0000b"}' |
  "$host" produce diag --data-dir "$d/data" --key-field id --value-field v > /dev/null ||
  fail "produce of a key and a value with \\u0000"
printf '%s\n' '{"id": 9007199254740993, "v": {"n": [1, 1796145430086430]}}' |
  "$host" produce diag --data-dir "$d/data" --key-field id --value-field v > /dev/null ||
  fail "produce of a numeric key"
"$host" stream read diag --json --data-dir "$d/data" > "$d/diag"
grep -qF '"key":"k\u0000x","value":"a\u0000b"' "$d/diag" ||
  fail "the key and value with \\u0000 are not whole: $(cat "$d/diag")"
grep -qF '"key":"9007199254740993","value":"{\"n\": [1, 1796145430086430]}"' "$d/diag" ||
  fail "the numeric key or the object value lost digits: $(cat "$d/diag")"

# stream read --json writes integers with every digit: a timestamp in µs of
# 16 digits ending in 0 came out as 1.79614543008643e+15.
"$top_builddir/tests/integration/store-poke" log-append "$d/data" default.diag 0 \
  1796145430086430 'stamped' || fail "store-poke log-append"
"$host" stream read diag --json --data-dir "$d/data" > "$d/diag"
grep -qF '"timestamp":1796145430086430,"key":null,"value":"stamped"}' "$d/diag" ||
  fail "the timestamp is not exact: $(grep stamped "$d/diag")"

# Drop: reads fail with a clear message, a new stream of that name is empty.
"$host" sql --data-dir "$d/data" "DROP STREAM shop.orders" > /dev/null
if "$host" stream read shop.orders --data-dir "$d/data" 2> "$d/err"; then fail "read after drop"; fi
grep -q 'stream shop.orders does not exist' "$d/err" || fail "drop msg"
"$host" sql --data-dir "$d/data" "CREATE STREAM shop.orders WITH (partitions = 2)" > /dev/null
[ -z "$("$host" stream read shop.orders --data-dir "$d/data")" ] || fail "recreated not empty"
echo "stream CLI ok"
