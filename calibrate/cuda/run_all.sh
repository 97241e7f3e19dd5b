#!/usr/bin/env bash
# Builds the calibration programs with plain nvcc and runs them all, writing
# one JSON per program into OUT_DIR (default ./calibration-out), plus the
# nvidia-smi/nvcc description of the machine. Usage:
#   calibrate/cuda/run_all.sh [OUT_DIR] [--quick]
# Exit code 3 when no GPU/driver is there (as `parasim calibrate run`).
set -uo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
out="${1:-calibration-out}"
quick="${2:-}"
mkdir -p "$out"
bin="$(mktemp -d)"
arch="${CUDA_ARCH:-90}"  # 80 Ampere, 90 Hopper; CUDA 13 has no sm_70 (V100): use CUDA 12 there
flags=(-O2 -std=c++17 -I "$here/../.." -gencode "arch=compute_${arch},code=sm_${arch}" -lineinfo)

command -v nvidia-smi >/dev/null || { echo "error: nvidia-smi not found (no GPU driver)" >&2; exit 3; }
{
  echo "# nvidia-smi"; nvidia-smi
  echo "# nvidia-smi -q (power, clocks)"; nvidia-smi -q -d POWER,CLOCK,PERFORMANCE,TEMPERATURE || true
  echo "# nvcc --version"; nvcc --version
  echo "# uname -a"; uname -a
} >"$out/machine.txt" 2>&1

pids=()
nvcc "${flags[@]}" "$here/gemm_sweep.cu" -lcublasLt -lcublas -o "$bin/gemm_sweep" & pids+=($!)
nvcc "${flags[@]}" "$here/hbm_bandwidth.cu" -o "$bin/hbm_bandwidth" & pids+=($!)
nvcc "${flags[@]}" "$here/launch_overhead.cu" -o "$bin/launch_overhead" & pids+=($!)
nvcc "${flags[@]}" "$here/power_states.cu" -lcublas -ldl -lpthread -o "$bin/power_states" & pids+=($!)
for p in "${pids[@]}"; do wait "$p" || { echo "error: nvcc failed" >&2; exit 1; }; done

# Launch overhead first (idle GPU), then power (before the long sweep heats
# the card), bandwidth, the GEMM sweep, and a quick repeat of part of the
# sweep to show run-to-run spread. A failing program does not stop the rest.
failed=0
run() { "$@" || { echo "error: $* failed with $?" >&2; failed=1; }; }
run "$bin/launch_overhead" -o "$out/launch_overhead.json"
run "$bin/power_states" -o "$out/power_states.json" $quick
run "$bin/hbm_bandwidth" -o "$out/hbm_bandwidth.json" $quick
run "$bin/gemm_sweep" -o "$out/gemm_sweep.json" $quick
if [ -z "$quick" ]; then
  run "$bin/gemm_sweep" -o "$out/gemm_sweep_repeat.json" --quick
  # Sustained: after 10 s of heavy GEMM, ~1 s per shape (power-capped clocks).
  run "$bin/gemm_sweep" -o "$out/gemm_sweep_sustained.json" --quick --preheat-s 10 --min-time-ms 1000
  # FP8 (E4M3 in, bf16 out, cuBLASLt TN) at the same sustained clocks.
  run "$bin/gemm_sweep" -o "$out/gemm_sweep_fp8_sustained.json" --dtype fp8 --quick --preheat-s 10 --min-time-ms 1000
fi
echo "done: $out (failed=$failed)"
exit $failed
