#!/bin/sh
# list-plugins.sh - `loams-host --list-plugins`, `--version` and `--help`
# as a user sees them: the table and the JSON document, every bad test
# plugin rejected with its reason, exit statuses, secrets never printed,
# the order of the plugin path.
set -u
host="$top_builddir/core/loams-host"
plugins="$top_builddir/tests/plugins"
# Under the build tree: the host refuses plugins in /tmp (writable by all).
tmp=$(mktemp -d "$top_builddir/tests/list-plugins.XXXXXX")
trap 'rm -rf "$tmp"' EXIT INT TERM
failures=0
# The ABI the headers define, which the host implements and the messages name.
abi_major=$(sed -n 's/^#define LOAMS_ABI_MAJOR \([0-9]*\).*/\1/p' "$top_srcdir/plugins-api/loams/plugin.h")
abi_minor=$(sed -n 's/^#define LOAMS_ABI_MINOR \([0-9]*\).*/\1/p' "$top_srcdir/plugins-api/loams/plugin.h")
abi="$abi_major.$abi_minor"
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }
expect_rc() { # expect_rc WANT GOT WHAT
  [ "$1" = "$2" ] || fail "$3: exit status $2, expected $1"
}

mkdir -m 0755 "$tmp/good" "$tmp/bad" "$tmp/env"
cp "$plugins/ok-decoder/.libs/ok-decoder.so" "$tmp/good/"
printf -- '-- description: Redacts e-mail addresses\nfunction transform(r) return r end\n' \
  >"$tmp/good/redact.lua"
