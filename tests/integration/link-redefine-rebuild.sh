#!/bin/bash
# link-redefine-rebuild.sh - link-redefine-failpoints.sh for the changes
# that rebuild the target (CREATE OR REPLACE LINK and DROP + CREATE LINK
# with resume = 'start'), then GC of what the rebuilds replaced.
[ -n "${BASH_VERSION:-}" ] || exec bash "$0" "$@"
LOAMS_REDEFINE_KINDS="replace_start drop_create_start" exec bash \
  "$(dirname "$0")/link-redefine-failpoints.sh" "$@"
