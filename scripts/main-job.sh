#!/bin/bash
# main-job.sh BUILD_DIR - the main job on the embedded default.
set -euo pipefail
build=${1:?usage: main-job.sh BUILD_DIR}
host="$build/core/loams-host"
"$host" --version
