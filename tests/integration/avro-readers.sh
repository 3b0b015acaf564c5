#!/bin/sh
# avro-readers.sh - two independent readers, python3-avro (Debian, under
# /usr/bin/python3) and avro-c (libavro), read every Avro container file
# the Avro writer makes: all Avro types with both codecs, an Iceberg v2
# manifest with a real Parquet file's statistics, and a manifest list; the
# Python side also checks each field's field-id in the embedded schema.
# Fails (never skips) when a reader is missing.
set -u
: "${top_builddir:?run through make check}" "${top_srcdir:?run through make check}"

if ! /usr/bin/python3 -c 'import avro.datafile' 2>/dev/null; then
  echo "FAIL: python3-avro is missing. Install the Debian package: apt-get install python3-avro" >&2
  exit 1
fi
work=$(mktemp -d "${TMPDIR:-/tmp}/loams-avro.XXXXXX") || exit 1
trap 'rm -rf "$work"' EXIT INT TERM

"$top_builddir/tests/integration/avro_sample_writer" "$work" || {
  echo "FAIL: avro_sample_writer failed" >&2
  exit 1
}
rc=0
/usr/bin/python3 "$top_srcdir/tests/integration/avro-read.py" "$work" || rc=1
"$top_builddir/tests/integration/avro_read_avroc" "$work" || rc=1
exit $rc
