#!/bin/bash
# example-plugin.sh - the out-of-tree example plugin of docs/PLUGINS.md
# builds against an installed loams-host using nothing but
# `pkg-config --cflags --libs loams-plugin`, the installed loams-host loads
# and lists it, and a link with FORMAT kv applies records through it into a
# collection whose every value is checked.  The install is staged with
# DESTDIR, and pkg-config is pointed into the staged tree
# (PKG_CONFIG_PATH + PKG_CONFIG_SYSROOT_DIR).
[ -n "${BASH_VERSION:-}" ] || exec bash "$0" "$@"
set -u
. "$(dirname "$0")/link-lib.sh"
. "$(dirname "$0")/plugin-stage.sh"
# Under the build tree: the host refuses plugins in /tmp (writable by all).
tmp=$plugin_home

stage="$tmp/stage"
stage_install "$stage" || die "staging the install"
[ -f "$(dirname "$stage_pc")/../../include/loams/plugin.h" ] ||
  die "loams/plugin.h is not installed next to the .pc file"
cflags=$(pkg-config --cflags loams-plugin) || die "pkg-config --cflags loams-plugin"
case "$cflags" in
*"-I$stage/"*) ;;
*) die "pkg-config --cflags does not point into the staged tree: $cflags" ;;
esac
# The installed .pc states the ABI of the installed header.
abi_major=$(sed -n 's/^#define LOAMS_ABI_MAJOR \([0-9]*\).*/\1/p' "$src/plugins-api/loams/plugin.h")
abi_minor=$(sed -n 's/^#define LOAMS_ABI_MINOR \([0-9]*\).*/\1/p' "$src/plugins-api/loams/plugin.h")
[ -n "$abi_major" ] && [ -n "$abi_minor" ] || die "cannot read the ABI version from plugin.h"
pc_major=$(pkg-config --variable=abi_major loams-plugin)
pc_minor=$(pkg-config --variable=abi_minor loams-plugin)
[ "$pc_major" = "$abi_major" ] ||
  die "loams-plugin.pc says abi_major=$pc_major, plugins-api/loams/plugin.h says $abi_major"
[ "$pc_minor" = "$abi_minor" ] ||
  die "loams-plugin.pc says abi_minor=$pc_minor, plugins-api/loams/plugin.h says $abi_minor"

# Build from a copy (the source tree may be read-only, as in distcheck).
cp -R "$src/docs/examples/decoder-kv" "$tmp/src"
chmod -R u+w "$tmp/src"
make -C "$tmp/src" >"$tmp/build.log" 2>&1 || { cat "$tmp/build.log"; die "example build"; }
grep -q -- "-I$stage/" "$tmp/build.log" || die "the example was not compiled against the staged headers"
mkdir -m 0755 "$tmp/plugins"
make -C "$tmp/src" install PLUGINDIR="$tmp/plugins" >>"$tmp/build.log" 2>&1 ||
  { cat "$tmp/build.log"; die "example install"; }

# Only the entry symbol is exported.
if command -v nm >/dev/null; then
  exported=$(nm -D --defined-only "$tmp/plugins/decoder-kv.so" | awk '$2 == "T" { print $3 }')
  [ "$exported" = "loams_plugin_entry_v1" ] || die "exported symbols: $exported"
fi

host=$stage_host
"$host" --list-plugins --no-default-plugin-dirs --plugin-dir "$tmp/plugins" >"$tmp/list.out" 2>&1
rc=$?
cat "$tmp/list.out"
[ "$rc" -eq 0 ] || die "--list-plugins exit status $rc"
grep -q "^decoder-kv  *decoder  *native  *1\.0\.0  *$abi_major\.$abi_minor  *$tmp/plugins/decoder-kv\.so  *Decodes key=value text into one column per key$" \
  "$tmp/list.out" || die "decoder-kv is not listed as expected"
"$host" --list-plugins --verbose --no-default-plugin-dirs --plugin-dir "$tmp/plugins" \
  >"$tmp/verbose.out" 2>&1 || die "--list-plugins --verbose"
