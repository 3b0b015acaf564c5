# duckdb-env.sh - sourced by the tests and benchmarks that use DuckDB as an
# independent Parquet reader.  Defines loams_duckdb_dir: a folder whose
# node_modules holds @duckdb/node-api, installed from npm on first use into
# $LOAMS_TEST_NPM_DIR (default ~/.cache/loams-test-npm, or
# $top_builddir/tests/npm-cache when HOME is not writable).
#
# loams_duckdb_install fails loudly (non-zero, with the reason) when node,
# npm or the install is missing: a test that needs DuckDB never skips.

loams_duckdb_dir=${LOAMS_TEST_NPM_DIR:-}
if [ -z "$loams_duckdb_dir" ]; then
  if [ -n "${HOME:-}" ] && mkdir -p "$HOME/.cache" 2>/dev/null && [ -w "$HOME/.cache" ]; then
    loams_duckdb_dir=$HOME/.cache/loams-test-npm
  else
    loams_duckdb_dir=${top_builddir:-.}/tests/npm-cache
  fi
fi

loams_duckdb_install() {
  if ! command -v node >/dev/null 2>&1 || ! command -v npm >/dev/null 2>&1; then
    echo "FAIL: node and npm are needed to install DuckDB (@duckdb/node-api)." >&2
    echo "      Install the Debian packages: apt-get install nodejs npm" >&2
    return 1
  fi
  if [ -f "$loams_duckdb_dir/node_modules/@duckdb/node-api/package.json" ]; then
    return 0
  fi
  mkdir -p "$loams_duckdb_dir" || return 1
  # Tests run in parallel: one installs while the others wait for it.
  (
    command -v flock >/dev/null 2>&1 && flock 9
    if [ -f "$loams_duckdb_dir/node_modules/@duckdb/node-api/package.json" ]; then
      exit 0
    fi
    [ -f "$loams_duckdb_dir/package.json" ] ||
      echo '{"name":"loams-test-npm","private":true}' >"$loams_duckdb_dir/package.json"
    echo "installing @duckdb/node-api into $loams_duckdb_dir" >&2
    cd "$loams_duckdb_dir" && npm install --no-audit --no-fund '@duckdb/node-api@1.5.6-r.1' >&2
  ) 9>"$loams_duckdb_dir/.install-lock"
  if [ ! -f "$loams_duckdb_dir/node_modules/@duckdb/node-api/package.json" ]; then
    echo "FAIL: npm install @duckdb/node-api failed in $loams_duckdb_dir (see above)." >&2
    echo "      The npm registry must be reachable; set LOAMS_TEST_NPM_DIR to use another folder." >&2
    return 1
  fi
}

# loams_duckdb_node SCRIPT ARGS...: runs a node ES module with DuckDB
# importable (a module resolves packages from its own folder, so a copy of
# the script runs from the install folder).
loams_duckdb_node() {
  local script=$1
  shift
  local copy="$loams_duckdb_dir/run-$$-$(basename "$script")"
  cp "$script" "$copy" || return 1
  node "$copy" "$@"
  local rc=$?
  rm -f "$copy"
  return $rc
}
