#!/bin/sh
# plugin-kit.sh - the installed plugin kit (docs/PLUGINS.md, "The plugin
# kit") is usable out of tree through pkg-config alone: a program linked
# with `pkg-config --libs loams-plugin-kit` calls kit functions and gets
# their answers, and a plugin built with loams-plugin and loams-plugin-kit
# carries the kit inside (it exports only its entry; nothing is left for
# the host to resolve) and the installed loams-host loads and lists it.
# The install is staged with DESTDIR; pkg-config sees only the staged tree.
set -u
# Under the build tree: the host refuses plugins in /tmp (writable by all).
tmp=$(mktemp -d "$top_builddir/tests/plugin-kit.XXXXXX")
trap 'rm -rf "$tmp"' EXIT INT TERM
fail() { echo "FAIL: $*"; exit 1; }

stage="$tmp/stage"
make -C "$top_builddir" install DESTDIR="$stage" >"$tmp/install.log" 2>&1 ||
  { cat "$tmp/install.log"; fail "make install DESTDIR=$stage"; }
pc=$(find "$stage" -name loams-plugin-kit.pc -path '*/pkgconfig/*' | head -n 1)
[ -n "$pc" ] || fail "loams-plugin-kit.pc was not installed"
lib=$(find "$stage" -name libloams-kit.a | head -n 1)
[ -n "$lib" ] || fail "libloams-kit.a was not installed"
host=$(find "$stage" -type f -name loams-host -path '*/bin/*' | head -n 1)
[ -x "$host" ] || fail "loams-host was not installed"
inc="$(dirname "$pc")/../../include/loams/kit"
for h in mem.h bytes.h buf.h err.h crc32c.h key_hash.h json_path.h manifest_chain.h utf8.h; do
  [ -f "$inc/$h" ] || fail "loams/kit/$h is not installed"
done

PKG_CONFIG_PATH=$(dirname "$pc")
PKG_CONFIG_LIBDIR=$(dirname "$pc")
PKG_CONFIG_SYSROOT_DIR="$stage"
export PKG_CONFIG_PATH PKG_CONFIG_LIBDIR PKG_CONFIG_SYSROOT_DIR
kit_flags=$(pkg-config --cflags --libs loams-plugin-kit) || fail "pkg-config loams-plugin-kit"
case "$kit_flags" in
*"-I$stage/"*"-L$stage/"*) ;;
*) fail "pkg-config does not point into the staged tree: $kit_flags" ;;
esac

# A kit built with sanitizers (make check under ASan+UBSan) needs them in
# whatever links it, as any instrumented library does.
san=${LOAMS_SAN_CFLAGS:-}

mkdir "$tmp/src"
cat >"$tmp/src/kit-check.c" <<'PROGRAM'
#include <stdio.h>
#include <string.h>

#include "loams/kit/buf.h"
#include "loams/kit/crc32c.h"
#include "loams/kit/json_path.h"

int main(void)
{
    const char *doc = "{\"ticket\":{\"id\":42,\"tags\":[\"a\",\"billing\"]}}";
    loams_kit_json_doc *d;
    loams_kit_json_path *p;
    loams_kit_json_error e;
    loams_kit_json_value v;
    char tag[32];
    size_t n;
    if (loams_kit_json_doc_new(NULL, &d) != 0 ||
        loams_kit_json_path_compile(NULL, "$.ticket.tags[1]", 16, &p, &e) != 0) {
        return 1;
    }
    loams_kit_json_doc_reset(d, doc, strlen(doc));
    if (loams_kit_json_doc_get(d, p, &v, &e) != 0 ||
        loams_kit_json_value_string(d, &v, tag, sizeof tag, &n, &e) != 0) {
        return 1;
    }
    loams_kit_buf b = LOAMS_KIT_BUF_INIT;
    loams_kit_buf_appendf(&b, "tag=%.*s crc=%08x", (int)n, tag,
                          (unsigned)loams_kit_crc32c(0, "123456789", 9));
    puts(loams_kit_buf_cstr(&b));
    loams_kit_buf_free(&b);
    loams_kit_json_path_free(NULL, p);
    loams_kit_json_doc_free(d);
    return 0;
}
PROGRAM
# shellcheck disable=SC2086
${CC:-cc} -std=c11 -Wall -Wextra -Werror $san -o "$tmp/kit-check" "$tmp/src/kit-check.c" $kit_flags \
  >"$tmp/build.log" 2>&1 || { cat "$tmp/build.log"; fail "building a program with the kit"; }
