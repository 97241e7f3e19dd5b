#!/usr/bin/env bash
# Installs the Debian/Ubuntu packages parasim builds with, only those missing.
set -euo pipefail

# zlib: gzipped traces; clang + its runtime: libFuzzer targets; Open MPI:
# multi-node calibration and sweeps; gnuplot (no X): pictures.
pkgs=(g++ cmake ninja-build make pkg-config libeigen3-dev libboost-graph-dev libyaml-cpp-dev
      nlohmann-json3-dev libcli11-dev catch2 libbenchmark-dev zlib1g-dev
      clang libclang-rt-14-dev openmpi-bin libopenmpi-dev gnuplot-nox)

if ! command -v dpkg-query >/dev/null 2>&1 || ! command -v apt-get >/dev/null 2>&1; then
  echo "install-deps: this is not a Debian/Ubuntu machine (no dpkg/apt-get)." >&2
  echo "Install these by hand, then run make again: ${pkgs[*]}" >&2
  exit 1
fi

missing=()
for p in "${pkgs[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done
[ ${#missing[@]} -eq 0 ] && exit 0

sudo_cmd=()
if [ "$(id -u)" -ne 0 ]; then
  if command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then
    sudo_cmd=(sudo -n)
  else
    echo "install-deps: missing packages: ${missing[*]}" >&2
    echo "Run as root (or with sudo): apt-get install -y ${missing[*]}" >&2
    exit 1
  fi
fi
echo "install-deps: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
"${sudo_cmd[@]}" apt-get update -qq
"${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}"
