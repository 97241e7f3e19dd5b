#!/usr/bin/env bash
# Installs a built parasim tree to a temporary prefix, then checks the
# installed package as a user would: the headers carry no Boost, yaml-cpp or
# nlohmann types, libparasim has a SONAME, examples/scheduler (a separate
# CMake project) configures with find_package(parasim CONFIG), builds and
# runs, the same source builds through pkg-config, and the CLI runs.
# Usage: scripts/install-test.sh [BUILD_DIR]   (default: build)
set -euo pipefail

src="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="$(cd "${1:-$src/build}" && pwd)"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
prefix="$work/prefix"

step() { printf '== %s\n' "$*"; }
fail() { printf 'install-test: %s\n' "$*" >&2; exit 1; }

step "install to a temporary prefix"
cmake --build "$build" --target parasim parasim_shared >/dev/null
cmake --install "$build" --prefix "$prefix" >/dev/null

step "installed headers use only the standard library"
[ -f "$prefix/include/parasim/parasim.h" ] || fail "include/parasim/parasim.h not installed"
if grep -rnE '#include *[<"](boost|yaml-cpp|nlohmann|Eigen|core/|cost_model/|planner/|topology/|simulator/|calibrate/)' \
    "$prefix/include"; then
  fail "an installed header includes a dependency or an internal header"
fi
[ -z "$(find "$prefix/include" -type f ! -path '*/parasim/*')" ] || fail "headers installed outside include/parasim/"

step "libparasim is a shared library with a SONAME"
lib="$(find "$prefix" -name 'libparasim.so.*.*' | head -n1)"
[ -n "$lib" ] || fail "libparasim.so.<version> not installed"
soname="$(objdump -p "$lib" | awk '/SONAME/ {print $2}')"
[ -n "$soname" ] || fail "$lib has no SONAME"
[ -e "$(dirname "$lib")/$soname" ] || fail "no $soname link beside $lib"
echo "$soname"

step "examples/scheduler against find_package(parasim CONFIG)"
cmake -S "$src/examples/scheduler" -B "$work/scheduler" -G Ninja -DCMAKE_BUILD_TYPE=Release \
  -DCMAKE_PREFIX_PATH="$prefix" >/dev/null
cmake --build "$work/scheduler" >/dev/null
"$work/scheduler/scheduler"

step "the same source through pkg-config"
pc_dir="$(dirname "$(find "$prefix" -name parasim.pc | head -n1)")"
flags="$(PKG_CONFIG_PATH="$pc_dir" pkg-config --cflags --libs parasim)"
# shellcheck disable=SC2086
${CXX:-c++} -std=c++20 -O1 "$src/examples/scheduler/scheduler.cc" $flags -Wl,-rpath,"$(dirname "$lib")" \
  -o "$work/scheduler-pc"
"$work/scheduler-pc" >/dev/null

step "the installed CLI runs"
"$prefix/bin/parasim" models list >/dev/null
echo "install-test: ok"
