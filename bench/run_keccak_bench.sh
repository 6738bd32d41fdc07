#!/usr/bin/env bash
# run_keccak_bench.sh: builds bench/keccak_bench.cu with nvcc (sm_90) and runs the GPU-vs-CPU
# checks and the Keccak benchmark; the results go to $OUT/keccak_bench.json (./out without $OUT).
#
#   bench/run_keccak_bench.sh [--no-check] [--quick]
#
# Environment: NVCC (default: nvcc on PATH, else /usr/local/cuda/bin/nvcc);
# KECCAK_BENCH_BIN=path runs an already built binary instead of building (the build takes a
# couple of minutes: every kernel unrolls 24 rounds of Keccak-f).
# Exit status: non-zero when a check fails or the build fails. Missing targets do not fail it:
# they are reported in the output and the JSON.
set -euo pipefail

repo_root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$repo_root"
out_dir="${OUT:-$repo_root/out}"
mkdir -p "$out_dir"

run_check=1
bench_args=(--bench --json "$out_dir/keccak_bench.json")
for arg in "$@"; do
  case "$arg" in
    --no-check) run_check=0 ;;
    --quick) bench_args+=(--quick) ;;
    *) echo "usage: $0 [--no-check] [--quick]" >&2; exit 2 ;;
  esac
done

binary="${KECCAK_BENCH_BIN:-}"
if [[ -z "$binary" ]]; then
  nvcc="${NVCC:-$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)}"
  build_dir="$repo_root/build/keccak_bench"
  mkdir -p "$build_dir"
  binary="$build_dir/keccak_bench"
  echo "building $binary with $nvcc" >&2
  # The host Keccak loops' BMI1/BMI2 and AVX-512 builds and the eight-way leaf sponge get their
  # flags alone, as CMakeLists.txt does.
  hash_sources=$(ls src/hash/*.cpp | grep -v 'keccak_bmi2.cpp\|keccak_avx512.cpp\|keccak_avx512_x8.cpp')
  host_loops=()
  if [[ "$(uname -m)" == x86_64 ]]; then
    "$nvcc" -std=c++20 -O3 -DGPUCRYPT_WITH_KECCAK_BMI2=1 -Xcompiler -mbmi,-mbmi2 -Iinclude -Isrc \
      -c src/hash/keccak_bmi2.cpp -o "$build_dir/keccak_bmi2.o"
    "$nvcc" -std=c++20 -O3 -DGPUCRYPT_WITH_KECCAK_AVX512=1 -Xcompiler -mavx512f,-mavx512vl -Iinclude -Isrc \
      -c src/hash/keccak_avx512.cpp -o "$build_dir/keccak_avx512.o"
    "$nvcc" -std=c++20 -O3 -DGPUCRYPT_WITH_KECCAK_AVX512_X8=1 -Xcompiler -mavx512f,-mavx512vl,-mavx512bw,-mavx512dq \
      -Iinclude -Isrc -c src/hash/keccak_avx512_x8.cpp -o "$build_dir/keccak_avx512_x8.o"
    host_loops=(-DGPUCRYPT_WITH_KECCAK_BMI2=1 "$build_dir/keccak_bmi2.o"
                -DGPUCRYPT_WITH_KECCAK_AVX512=1 "$build_dir/keccak_avx512.o"
                -DGPUCRYPT_WITH_KECCAK_AVX512_X8=1 "$build_dir/keccak_avx512_x8.o")
  fi
  "$nvcc" -std=c++20 -O3 -arch=sm_90 -Iinclude -Isrc -Xptxas -warn-spills "${host_loops[@]}" \
    bench/keccak_bench.cu src/backends/cuda/cuda_check.cu src/backends/cuda/page_locked.cu $hash_sources \
    src/backends/cpu/thread_pool.cpp -o "$binary"
fi

if [[ "$run_check" == 1 ]]; then
  "$binary" --check
fi
"$binary" "${bench_args[@]}"
echo "wrote $out_dir/keccak_bench.json" >&2
