#!/bin/sh
# parquet-duckdb.sh - DuckDB (npm @duckdb/node-api), an independent reader,
# reads every Parquet file that the writer's sample program writes (all
# types, nulls, PLAIN and dictionary with fallback, zstd/snappy/none,
# several row groups, an empty file) and checks row counts, every value,
# types, field ids and statistics.  Fails (never skips) when DuckDB cannot
# be installed.
set -u
: "${top_builddir:?run through make check}" "${top_srcdir:?run through make check}"
. "$top_srcdir/tests/integration/duckdb-env.sh"

loams_duckdb_install || exit 1
work=$(mktemp -d "${TMPDIR:-/tmp}/loams-parquet.XXXXXX") || exit 1
trap 'rm -rf "$work"' EXIT INT TERM

"$top_builddir/tests/integration/parquet_sample_writer" "$work" || {
  echo "FAIL: parquet_sample_writer failed" >&2
  exit 1
}
loams_duckdb_node "$top_srcdir/tests/integration/parquet-duckdb.mjs" "$work"
