// shape_sweep.cu: times the cipher kernels under several launch policies on one GPU, the evidence
// for the values of src/backends/cuda/launch_policy.hpp (docs/performance.md, "Launch shapes").
//
//   gpucrypt_shape_sweep [--bytes N] [--reps R] [--json FILE]
//
// Each case (shape_sweep_{bulk,xts,gcm}.cu) is one kernel of aes_ttable_smem32 under one policy:
// one message of N bytes (default 1 GiB; serial cases 1 MiB) read from one device buffer and
// written to another, random input, 3 warm-ups then the median of R (default 20) runs bracketed by
// CUDA events. Every case of one kernel and cipher must write the same output (a 64-bit checksum
// of the output is compared across policies; a mismatch fails the run): shapes change speed only.
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <map>
#include <string>
#include <vector>

#include "bench_support.cuh"
#include "backends/cuda/keyed_cipher.hpp"
#include "backends/cuda/launch_policy.hpp"
#include "shape_sweep.hpp"

using namespace gpucrypt;
using bench::cuda_check;
using bench::fill_random;
using bench::median;

namespace {

// Position-weighted sum of the output words: any misplaced or wrong word changes it.
__global__ void checksum(const uint64_t* words, size_t num_words, unsigned long long* sum) {
  unsigned long long local = 0;
  for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < num_words; i += size_t(gridDim.x) * blockDim.x)
    local += words[i] * (2 * i + 1);
  atomicAdd(sum, local);
}

uint64_t output_checksum(const uint8_t* out, size_t bytes) {
  unsigned long long* sum = nullptr;
  cuda_check(cudaMalloc(&sum, sizeof *sum), "cudaMalloc");
  cuda_check(cudaMemset(sum, 0, sizeof *sum), "cudaMemset");
  checksum<<<1024, 256>>>(reinterpret_cast<const uint64_t*>(out), bytes / 8, sum);
  unsigned long long host = 0;
  cuda_check(cudaMemcpy(&host, sum, sizeof host, cudaMemcpyDeviceToHost), "checksum");
  cudaFree(sum);
  return host;
}

}  // namespace

int main(int argc, char** argv) {
  size_t bytes = size_t(1) << 30;
  int reps = 20;
  std::string json_path;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto next = [&] {
      if (i + 1 >= argc) {
        std::fprintf(stderr, "%s needs a value\n", a.c_str());
        std::exit(2);
      }
      return std::string(argv[++i]);
    };
    if (a == "--bytes") bytes = std::stoull(next());
    else if (a == "--reps") reps = std::stoi(next());
    else if (a == "--json") json_path = next();
    else {
      std::fprintf(stderr, "usage: %s [--bytes N] [--reps R] [--json FILE]\n", argv[0]);
      return 2;
    }
  }
  bytes -= bytes % 16;

  std::vector<bench::SweepCase> cases;
  bench::add_bulk_cases(cases);
  bench::add_xts_cases(cases);
  bench::add_gcm_serial_cases(cases);

  cudaDeviceProp prop{};
  cuda_check(cudaGetDeviceProperties(&prop, 0), "cudaGetDeviceProperties");
  int clock_khz = 0, runtime = 0;
  cudaDeviceGetAttribute(&clock_khz, cudaDevAttrClockRate, 0);
  cudaRuntimeGetVersion(&runtime);
  uint8_t *in = nullptr, *out = nullptr;
  void* hashes = nullptr;
  cuda_check(cudaMalloc(&in, bytes), "cudaMalloc in");
  cuda_check(cudaMalloc(&out, bytes), "cudaMalloc out");
  cuda_check(cudaMalloc(&hashes, (cuda::gcm_num_tiles(bytes) + 1) * sizeof(gc_gf128)), "cudaMalloc hashes");
  fill_random<<<4096, 256>>>(reinterpret_cast<uint64_t*>(in), bytes / 8, 0x5eed);
  cuda_check(cudaDeviceSynchronize(), "fill_random");
  cudaStream_t stream;
  cuda_check(cudaStreamCreate(&stream), "cudaStreamCreate");

  char date[32];
  const std::time_t now = std::time(nullptr);
  std::strftime(date, sizeof date, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&now));
  std::string json = "{\n  \"device\": \"" + std::string(prop.name) + "\",\n  \"sm_count\": " +
                     std::to_string(prop.multiProcessorCount) + ",\n  \"sm_clock_mhz\": " +
                     std::to_string(clock_khz / 1000) + ",\n  \"cuda_runtime\": " + std::to_string(runtime) +
                     ",\n  \"date\": \"" + date + "\",\n  \"bytes_per_run\": " + std::to_string(bytes) +
                     ",\n  \"timed_runs\": " + std::to_string(reps) +
                     ",\n  \"statistic\": \"median of CUDA-event times after 3 warm-ups\",\n"
                     "  \"deployed_sm90_policy\": \"" + bench::describe_policy<cuda::Sm90Policy>() +
                     "\",\n  \"results\": [\n";
  std::printf("%-12s %-8s %9s %9s %4s  %s\n", "kernel", "cipher", "ms", "GB/s", "dep", "policy");
  std::map<std::string, uint64_t> reference;  // kernel/cipher -> checksum of the first case
  bool all_agree = true;
  for (size_t c = 0; c < cases.size(); ++c) {
    const bench::SweepCase& k = cases[c];
    const size_t run_bytes = k.bytes ? k.bytes : bytes;
    const bench::SweepBuffers buffers{in, out, run_bytes, hashes};
    cuda_check(cudaMemset(out, 0xA5, run_bytes), "poison");
    const std::vector<double> ms = bench::time_runs(stream, reps, [&] { k.run(buffers, stream); });
    const uint64_t sum = output_checksum(out, run_bytes);
    const std::string key = k.kernel + "/" + k.cipher;
    const bool agrees = reference.try_emplace(key, sum).first->second == sum;
    all_agree = all_agree && agrees;
    const double med = median(ms);
    const double gbps = run_bytes / (med * 1e6);
    std::printf("%-12s %-8s %9.3f %9.3f %4s  %s%s\n", k.kernel.c_str(), k.cipher.c_str(), med, gbps,
                k.deployed ? "*" : "", k.policy.c_str(), agrees ? "" : "  OUTPUT DIFFERS");
    char line[600];
    std::snprintf(line, sizeof line,
                  "%s    {\"kernel\": \"%s\", \"cipher\": \"%s\", \"policy\": \"%s\", \"deployed\": %s, \"bytes\": %zu, "
                  "\"median_ms\": %.4f, \"gb_per_s\": %.4f, \"tbps\": %.3f, \"output_agrees\": %s}",
                  c ? ",\n" : "", k.kernel.c_str(), k.cipher.c_str(), k.policy.c_str(), k.deployed ? "true" : "false",
                  run_bytes, med, gbps, gbps * 8 / 1000, agrees ? "true" : "false");
    json += line;
  }
  json += "\n  ]\n}\n";
  if (!json_path.empty()) {
    FILE* f = std::fopen(json_path.c_str(), "w");
    if (f == nullptr) {
      std::perror(json_path.c_str());
      return 2;
    }
    std::fputs(json.c_str(), f);
    std::fclose(f);
  }
  cudaFree(in);
  cudaFree(out);
  cudaFree(hashes);
  if (!all_agree) {
    std::fprintf(stderr, "FAIL: some launch policy changed a kernel's output\n");
    return 1;
  }
  return 0;
}
