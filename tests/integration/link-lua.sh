#!/bin/bash
# link-lua.sh - Lua transforms through the real link runtime (loams-host sql
# and serve): a script error at CREATE LINK is shown at its line of the
# statement, and a backtracking pattern at the top level is stopped there; a
# link with an inline script applies every record's output exactly once,
# drops what the script drops, and sends the records the script fails on (an
# error, an endless loop or a backtracking pattern stopped by the
# instruction budget) to the dead-letter stream with the Lua message; a named
# script is found in LOAMS_PLUGIN_PATH and in a --plugin-dir directory;
# lua_* link options; PAUSE LINK and SIGTERM end a match no budget bounds.
[ -n "${BASH_VERSION:-}" ] || exec bash "$0" "$@"
set -u
. "$(dirname "$0")/link-lib.sh"

N=${LOAMS_TEST_RECORDS:-300}

# ---- errors at CREATE LINK, with the line of the statement ----
sql "CREATE STREAM t.tickets WITH (partitions = 2);" >/dev/null || die "CREATE STREAM failed"
out=$(sql "CREATE LINK t.bad FROM STREAM t.tickets INTO COLLECTION t.cb
  TRANSFORM LUA \$\$
    function transform(rec)
      return { x = }
    end
  \$\$;" 2>&1) && die "a script with a syntax error was accepted"
echo "$out" | grep -q "line 4" || die "the syntax error is not shown at line 4 of the statement: $out"
echo "$out" | grep -q "in the transform: unexpected symbol near '}'" ||
  die "the Lua message is missing: $out"
ok "syntax error shown at its statement line"

out=$(sql "CREATE LINK t.bad FROM STREAM t.tickets INTO COLLECTION t.cb
  TRANSFORM LUA 'no_such_script';" 2>&1) && die "a missing script was accepted"
echo "$out" | grep -q "no Lua script named 'no_such_script'" || die "wrong message: $out"
ok "missing named script refused"

out=$(sql "CREATE LINK t.bad FROM STREAM t.tickets INTO COLLECTION t.cb
  TRANSFORM LUA \$\$ os.execute('true') function transform(rec) end \$\$;" 2>&1) &&
  die "a script calling os.execute at its top level was accepted"
echo "$out" | grep -q "os.execute is not available in Lua transforms" || die "wrong message: $out"
ok "sandbox refusal at the top level shown at CREATE LINK"

# A backtracking pattern at the top level (2^40 ways to try) ends in the
# record budget, with a message, instead of keeping `sql` busy for hours.
t0=$(date +%s)
out=$(timeout 60 "$host" sql --data-dir "$data" "${plugin_args[@]}" \
  "CREATE LINK t.bad FROM STREAM t.tickets INTO COLLECTION t.cb
  TRANSFORM LUA \$\$
    local s = string.rep('a', 40)
    s:find(string.rep('a?', 40) .. s .. 'b')
    function transform(rec) return rec end
  \$\$;" 2>&1)
rc=$?
[ "$rc" -ne 124 ] || die "CREATE LINK with a backtracking pattern at the top level hangs"
[ "$rc" -ne 0 ] || die "CREATE LINK with a backtracking pattern at the top level was accepted"
echo "$out" | grep -q "the script's top level failed: instruction budget exceeded" ||
  die "wrong message: $out"
echo "$out" | grep -q "string.find stopped at inline:3; a pattern match counts each of its steps" ||
  die "the message does not say where the pattern ran: $out"
took=$(($(date +%s) - t0))
[ "$took" -le 10 ] || die "CREATE LINK took $took s to refuse the pattern"
ok "a backtracking pattern at the top level refused at CREATE LINK in $took s"

# ---- a running link ----
# Tickets; a few get a subject that makes the script fail or loop; the
# script drops those of priority 4.
head -n "$N" "$src/tests/fixtures/support-tickets.jsonl" | /usr/bin/python3 -c '
import json, sys
for i, line in enumerate(sys.stdin):
    r = json.loads(line)
    if i % 50 == 7:
        r["subject"] = "BOOM " + r["subject"]
    elif i % 100 == 13:
        r["subject"] = "LOOP " + r["subject"]
    elif i % 100 == 21:
        r["subject"] = "REGEX " + r["subject"]
    print(json.dumps({"k": r["id"], "v": json.dumps(r)}))
' >"$work/keyed.jsonl"

# What the collection must hold, and what must be dead-lettered.
/usr/bin/python3 - "$work/keyed.jsonl" "$work/expected.jsonl" "$work/dead.txt" <<'PY'
import hashlib, json, sys
rows, dead = [], []
for line in open(sys.argv[1]):
    r = json.loads(json.loads(line)["v"])
    s = r["subject"]
    if s.startswith("BOOM"):
        dead.append("%s boom on %s" % (r["id"], r["id"]))
    elif s.startswith("LOOP"):
        dead.append("%s instruction budget exceeded" % r["id"])
    elif s.startswith("REGEX"):
        dead.append("%s string.find stopped" % r["id"])
    elif r["priority"] == 4:
        pass
    else:
        rows.append({"_pk": r["id"], "subject": s.upper(),
                     "customer": r["customer"]["name"],
                     "sha": hashlib.sha256(r["body"].encode()).hexdigest()[:16]})
with open(sys.argv[2], "w") as f:
    for r in sorted(rows, key=lambda r: r["_pk"]):
        print(json.dumps(r, sort_keys=True), file=f)
with open(sys.argv[3], "w") as f:
    for d in sorted(dead):
        print(d, file=f)
PY
good=$(wc -l <"$work/expected.jsonl")
bad=$(wc -l <"$work/dead.txt")

sql "CREATE LINK t.l FROM STREAM t.tickets FORMAT json INTO COLLECTION t.c
  TRANSFORM LUA \$\$
    columns = { '_pk string', 'subject string', 'customer string', 'sha string' }
    function transform(rec)
      if rec.subject:find('BOOM', 1, true) then error('boom on ' .. rec.id, 0) end
      if rec.subject:find('LOOP', 1, true) then while true do end end
      if rec.subject:find('REGEX', 1, true) then
        string.find(string.rep('a', 40), string.rep('a?', 40) .. string.rep('a', 40) .. 'b')
      end
      if rec.priority == 4 then return nil end
      return { _pk = rec.id, subject = rec.subject:upper(),
               customer = rec.customer.name, sha = loams.sha256(rec.body):sub(1, 16) }
    end
  \$\$
  WITH (batch_bytes = '16KiB', batch_interval = '200ms', on_error = 'dead_letter');" \
  >/dev/null 2>"$work/create.err" ||
  die "CREATE LINK with a Lua transform failed: $(cat "$work/create.err")"
"$host" produce t.tickets --data-dir "$data" --key-field k --value-field v \
  <"$work/keyed.jsonl" >/dev/null 2>&1 || die "produce failed"
start_node a
wait_caught_up 90
stop_node a

"$host" collection dump t.c --data-dir "$data" "${plugin_args[@]}" >"$work/dump.raw" ||
  die "collection dump failed"
/usr/bin/python3 - "$work/dump.raw" >"$work/got.jsonl" <<'PY'
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
for r in sorted(rows, key=lambda r: r["_pk"]):
    print(json.dumps({k: r.get(k) for k in ("_pk", "subject", "customer", "sha")}, sort_keys=True))
PY
if ! cmp -s "$work/expected.jsonl" "$work/got.jsonl"; then
  diff "$work/expected.jsonl" "$work/got.jsonl" | head -n 10
  die "the collection differs from the script's output ($(wc -l <"$work/got.jsonl") docs, want $good)"
fi
ok "$good documents, each once, as the script made them"

"$host" stream read t.l_dlq --partition 0 --from 0 --limit 100000 --json --data-dir "$data" \
  >"$work/dlq.jsonl" || die "reading the dead-letter stream failed"
/usr/bin/python3 - "$work/dlq.jsonl" "$work/dead.txt" <<'PY' || die "dead letters wrong"
import json, sys
want = [l.rstrip("\n").split(" ", 1) for l in open(sys.argv[2]) if l.strip()]
got = {}
for l in open(sys.argv[1]):
    if not l.strip():
        continue
    r = json.loads(l)
    key = r.get("key")
    err = r["headers"]["loams.error"]
    assert key not in got, "dead-lettered twice: %s" % key
    got[key] = err
assert len(got) == len(want), "%d dead letters, want %d" % (len(got), len(want))
for key, needle in want:
    assert key in got, "%s was not dead-lettered" % key
    assert needle in got[key] and "Lua transform" in got[key], "%s: %s" % (key, got[key])
PY
ok "$bad records dead-lettered with the Lua message (errors, stopped loops and patterns)"

# ---- a named script from LOAMS_PLUGIN_PATH ----
scripts="$plugin_home/scripts"
mkdir -m 0755 "$scripts"
cp "$src/lua/examples/pii_redact.lua" "$scripts/"
chmod 0644 "$scripts/pii_redact.lua"
LOAMS_PLUGIN_PATH="$scripts" sql "CREATE LINK t.p FROM STREAM t.tickets INTO COLLECTION t.cp
  TRANSFORM LUA 'pii_redact';" >/dev/null 2>"$work/create.err" ||
  die "CREATE LINK with TRANSFORM LUA 'pii_redact' failed: $(cat "$work/create.err")"
ok "named script found in LOAMS_PLUGIN_PATH"

# ---- a named script from a --plugin-dir directory, run by serve ----
pdir="$plugin_home/plugdir"
mkdir -m 0755 "$pdir"
cp "$src/lua/examples/pii_redact.lua" "$pdir/"
chmod 0644 "$pdir/pii_redact.lua"
"$host" --list-plugins --plugin-dir "$pdir" --no-default-plugin-dirs | grep -q "pii_redact" ||
  die "--list-plugins does not list the script of --plugin-dir"
sql --plugin-dir "$pdir" "CREATE LINK t.q FROM STREAM t.tickets INTO COLLECTION t.cq
  TRANSFORM LUA 'pii_redact' WITH (batch_interval = '200ms');" >/dev/null 2>"$work/create.err" ||
  die "CREATE LINK with a script of --plugin-dir failed: $(cat "$work/create.err")"
sql "DROP LINK t.p; DROP LINK t.l;" >/dev/null || die "DROP LINK failed"
plugin_args+=(--plugin-dir "$pdir")
start_node b
wait_caught_up 90
stop_node b
n=$("$host" collection dump t.cq --data-dir "$data" "${plugin_args[@]}" | grep -c .)
[ "$n" -gt 0 ] || die "the link of a --plugin-dir script applied nothing"
grep -q "no Lua script named" "$work/b.log" && die "serve did not find the script: $(grep -m1 'no Lua script' "$work/b.log")"
ok "TRANSFORM LUA 'pii_redact' from --plugin-dir: CREATE LINK and serve find it ($n documents)"

# ---- lua_* options in WITH reach the transform ----
out=$(sql "CREATE LINK t.r FROM STREAM t.tickets INTO COLLECTION t.cr
  TRANSFORM LUA \$\$ function transform(rec) return { _pk = rec.id } end \$\$
  WITH (lua_memory_limit = 'lots');" 2>&1) && die "a bad lua_memory_limit was accepted"
echo "$out" | grep -q "lua_memory_limit" || die "bad lua_memory_limit: unclear error: $out"
out=$(sql "CREATE LINK t.r FROM STREAM t.tickets INTO COLLECTION t.cr
  TRANSFORM LUA \$\$ function transform(rec) return { _pk = rec.id } end \$\$
  WITH (script_path = '/tmp');" 2>&1) && die "script_path was accepted in WITH"
echo "$out" | grep -q "script_path is set by the host" || die "script_path: unclear error: $out"
# A 10,000-instruction budget stops a script that loops 100,000 times per
# record: every record is dead-lettered with the budget in its message.
sql "CREATE LINK t.r FROM STREAM t.tickets INTO COLLECTION t.cr
  TRANSFORM LUA \$\$
    function transform(rec)
      local n = 0
      for i = 1, 100000 do n = n + i end
      return { _pk = rec.id, n = n }
    end
  \$\$
  WITH (lua_instruction_limit = '10000', on_error = 'dead_letter', batch_interval = '200ms');" \
  >/dev/null 2>"$work/create.err" || die "CREATE LINK with lua_* options failed: $(cat "$work/create.err")"
start_node c
wait_caught_up 90
stop_node c
"$host" stream read t.r_dlq --partition 0 --from 0 --limit 100000 --json --data-dir "$data" \
  >"$work/dlq-r.jsonl" || die "reading t.r_dlq failed"
dead=$(grep -c "instruction budget exceeded: more than 10000" "$work/dlq-r.jsonl")
[ "$dead" -gt 0 ] && [ "$dead" -eq "$(grep -c . "$work/dlq-r.jsonl")" ] ||
  die "lua_instruction_limit = 10000 did not stop the records ($dead of $(grep -c . "$work/dlq-r.jsonl") dead letters)"
ok "lua_instruction_limit from WITH: all $dead records stopped at 10000 instructions"

# ---- a match no budget bounds ends at PAUSE LINK and at SIGTERM ----
# Without an instruction or time limit only cancellation ends the first
# record's pattern (2^40 ways): PAUSE LINK, seen by the run in the middle of
# the match, and SIGTERM (the node's stop timeout is 5 s) must end it at once.
sql "CREATE LINK t.spin FROM STREAM t.tickets INTO COLLECTION t.cspin
  TRANSFORM LUA \$\$
    function transform(rec)
      string.find(string.rep('a', 40), string.rep('a?', 40) .. string.rep('a', 40) .. 'b')
    end
  \$\$
  WITH (lua_instruction_limit = '0', lua_time_limit = '0');" \
  >/dev/null 2>"$work/create.err" || die "CREATE LINK t.spin failed: $(cat "$work/create.err")"
start_node d
wait_log d "link/t/spin.*claimed" 30 "claim of t.spin"
sleep 1
t0=$(date +%s%N)
sql "PAUSE LINK t.spin" >/dev/null || die "PAUSE LINK failed"
wait_log d "link/t/spin.*link is paused: stopping" 10 "stop of the paused link t.spin"
ms=$((($(date +%s%N) - t0) / 1000000))
[ "$ms" -lt 3000 ] || die "PAUSE LINK took $ms ms to stop the match"
ok "PAUSE LINK stopped a match no budget bounds in $ms ms"
sql "RESUME LINK t.spin" >/dev/null || die "RESUME LINK failed"
sleep 3 # the node claims the link again and runs into the match
[ "$(grep -c "link/t/spin.*claimed" "$work/d.log")" -ge 2 ] || die "t.spin was not claimed again"
t0=$(date +%s%N)
stop_node d
ms=$((($(date +%s%N) - t0) / 1000000))
[ "$ms" -lt 3000 ] || die "SIGTERM took $ms ms to stop the node"
grep -q "abandoned runs" "$work/d.log" && die "the node abandoned the run of t.spin"
ok "SIGTERM stopped the node in the middle of the match in $ms ms"
exit 0
