#!/bin/sh
# example-plugin.sh - the out-of-tree example plugin of docs/PLUGINS.md
# builds against an installed loams-host using nothing but
# `pkg-config --cflags --libs loams-plugin`, and the installed loams-host
# loads and lists it.  The install is staged with DESTDIR, and pkg-config
# is pointed into the staged tree (PKG_CONFIG_PATH + PKG_CONFIG_SYSROOT_DIR).
set -u
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT INT TERM
fail() { echo "FAIL: $*"; exit 1; }

stage="$tmp/stage"
make -C "$top_builddir" install DESTDIR="$stage" >"$tmp/install.log" 2>&1 ||
  { cat "$tmp/install.log"; fail "make install DESTDIR=$stage"; }
pc=$(find "$stage" -name loams-plugin.pc -path '*/pkgconfig/*' | head -n 1)
[ -n "$pc" ] || fail "loams-plugin.pc was not installed"
host=$(find "$stage" -type f -name loams-host -path '*/bin/*' | head -n 1)
[ -x "$host" ] || fail "loams-host was not installed"
[ -f "$(dirname "$pc")/../../include/loams/plugin.h" ] ||
  fail "loams/plugin.h is not installed next to the .pc file"

# Only the staged tree: no pkg-config search of the system's dirs.
PKG_CONFIG_PATH=$(dirname "$pc")
PKG_CONFIG_LIBDIR=$(dirname "$pc")
PKG_CONFIG_SYSROOT_DIR="$stage"
export PKG_CONFIG_PATH PKG_CONFIG_LIBDIR PKG_CONFIG_SYSROOT_DIR
cflags=$(pkg-config --cflags loams-plugin) || fail "pkg-config --cflags loams-plugin"
case "$cflags" in
*"-I$stage/"*) ;;
*) fail "pkg-config --cflags does not point into the staged tree: $cflags" ;;
esac
# The installed .pc states the ABI of the installed header.
abi_major=$(sed -n 's/^#define LOAMS_ABI_MAJOR \([0-9]*\).*/\1/p' "$top_srcdir/plugins-api/loams/plugin.h")
abi_minor=$(sed -n 's/^#define LOAMS_ABI_MINOR \([0-9]*\).*/\1/p' "$top_srcdir/plugins-api/loams/plugin.h")
[ -n "$abi_major" ] && [ -n "$abi_minor" ] || fail "cannot read the ABI version from plugin.h"
pc_major=$(pkg-config --variable=abi_major loams-plugin)
pc_minor=$(pkg-config --variable=abi_minor loams-plugin)
[ "$pc_major" = "$abi_major" ] ||
  fail "loams-plugin.pc says abi_major=$pc_major, plugins-api/loams/plugin.h says $abi_major"
[ "$pc_minor" = "$abi_minor" ] ||
  fail "loams-plugin.pc says abi_minor=$pc_minor, plugins-api/loams/plugin.h says $abi_minor"

# Build from a copy (the source tree may be read-only, as in distcheck).
cp -R "$top_srcdir/docs/examples/decoder-kv" "$tmp/src"
chmod -R u+w "$tmp/src"
make -C "$tmp/src" >"$tmp/build.log" 2>&1 || { cat "$tmp/build.log"; fail "example build"; }
grep -q -- "-I$stage/" "$tmp/build.log" || fail "the example was not compiled against the staged headers"
mkdir -m 0755 "$tmp/plugins"
make -C "$tmp/src" install PLUGINDIR="$tmp/plugins" >>"$tmp/build.log" 2>&1 ||
  { cat "$tmp/build.log"; fail "example install"; }

# Only the entry symbol is exported.
if command -v nm >/dev/null; then
  exported=$(nm -D --defined-only "$tmp/plugins/decoder-kv.so" | awk '$2 == "T" { print $3 }')
  [ "$exported" = "loams_plugin_entry_v1" ] || fail "exported symbols: $exported"
fi

"$host" --list-plugins --no-default-plugin-dirs --plugin-dir "$tmp/plugins" >"$tmp/list.out" 2>&1
rc=$?
cat "$tmp/list.out"
[ "$rc" -eq 0 ] || fail "--list-plugins exit status $rc"
grep -q "^decoder-kv  *decoder  *native  *1\.0\.0  *$abi_major\.$abi_minor  *$tmp/plugins/decoder-kv\.so  *Decodes key=value text into one column per key$" \
  "$tmp/list.out" || fail "decoder-kv is not listed as expected"
"$host" --list-plugins --verbose --no-default-plugin-dirs --plugin-dir "$tmp/plugins" \
  >"$tmp/verbose.out" 2>&1 || fail "--list-plugins --verbose"
grep -q '^    option strict (bool, default "true") ' "$tmp/verbose.out" ||
  fail "decoder-kv's options are not listed"
echo "example plugin: built out of tree, loaded and listed"
