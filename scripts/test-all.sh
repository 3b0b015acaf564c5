#!/bin/bash
# test-all.sh - every test: the unit and integration suite in a normal
# build with warnings as errors, the same suite under ASan+UBSan, valgrind
# on the CLI, the fuzzers for a bounded time, and make distcheck.
# Prints "N passed, N failed" at the end; exits non-zero on any failure.
set -uo pipefail

here=$(cd "$(dirname "$0")/.." && pwd)
cd "$here"
jobs=$(nproc 2>/dev/null || echo 2)
passed=0
failed=0
failures=""

say() { printf '\n==> %s\n' "$*"; }

step() { # step NAME COMMAND...
  local name=$1
  shift
  say "$name"
  local t0=$SECONDS
  if "$@"; then
    passed=$((passed + 1))
    echo "--- $name: ok ($((SECONDS - t0)) s)"
  else
    failed=$((failed + 1))
    failures="$failures\n  $name"
    echo "--- $name: FAILED ($((SECONDS - t0)) s)"
  fi
}

configure_in() { # configure_in DIR [args...]
  local dir=$1
  shift
  mkdir -p "$dir"
  [ -f "$dir/Makefile" ] || (cd "$dir" && "$here/configure" --enable-werror "$@" >/dev/null)
}

check_in() { # check_in DIR: build and run the suite, show failing logs
  local dir=$1
  make -C "$dir" -j"$jobs" >/dev/null || return 1
  if ! make -C "$dir" -j"$jobs" check; then
    find "$dir/tests" -name '*.log' ! -name test-suite.log -print0 2>/dev/null |
      xargs -0 -r grep -l -E '^(FAIL|ERROR)' 2>/dev/null | head -20 | while read -r f; do
        echo "----- $f"; tail -n 60 "$f"; done
    return 1
  fi
}

check_sanitized() { # check_sanitized DIR: check_in with leak detection on
  local ASAN_OPTIONS=detect_leaks=1
  export ASAN_OPTIONS
  check_in "$@"
}

distcheck_in() { # distcheck_in DIR: the tarball builds, installs and runs
  # its unit tests from itself; the whole suite ran in the build tree above
  # (running it again there doubled this step's time).
  local dir=$1 unit
  unit=$(make -s -C "$dir" --no-print-directory \
    --eval 'loams-unit-tests: ; @echo $(filter tests/unit/%,$(TESTS))' loams-unit-tests) || return 1
  [ -n "$unit" ] || { echo "no unit tests found in $dir/Makefile"; return 1; }
  # (At -O0 gcc warns about other things than at -O2, and -Werror made
  # those fail the tarball's build: it builds as the first step does.)
  make -C "$dir" -j"$jobs" distcheck DISTCHECK_CONFIGURE_FLAGS="--enable-werror" \
    TESTS="$unit"
}

tarball_complete() { # tarball_complete DIR: every file git tracks is in the
  # tarball distcheck made (so its build and tests cannot miss one)
  local dir=$1 tarball missing
  tarball=$(ls -t "$dir"/loams-host-*.tar.gz 2>/dev/null | head -n 1)
  [ -n "$tarball" ] || { echo "no tarball in $dir"; return 1; }
  command -v git >/dev/null && [ -e "$here/.git" ] || {
    echo "not a git checkout: nothing to compare the tarball with"
    return 0
  }
  missing=$(comm -23 <(git -C "$here" ls-files | sort) \
    <(tar -tzf "$tarball" | sed 's|^[^/]*/||' | sort) | grep -v -E '^(\.gitignore|.*/\.gitignore)$')
  if [ -n "$missing" ]; then
    echo "tracked files missing from $(basename "$tarball") (add them to EXTRA_DIST or a _SOURCES):"
    echo "$missing"
    return 1
  fi
  echo "$(git -C "$here" ls-files | wc -l) tracked files, all in $(basename "$tarball")"
}

if [ ! -x configure ] || [ configure.ac -nt configure ]; then
  say "autoreconf"
  autoreconf -fi >/dev/null || exit 1
fi

step "configure (warnings are errors)" configure_in build
step "make check-format" make -C build check-format
step "make check" check_in build
step "configure --enable-sanitizers" configure_in build-san --enable-sanitizers
step "make check under ASan+UBSan" check_sanitized build-san
step "valgrind: loams-host --list-plugins" "$here/tests/valgrind-cli.sh" "$here/build"
if command -v clang >/dev/null; then
  step "configure --enable-fuzzers (clang)" configure_in build-fuzz --enable-fuzzers CC=clang
  step "fuzzers (bounded)" "$here/tests/fuzz/run-fuzzers.sh" "$here/build-fuzz"
fi
step "make distcheck (unit tests in the tarball)" distcheck_in build
step "the tarball holds every tracked file" tarball_complete build

echo
[ -n "$failures" ] && printf 'failed steps:%b\n' "$failures"
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
