#!/bin/bash
# test-all.sh - every test: the unit and integration suite in a normal
# build with warnings as errors, the same suite under ASan+UBSan, valgrind
# on the CLI, the fuzzers for a bounded time, and the tarball (make dist,
# configured from itself, every tracked file in it) with install and
# uninstall.
# Prints "N passed, N failed" at the end; exits non-zero on any failure.
set -uo pipefail

here=$(cd "$(dirname "$0")/.." && pwd)
cd "$here"
jobs=$(nproc 2>/dev/null || echo 2)
# Tests wait more than they compute: an integration test keeps 20-55% of
# one core busy (it polls a serve, a mock, DuckDB), so `make check` runs
# one test more than there are cores, in both trees (the sanitized suite
# used two cores for 979 test-seconds in 497 s with one test a core).
# LOAMS_TEST_JOBS wins.
test_jobs=${LOAMS_TEST_JOBS:-$((jobs + 1))}
san_test_jobs=$test_jobs
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

slowest() { # slowest DIR: the ten tests that took longest (run-test.sh
  # ends each log with "# took N s")
  find "$1/tests" -name '*.log' ! -name test-suite.log -print0 2>/dev/null |
    xargs -0 -r grep -H -a '^# took ' 2>/dev/null |
    sed -E 's|^'"$1"'/||; s|\.log:# took ([0-9]+) s$| \1|' | sort -k2 -n -r |
    awk 'BEGIN { print "slowest tests (s):" } NR <= 10 { printf "  %5d  %s\n", $2, $1 }'
  # Informational only: its status never fails a step.  (It did once: head
  # closed the pipe early, sort died of SIGPIPE and pipefail passed that on.)
  return 0
}

check_in() { # check_in DIR [TEST_JOBS]: build and run the suite, show
  # failing logs
  local dir=$1 tj=${2:-$test_jobs}
  make -C "$dir" -j"$jobs" >/dev/null || return 1
  make -C "$dir" -j"$jobs" check TESTS= >/dev/null || return 1
  if ! make -C "$dir" -j"$tj" check; then
    find "$dir/tests" -name '*.log' ! -name test-suite.log -print0 2>/dev/null |
      xargs -0 -r grep -l -E '^(FAIL|ERROR)' 2>/dev/null | head -20 | while read -r f; do
        echo "----- $f"; tail -n 60 "$f"; done
    slowest "$dir"
    return 1
  fi
  slowest "$dir"
}

check_sanitized() { # check_sanitized DIR: check_in with leak detection on
  local ASAN_OPTIONS=detect_leaks=1
  export ASAN_OPTIONS
  check_in "$1" "$san_test_jobs"
}

dist_in() { # dist_in DIR: the tarball (make dist), configured from itself,
  # and the build installed and uninstalled.  (make distcheck compiled the
  # whole tree a fourth time, a sixth of CI's time: every tracked file is
  # in the tarball (tarball_complete), and the VPATH build is build-san's.)
  local dir=$1 tmp tarball prefix left
  make -C "$dir" dist-gzip >/dev/null || return 1
  tarball=$(ls -t "$dir"/loams-host-*.tar.gz 2>/dev/null | head -n 1)
  [ -n "$tarball" ] || { echo "make dist wrote no tarball in $dir"; return 1; }
  tmp=$(mktemp -d)
  tar -xzf "$tarball" -C "$tmp" || { rm -rf "$tmp"; return 1; }
  if ! (cd "$tmp"/loams-host-*/ && mkdir _build && cd _build && ../configure --enable-werror >/dev/null); then
    echo "the tarball's configure failed"
    rm -rf "$tmp"
    return 1
  fi
  echo "$(basename "$tarball") configures from itself"
  prefix=$(sed -n 's/^prefix = //p' "$dir/Makefile")
  if ! make -C "$dir" install DESTDIR="$tmp/inst" >/dev/null; then
    echo "make install failed"
    rm -rf "$tmp"
    return 1
  fi
  for f in bin/loams-host lib/pkgconfig/loams-plugin.pc lib/pkgconfig/loams-plugin-kit.pc \
    lib/libloams-kit.a include/loams/plugin.h share/man/man1/loams-host.1; do
    [ -e "$tmp/inst$prefix/$f" ] || { echo "make install did not install $prefix/$f"; rm -rf "$tmp"; return 1; }
  done
  ls "$tmp/inst$prefix"/lib/loams-host/plugins/*.so >/dev/null 2>&1 ||
    { echo "make install installed no plugin"; rm -rf "$tmp"; return 1; }
  echo "make install: $(find "$tmp/inst" -type f | wc -l) files under $prefix"
  make -C "$dir" uninstall DESTDIR="$tmp/inst" >/dev/null || { rm -rf "$tmp"; return 1; }
  left=$(find "$tmp/inst" -type f)
  rm -rf "$tmp"
  if [ -n "$left" ]; then
    echo "make uninstall left files behind:"
    echo "$left"
    return 1
  fi
  echo "make uninstall removed every file"
}

tarball_complete() { # tarball_complete DIR: every file git tracks is in the
  # tarball make dist made (so a build from it cannot miss one)
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
# -O1, as AddressSanitizer's own documentation advises: a third less
# compile time than -O2, and a sanitizer report keeps its frames.  The two
# warnings that come from the optimizer's flow analysis say different
# things at -O1; the normal build (-O2) keeps them as errors.
step "configure --enable-sanitizers" configure_in build-san --enable-sanitizers \
  CFLAGS="-g -O1 -Wno-format-truncation -Wno-maybe-uninitialized"
step "make check under ASan+UBSan" check_sanitized build-san
step "valgrind: loams-host --list-plugins" "$here/tests/valgrind-cli.sh" "$here/build"
if command -v clang >/dev/null; then
  step "configure --enable-fuzzers (clang)" configure_in build-fuzz --enable-fuzzers CC=clang
  step "fuzzers (bounded)" "$here/tests/fuzz/run-fuzzers.sh" "$here/build-fuzz"
fi
step "make dist, install and uninstall" dist_in build
step "the tarball holds every tracked file" tarball_complete build

echo
[ -n "$failures" ] && printf 'failed steps:%b\n' "$failures"
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