grep -q '^    option strict (bool, default "true") ' "$tmp/verbose.out" ||
  die "decoder-kv's options are not listed"
ok "built out of tree, loaded and listed"

# Use it in a link (docs/PLUGINS.md, "Use it in a link"), with the installed
# host and the installed plugins plus the example's directory.
plugin_args=(--no-default-plugin-dirs --plugin-dir "$stage_plugindir" --plugin-dir "$tmp/plugins")
out=$(sql "CREATE STREAM logs.events WITH (partitions = 2);
  CREATE LINK logs.kv_link FROM STREAM logs.events FORMAT kv (prefix = 'kv_', strict = fals)
    INTO COLLECTION logs.events_c TRANSFORM (SELECT kv_id AS _pk)" 2>&1) &&
  die "a bad option value was accepted"
echo "$out" | grep -q "option 'strict' of decoder-kv: 'fals' is not a boolean" ||
  die "bad FORMAT option value: $out"
out=$(sql "CREATE LINK logs.kv_link FROM STREAM logs.events FORMAT kv (prefx = 'kv_')
    INTO COLLECTION logs.events_c TRANSFORM (SELECT kv_id AS _pk)" 2>&1) &&
  die "an unknown FORMAT option was accepted"
echo "$out" | grep -q "line 1, column 61: unknown option 'prefx' for FORMAT kv: decoder-kv accepts prefix, strict" ||
  die "unknown FORMAT option: $out"
sql "CREATE LINK logs.kv_link FROM STREAM logs.events FORMAT kv (prefix = 'kv_')
  INTO COLLECTION logs.events_c
  TRANSFORM (SELECT kv_id AS _pk, kv_user AS user, kv_action AS action, kv_msg AS msg)
  WITH (batch_interval = '200ms', on_error = 'skip')" >/dev/null || die "CREATE LINK with FORMAT kv"

# 300 records: id, user, action, a quoted message with blanks and an
# escaped quote; every 50th record is not key=value text (skipped).
/usr/bin/python3 - "$tmp/events.txt" "$tmp/expected.jsonl" <<'PY'
import json, sys
good = []
with open(sys.argv[1], "w") as f:
    for i in range(300):
        if i % 50 == 49:
            f.write('{"not": "key=value"}\n')
            continue
        user, action = "user%d" % (i % 7), ("login", "logout", "buy")[i % 3]
        msg = 'said "hi" %d times' % i
        f.write('id=e%03d user=%s action=%s msg="%s"\n' % (i, user, action, msg.replace('"', '\\"')))
        good.append({"_pk": "e%03d" % i, "user": user, "action": action, "msg": msg})
with open(sys.argv[2], "w") as f:
    for r in sorted(good, key=lambda r: r["_pk"]):
        f.write(json.dumps(r, sort_keys=True) + "\n")
PY
"$host" produce logs.events --data-dir "$data" <"$tmp/events.txt" >/dev/null || die "produce"
start_node a
wait_caught_up 60
stop_node a
"$host" collection dump logs.events_c --data-dir "$data" "${plugin_args[@]}" >"$tmp/dump.raw" ||
  die "collection dump"
/usr/bin/python3 - "$tmp/dump.raw" >"$tmp/got.jsonl" <<'PY'
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
for r in sorted(rows, key=lambda r: r["_pk"]):
    print(json.dumps({k: r.get(k) for k in ("_pk", "user", "action", "msg")}, sort_keys=True))
PY
if ! cmp -s "$tmp/expected.jsonl" "$tmp/got.jsonl"; then
  diff "$tmp/expected.jsonl" "$tmp/got.jsonl" | head -n 10
  die "the collection differs from the records ($(wc -l <"$tmp/got.jsonl") documents, want 294)"
fi
"$host" links --json --data-dir "$data" | /usr/bin/python3 -c '
import json, sys
l = json.load(sys.stdin)[0]
assert (l["applied_records"], l["skipped_records"]) == (294, 6), l
' || die "system.links counters"
ok "a link with FORMAT kv applied 294 records value by value (6 skipped)"
