#!/bin/bash
# setup.sh - installs what Loams host needs on Debian 12, builds it, and runs
# either the main job or every test.
#
#   scripts/setup.sh run    install, build, run the main job (embedded default)
#   scripts/setup.sh test   install, build, run every test (what CI runs)
#   scripts/setup.sh deps   only install the missing Debian packages
#
# Only packages that are missing are installed (needs root or sudo for that).
set -euo pipefail

here=$(cd "$(dirname "$0")/.." && pwd)
cd "$here"
mode=${1:-run}
jobs=$(nproc 2>/dev/null || echo 2)

# The product's build dependencies (Debian 12 package names).
build_pkgs="build-essential autoconf automake libtool libltdl-dev pkg-config
  libcurl4-openssl-dev liblua5.4-dev libcjson-dev liblmdb-dev libssl-dev check
  libsqlite3-dev libmicrohttpd-dev libavro-dev libzstd-dev libsnappy-dev zlib1g-dev
  librdkafka-dev"
# What only the tests need: valgrind, clang for libFuzzer, sqlite3 shell
# (benchmark reference), python3-avro and Node.js/npm (independent readers),
# curl (the HTTP API tests), python3-prometheus-client (reads /metrics),
# python3-hnswlib (bench-ann's reference), python3-confluent-kafka (a real
# Kafka client producing to the mock cluster), python3-boto3 and
# python3-botocore (read back store-s3's objects, check its SigV4 signatures),
# etcd-server and etcd-client (the etcd metastore's tests start a real etcd
# on 127.0.0.1).
test_pkgs="valgrind clang clang-format libclang-rt-14-dev sqlite3 python3-avro curl
  python3-prometheus-client python3-hnswlib python3-confluent-kafka python3-requests
  python3-boto3 python3-botocore etcd-server etcd-client"
# Node.js and npm come from Debian unless the machine already has them
# (a Node.js installed outside Debian conflicts with Debian's npm package).
command -v node >/dev/null 2>&1 || test_pkgs="$test_pkgs nodejs"
command -v npm >/dev/null 2>&1 || test_pkgs="$test_pkgs npm"

say() { printf '\n==> %s\n' "$*"; }

install_missing() {
  local missing=""
  for p in "$@"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" \
      || missing="$missing $p"
  done
  if [ -z "$missing" ]; then
    return 0
  fi
  say "installing Debian packages:$missing"
  local sudo=""
  [ "$(id -u)" -eq 0 ] || sudo="sudo"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends $missing
}

build() { # build DIR [configure args...]
  local dir=$1
  shift
  if [ ! -x "$here/configure" ] || [ "$here/configure.ac" -nt "$here/configure" ]; then
    say "autoreconf"
    autoreconf -fi >/dev/null
  fi
  mkdir -p "$dir"
  if [ ! -f "$dir/Makefile" ]; then
    say "configure in $dir $*"
    (cd "$dir" && "$here/configure" --enable-werror "$@" >/dev/null)
  fi
  say "make in $dir"
  make -C "$dir" -j"$jobs" >/dev/null
}

case "$mode" in
deps)
  install_missing $build_pkgs $test_pkgs
  ;;
run)
  install_missing $build_pkgs
  # The main job runs the *installed* host, from a prefix inside build/.
  prefix="$here/build/prefix"
  if [ -f build/Makefile ] && ! grep -qx "prefix = $prefix" build/Makefile; then
    # Configured for another prefix (e.g. by the test command): the install
    # paths are compiled into the objects, so start the build over.
    say "build/ was configured for another prefix: building it again for $prefix"
    rm -rf build
  fi
  build build --prefix="$prefix"
  say "make install (prefix $prefix)"
  make -C build install >/dev/null
  say "main job"
  exec "$here/scripts/main-job.sh" "$prefix"
  ;;
test)
  install_missing $build_pkgs $test_pkgs
  exec "$here/scripts/test-all.sh"
  ;;
*)
  echo "usage: scripts/setup.sh run|test|deps" >&2
  exit 2
  ;;
esac