for so in "$plugins"/bad-*/.libs/bad-*.so; do cp "$so" "$tmp/bad/"; done
chmod 0644 "$tmp"/good/* "$tmp"/bad/*
nbad=$(ls "$tmp/bad" | wc -l)
[ "$nbad" -ge 13 ] || fail "expected at least 13 bad test plugins, found $nbad"

# --help lists every command and shared option.
"$host" --help >"$tmp/help" 2>&1
expect_rc 0 $? "--help"
for word in --list-plugins --json --verbose --version --help --plugin-dir \
  --no-default-plugin-dirs LOAMS_PLUGIN_PATH; do
  grep -q -- "$word" "$tmp/help" || fail "--help does not mention $word"
done
"$host" >/dev/null 2>&1
expect_rc 2 $? "no command"
"$host" --no-such-command >/dev/null 2>&1
expect_rc 2 $? "unknown command"

# --version: version, ABI, libraries.
"$host" --version >"$tmp/version"
expect_rc 0 $? "--version"
head -n 1 "$tmp/version" | grep -q '^loams-host [0-9][0-9.]*$' || fail "--version first line"
grep -q "^plugin ABI $abi\$" "$tmp/version" || fail "--version does not print the ABI"
for lib in Lua cJSON LMDB SQLite libcurl OpenSSL zstd libmicrohttpd libltdl; do
  grep -q "^  $lib" "$tmp/version" || fail "--version does not report $lib"
done

# The good dir: a table, exit 0.
"$host" --list-plugins --no-default-plugin-dirs --plugin-dir "$tmp/good" >"$tmp/good.out" 2>&1
expect_rc 0 $? "--list-plugins (good)"
grep -q '^NAME  *KIND  *RUNTIME  *VERSION  *ABI  *PATH  *DESCRIPTION$' "$tmp/good.out" ||
  fail "table header missing"
grep -q "^ok-decoder  *decoder  *native  *1\.2\.3  *$abi  *$tmp/good/ok-decoder\.so  *Test decoder: the length of each value$" \
  "$tmp/good.out" || fail "ok-decoder row missing or wrong"
grep -q "^redact  *transform  *lua  *-  *-  *$tmp/good/redact\.lua  *Redacts e-mail addresses$" \
  "$tmp/good.out" || fail "Lua script row missing or wrong"
grep -q "^Plugin path: $tmp/good$" "$tmp/good.out" || fail "plugin path line"
grep -q rejected "$tmp/good.out" && fail "nothing should be rejected"

# --verbose lists options but never a secret's default.
"$host" --list-plugins --verbose --no-default-plugin-dirs --plugin-dir "$tmp/good" \
  >"$tmp/verbose.out" 2>&1
expect_rc 0 $? "--list-plugins --verbose"
grep -q '^    option mode (enum: fast|slow, default "fast") How to measure$' "$tmp/verbose.out" ||
  fail "--verbose does not list option mode"
grep -q '^    option token (string, secret) A secret with a default$' "$tmp/verbose.out" ||
  fail "--verbose does not list the secret option as secret"
grep -q hunter2 "$tmp/verbose.out" && fail "--verbose printed a secret default"

# --json: one valid document, same content, no secret.
"$host" --list-plugins --json --no-default-plugin-dirs --plugin-dir "$tmp/good" \
  --plugin-dir "$tmp/bad" >"$tmp/all.json" 2>"$tmp/all.err"
expect_rc 1 $? "--list-plugins --json with rejections"
grep -q hunter2 "$tmp/all.json" && fail "--json printed a secret default"
python3 - "$tmp/all.json" "$tmp" "$nbad" "$abi" <<'PY' || fail "JSON document content"
import json, sys
doc = json.load(open(sys.argv[1]))
tmp, nbad, abi = sys.argv[2], int(sys.argv[3]), sys.argv[4]
major_v = abi.split(".")[0]
assert doc["abi"] == abi, doc["abi"]
assert doc["plugin_path"] == [tmp + "/good", tmp + "/bad"], doc["plugin_path"]
names = [p["name"] for p in doc["plugins"]]
assert names == ["ok-decoder", "redact"], names
ok = doc["plugins"][0]
assert (ok["kind"], ok["runtime"], ok["version"], ok["abi"]) == ("decoder", "native", "1.2.3", abi), ok
assert ok["path"] == tmp + "/good/ok-decoder.so"
token = [o for o in ok["options"] if o["name"] == "token"][0]
assert token["secret"] is True and "default" not in token, token
lua = doc["plugins"][1]
assert lua["kind"] == "transform" and lua["runtime"] == "lua" and lua["abi"] is None, lua
assert len(doc["rejected"]) == nbad, len(doc["rejected"])
for r in doc["rejected"]:
    assert r["message"] == 'plugin "%s" rejected: ' % r["path"] + r["message"].split(" rejected: ", 1)[1]
    assert r["detail"].startswith("DETAIL: "), r
major = [r for r in doc["rejected"] if r["path"].endswith("/bad-major.so")][0]
assert major["message"].endswith("rejected: incompatible ABI major version"), major
assert major["detail"] == "DETAIL: Host ABI is %s, plugin ABI is 2.0. Rebuild the plugin against loams-plugin %s.x headers." % (abi, major_v), major
PY

# The bad dir as text: every file rejected with two lines, exit 1.
"$host" --list-plugins --no-default-plugin-dirs --plugin-dir "$tmp/bad" >"$tmp/bad.out" 2>&1
expect_rc 1 $? "--list-plugins (bad)"
grep -q "^No plugins loaded\.$" "$tmp/bad.out" || fail "bad dir: 'No plugins loaded.' missing"
grep -q "^$nbad rejected:$" "$tmp/bad.out" || fail "bad dir: '$nbad rejected:' missing"
for f in "$tmp"/bad/*.so; do
  grep -q "^plugin \"$f\" rejected: " "$tmp/bad.out" || fail "$f not reported as rejected"
done
[ "$(grep -c '^DETAIL: ' "$tmp/bad.out")" -eq "$nbad" ] || fail "one DETAIL line per rejection"
grep -q '^plugin ".*/bad-entry-v2.so" rejected: incompatible ABI major version$' "$tmp/bad.out" ||
  fail "bad-entry-v2 reason"
grep -q "^DETAIL: Host ABI is $abi, plugin exports loams_plugin_entry_v2 (ABI 2.x). Rebuild the plugin against loams-plugin $abi_major.x headers.\$" \
  "$tmp/bad.out" || fail "bad-entry-v2 detail"

# A group-writable copy and a file that is not an object, made here.
mkdir -m 0755 "$tmp/perm"
cp "$tmp/good/ok-decoder.so" "$tmp/perm/ok-decoder.so"
chmod 0664 "$tmp/perm/ok-decoder.so"
printf 'not a shared object, just some text that is long enough for an ELF header\n' \
  >"$tmp/perm/text.so"
chmod 0644 "$tmp/perm/text.so"
"$host" --list-plugins --no-default-plugin-dirs --plugin-dir "$tmp/perm" >"$tmp/perm.out" 2>&1
expect_rc 1 $? "--list-plugins (perm)"
grep -q "^plugin \"$tmp/perm/ok-decoder.so\" rejected: file is writable by group or others$" \
  "$tmp/perm.out" || fail "group-writable file not rejected"
grep -q "^DETAIL: Its mode is 0664, so others could replace the code loams-host runs. Run: chmod go-w \"$tmp/perm/ok-decoder.so\"$" \
  "$tmp/perm.out" || fail "group-writable detail"
grep -q "^plugin \"$tmp/perm/text.so\" rejected: not a loadable shared object$" "$tmp/perm.out" ||
  fail "text file not rejected"
