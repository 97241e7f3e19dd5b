#!/usr/bin/env bash
# Re-draws the README's "What-if studies": runs every built-in study
# (`parasim whatif --study NAME --plot`) and writes, per study, under
# docs/studies/: NAME.txt (the table), NAME.svg (the picture), NAME.dat and
# NAME.gp (gnuplot's data and script). Needs gnuplot (gnuplot-nox).
#
#   scripts/make-study-figures.sh [STUDY...]    (default: every study)
#   PARASIM=path   the executable (default build/parasim)
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
parasim="${PARASIM:-$here/build/parasim}"
out="$here/docs/studies"
studies=("$@")
if [ ${#studies[@]} -eq 0 ]; then
  studies=(a100-to-h100 nvlink-domain network-800g future-gpu power-cap)
fi
[ -x "$parasim" ] || { echo "no executable at $parasim: build first (make build)" >&2; exit 2; }
command -v gnuplot >/dev/null || { echo "gnuplot is not installed (apt-get install gnuplot-nox)" >&2; exit 2; }
mkdir -p "$out"
for s in "${studies[@]}"; do
  start=$(date +%s.%N)
  "$parasim" whatif --study "$s" --plot "$out/$s.svg" -o "$out/$s.txt"
  printf '%-14s %5.1f s  %s\n' "$s" "$(echo "$(date +%s.%N) - $start" | bc)" "$out/$s.svg"
done