out=$("$tmp/kit-check") || fail "kit-check exit status $?"
[ "$out" = "tag=billing crc=e3069283" ] || fail "kit-check printed '$out'"

# A decoder that adds the CRC-32C of each value, with the kit inside.
cat >"$tmp/src/decoder-crc.c" <<'PLUGIN'
#include <loams/plugin.h>

#include "loams/kit/crc32c.h"

static const loams_host_api *host;

static int crc_open(loams_ctx *ctx, void **state)
{
    *state = ctx;
    return 0;
}

static int crc_decode(void *state, loams_batch *batch)
{
    long value_col = host->batch_column_find(batch, "value");
    size_t col;
    int rc = host->batch_add_column(batch, "value_crc32c", &col);
    for (size_t row = 0; rc == 0 && row < host->batch_rows(batch); row++) {
        loams_value in, out = {.type = LOAMS_T_NULL};
        if (value_col >= 0 && host->batch_get(batch, row, (size_t)value_col, &in) == 0 &&
            in.type == LOAMS_T_BYTES) {
            out.type = LOAMS_T_INT64;
            out.u.i = loams_kit_crc32c(0, in.u.s.ptr, in.u.s.len);
        }
        rc = host->batch_set(batch, row, col, &out);
    }
    (void)state;
    return rc;
}

static void crc_close(void *state)
{
    (void)state;
}

static const loams_decoder_vtable vt = {sizeof vt, crc_open, crc_decode, crc_close};
static const loams_option_spec options[] = {{NULL, 0, 0, NULL, NULL, NULL}};
static const loams_plugin_descriptor desc = {LOAMS_DESCRIPTOR_HEADER, LOAMS_KIND_DECODER,
                                             "decoder-crc", "1.0.0",
                                             "Adds the CRC-32C of each value", &vt, options};

LOAMS_PLUGIN_EXPORT const loams_plugin_descriptor *LOAMS_PLUGIN_ENTRY(const loams_host_api *h)
{
    host = h;
    return &desc;
}
PLUGIN
mkdir -m 0755 "$tmp/plugins"
plugin_flags=$(pkg-config --cflags --libs loams-plugin loams-plugin-kit) ||
  fail "pkg-config loams-plugin loams-plugin-kit"
# shellcheck disable=SC2086
${CC:-cc} -std=c11 -Wall -Wextra -Werror -O2 $san -o "$tmp/plugins/decoder-crc.so" \
  "$tmp/src/decoder-crc.c" $plugin_flags >"$tmp/build.log" 2>&1 ||
  { cat "$tmp/build.log"; fail "building a plugin with the kit"; }
chmod 0644 "$tmp/plugins/decoder-crc.so"
if command -v nm >/dev/null; then
  exported=$(nm -D --defined-only "$tmp/plugins/decoder-crc.so" | awk '$2 == "T" { print $3 }')
  [ "$exported" = "loams_plugin_entry_v1" ] || fail "exported symbols: $exported"
  nm "$tmp/plugins/decoder-crc.so" | grep -q ' t loams_kit_crc32c$' ||
    fail "the kit's loams_kit_crc32c is not inside the plugin as a local symbol"
fi
"$host" --list-plugins --no-default-plugin-dirs --plugin-dir "$tmp/plugins" >"$tmp/list.out" 2>&1
rc=$?
cat "$tmp/list.out"
[ "$rc" -eq 0 ] || fail "--list-plugins exit status $rc"
grep -q "^decoder-crc  *decoder  *native  *1\.0\.0 .*Adds the CRC-32C of each value$" "$tmp/list.out" ||
  fail "decoder-crc is not listed as expected"
echo "plugin kit: a program and a plugin built out of tree through pkg-config alone"