grep -q "^DETAIL: The loader says: invalid ELF header. " "$tmp/perm.out" || fail "text file detail"

# A plugin reached through a link into a directory anyone can write, and one
# in a directory whose parent anyone can write: both could be swapped.
mkdir -m 0755 "$tmp/linked" "$tmp/open" "$tmp/shared"
chmod 0777 "$tmp/open" "$tmp/shared"
mkdir -m 0755 "$tmp/shared/plugins"
cp "$tmp/good/ok-decoder.so" "$tmp/open/ok-decoder.so"
cp "$tmp/good/ok-decoder.so" "$tmp/shared/plugins/ok-decoder.so"
ln -s "$tmp/open/ok-decoder.so" "$tmp/linked/ok-decoder.so"
"$host" --list-plugins --no-default-plugin-dirs --plugin-dir "$tmp/linked" >"$tmp/linked.out" 2>&1
expect_rc 1 $? "--list-plugins (a link into a world-writable directory)"
grep -q "^plugin \"$tmp/linked/ok-decoder.so\" rejected: directory is writable by group or others$" \
  "$tmp/linked.out" || fail "a link into a world-writable directory is not rejected"
grep -q "^DETAIL: \"$tmp/linked/ok-decoder.so\" leads to \"$tmp/open/ok-decoder.so\". \"$tmp/open\" has mode 0777, so others could add or replace plugins. Run: chmod go-w \"$tmp/open\"$" \
  "$tmp/linked.out" || fail "a link into a world-writable directory: detail"
"$host" --list-plugins --no-default-plugin-dirs --plugin-dir "$tmp/shared/plugins" \
  >"$tmp/shared.out" 2>&1
expect_rc 1 $? "--list-plugins (a directory under a world-writable one)"
grep -q "^plugin \"$tmp/shared/plugins/ok-decoder.so\" rejected: a directory above it is writable by group or others$" \
  "$tmp/shared.out" || fail "a directory under a world-writable one is not rejected"
grep -q "^DETAIL: \"$tmp/shared\" has mode 0777, so others could put other plugins in place of \"$tmp/shared/plugins\". Run: chmod go-w \"$tmp/shared\"$" \
  "$tmp/shared.out" || fail "a directory under a world-writable one: detail"

# Order: --plugin-dir before LOAMS_PLUGIN_PATH; a duplicate names both paths.
cp "$tmp/good/redact.lua" "$tmp/env/redact.lua"
LOAMS_PLUGIN_PATH="$tmp/env" "$host" --list-plugins --plugin-dir "$tmp/good" >"$tmp/env.out" 2>&1
grep -q "^Plugin path: $tmp/good:$tmp/env" "$tmp/env.out" || fail "LOAMS_PLUGIN_PATH order"
grep -q "^redact .*$tmp/good/redact.lua" "$tmp/env.out" || fail "--plugin-dir copy must win"
grep -q "^plugin \"$tmp/env/redact.lua\" rejected: duplicate plugin name \"redact\"$" \
  "$tmp/env.out" || fail "duplicate from LOAMS_PLUGIN_PATH not rejected"
grep -q "^DETAIL: \"redact\" is already loaded from \"$tmp/good/redact.lua\", which comes earlier in the plugin path. Remove or rename one of the two.$" \
  "$tmp/env.out" || fail "duplicate detail names both paths"
# --no-default-plugin-dirs ignores LOAMS_PLUGIN_PATH.
LOAMS_PLUGIN_PATH="$tmp/env" "$host" --list-plugins --no-default-plugin-dirs \
  --plugin-dir "$tmp/good" >"$tmp/noenv.out" 2>&1
expect_rc 0 $? "--no-default-plugin-dirs"
grep -q "$tmp/env" "$tmp/noenv.out" && fail "--no-default-plugin-dirs still read LOAMS_PLUGIN_PATH"

# Usage errors.
"$host" --list-plugins --plugin-dir >/dev/null 2>"$tmp/usage.err"
expect_rc 2 $? "--plugin-dir without a value"
grep -q -- "--plugin-dir needs a value" "$tmp/usage.err" || fail "missing value message"
"$host" --list-plugins --bogus >/dev/null 2>&1
expect_rc 2 $? "unknown option"
"$host" --list-plugins --no-default-plugin-dirs --plugin-dir "$tmp/missing" >"$tmp/missing.out" 2>&1
expect_rc 1 $? "missing --plugin-dir"
grep -q "^plugin directory \"$tmp/missing\" skipped: cannot be read$" "$tmp/missing.out" ||
  fail "missing dir not reported"

[ "$failures" -eq 0 ] || { echo "$failures failure(s)"; exit 1; }
echo "list-plugins: all checks passed"
