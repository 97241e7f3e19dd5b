#!/usr/bin/env bash
# Rewrites the expected output of every golden case (tests/golden/*.tesh), or
# of the cases named, from the built parasim. The only way goldens change:
# review the diff (git diff tests/golden) before committing it.
#   scripts/update-goldens.sh [BUILD_DIR] [CASE.tesh ...]    (default build)
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${1:-$here/build}"
shift || true
exec python3 "$here/scripts/golden.py" "$build/parasim" --update "$@"
