#!/bin/sh
# man-page.sh - loams-host(1) names every command and option that
# `loams-host --help` lists (the page is kept by hand: this keeps it true).
set -u
build=${top_builddir:-$(cd "$(dirname "$0")/../.." && pwd)}
src=${top_srcdir:-$(cd "$(dirname "$0")/../.." && pwd)}
page="$src/docs/loams-host.1"
names=$("$build/core/loams-host" --help | sed -n 's/^  \([a-z-][a-z-]*\).*/\1/p' | sort -u)
[ -n "$names" ] || { echo "FAIL: --help lists no command"; exit 1; }
missing=""
n=0
for name in $names; do
  n=$((n + 1))
  # a .B/.BR/.TP line of the page, with roff's \- read as -
  sed 's/\\-/-/g' "$page" | grep -E '^\.(B|BR|RB) ' | grep -qF -- "$name" ||
    missing="$missing $name"
done
if [ -n "$missing" ]; then
  echo "FAIL: loams-host(1) has no entry for:$missing"
  exit 1
fi
echo "ok: loams-host(1) names all $n commands and options of --help"
