#!/bin/bash
# main-job.sh PREFIX - the main job on the embedded default, run with the
# loams-host installed under PREFIX (scripts/setup.sh run installs it in
# build/prefix): its version, every installed plugin (a rejected one fails
# the job), and the self-check of the host with store-fs and decoder-json.
set -euo pipefail
prefix=${1:?usage: main-job.sh PREFIX}
host="$prefix/bin/loams-host"
[ -x "$host" ] || { echo "main-job: $host is not installed (run scripts/setup.sh run)" >&2; exit 1; }
"$host" --version
echo
"$host" --list-plugins
echo
"$host" selfcheck
