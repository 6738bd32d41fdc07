// main.cu: scripts/kernel-ab's driver. Times the aes_bitsliced8 bulk kernels, its fused GCM kernel,
// the GHASH tile pass and the whole GCM seal (side.cu's gcm, ghash, gcm_seal and gcm_seal_2pass
// modes, and ctr_capped / ghash_capped: the passes alone on the overlapped seal's capped grids;
// Tbps of the whole buffer) of two source trees
// (side.cu built against each) in one process, on one GPU: 1 GiB of random device-resident data,
// CUDA events, the two sides interleaved launch by launch, median of --reps. Before timing, each
// side's output is poisoned, computed once and compared byte for byte with the other side's (the
// same key and counter must give the same bytes). Writes a JSON report (--json) and a table.
//
// Usage: kernel_ab [--bytes N] [--reps N] [--json FILE] [--old-label S] [--new-label S] [--modes M,M,...]
//                  [--check-overlap]
// (--modes: only the cases of those modes; every case by default. --check-overlap: first the new
// side's overlapped GCM seal against its two-pass seal on many lengths and shapes, side.cu's
// gcm_overlap_check, into the report; a failure fails the run. GPUCRYPT_CUDA_GCM_OVERLAP sets the
// shape of the new side's gcm_seal, and is written into the report.)
#include <cuda_runtime.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <string>
#include <vector>

#include "bench_support.cuh"

extern "C" int old_launch(const char*, int, const uint8_t*, const uint8_t*, uint8_t*, size_t, const uint8_t*,
                          cudaStream_t);
extern "C" int new_launch(const char*, int, const uint8_t*, const uint8_t*, uint8_t*, size_t, const uint8_t*,
                          cudaStream_t);
extern "C" int new_gcm_overlap_check(const uint8_t*, const uint8_t*, size_t, const uint8_t*, cudaStream_t, char*,
                                     size_t);

using gpucrypt::bench::cuda_check;
using gpucrypt::bench::median;


int main(int argc, char** argv) {
  size_t bytes = size_t(1) << 30;
  int reps = 20;
  std::string json_path, old_label = "old", new_label = "new", modes;
  bool check_overlap = false;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto next = [&]() -> std::string {
      if (i + 1 >= argc) { std::fprintf(stderr, "%s needs a value\n", a.c_str()); std::exit(2); }
      return argv[++i];
    };
    if (a == "--bytes") bytes = std::strtoull(next().c_str(), nullptr, 0);
    else if (a == "--reps") reps = std::atoi(next().c_str());
    else if (a == "--json") json_path = next();
    else if (a == "--old-label") old_label = next();
    else if (a == "--new-label") new_label = next();
    else if (a == "--modes") modes = "," + next() + ",";
    else if (a == "--check-overlap") check_overlap = true;
    else { std::fprintf(stderr, "unknown argument %s\n", a.c_str()); return 2; }
  }
  bytes = bytes / 16 * 16;
  cudaDeviceProp prop{};
  cuda_check(cudaGetDeviceProperties(&prop, 0), "cudaGetDeviceProperties");
  uint8_t *in = nullptr, *out_old = nullptr, *out_new = nullptr;
  cuda_check(cudaMalloc(&in, bytes), "cudaMalloc");
  cuda_check(cudaMalloc(&out_old, bytes), "cudaMalloc");
  cuda_check(cudaMalloc(&out_new, bytes), "cudaMalloc");
  gpucrypt::bench::fill_random<<<1024, 256>>>(reinterpret_cast<uint64_t*>(in), bytes / 8, 0x6b65726e656c4142ull);
  cuda_check(cudaDeviceSynchronize(), "fill");
  cudaStream_t stream;
  cuda_check(cudaStreamCreate(&stream), "cudaStreamCreate");
  gpucrypt::bench::EventTimer timer;

  // Random keys and counter (a counter whose low byte is not zero: the lanes' counters carry).
  uint8_t key[32], iv[16];
  uint64_t state = 0x9E3779B97F4A7C15ull;
  for (uint8_t& b : key) { state = state * 6364136223846793005ull + 1442695040888963407ull; b = uint8_t(state >> 56); }
  for (uint8_t& b : iv) { state = state * 6364136223846793005ull + 1442695040888963407ull; b = uint8_t(state >> 56); }

  struct Case { const char* mode; int bits; };
  const Case cases[] = {{"ctr", 128},         {"ctr", 256},         {"ecb_encrypt", 128}, {"ecb_encrypt", 256},
                        {"ecb_decrypt", 128}, {"ecb_decrypt", 256}, {"gcm", 128},         {"gcm", 256},
                        {"ghash", 128},       {"xts_encrypt", 128}, {"xts_encrypt", 256},
                        {"xts_units4096_encrypt", 128}, {"xts_units4096_encrypt", 256},
                        {"xts_units512_encrypt", 128},  {"xts_units512_encrypt", 256},
                        {"xts_units4096_decrypt", 128}, {"xts_units512_decrypt", 128},
                        {"gcm_seal", 128},    {"gcm_seal", 192},    {"gcm_seal", 256},
                        {"gcm_seal_2pass", 128}, {"gcm_seal_2pass", 256},
                        {"ctr_capped", 128},  {"ctr_capped", 256},  {"ghash_capped", 128}};
  int failures = 0;
  std::string overlap_report = "null";
  if (check_overlap) {
    std::vector<char> text(1 << 16);
    const int overlap_failures = new_gcm_overlap_check(key, in, bytes, iv, stream, text.data(), text.size());
    overlap_report = text.data();
    std::printf("overlapped GCM seal check (new side): %s\n%s\n",
                overlap_failures < 0 ? "not in this tree" : overlap_failures == 0 ? "all equal" : "FAILURES",
                overlap_report.c_str());
    failures += overlap_failures != 0;
  }
  const char* overlap_env = std::getenv("GPUCRYPT_CUDA_GCM_OVERLAP");
  std::string rows;
  std::printf("device: %s\n%-22s %4s %12s %12s %8s %6s\n", prop.name, "mode", "key", old_label.c_str(),
              new_label.c_str(), "ratio", "equal");
  for (const Case& c : cases) {
    if (!modes.empty() && modes.find("," + std::string(c.mode) + ",") == std::string::npos) continue;
    auto launch = [&](bool use_new) {
      const int rc = (use_new ? new_launch : old_launch)(c.mode, c.bits, key, in, use_new ? out_new : out_old, bytes,
                                                         iv, stream);
      if (rc != 0) { std::fprintf(stderr, "launch refused %s %d\n", c.mode, c.bits); std::exit(2); }
    };
    cuda_check(cudaMemsetAsync(out_old, 0xa5, bytes, stream), "poison");
    cuda_check(cudaMemsetAsync(out_new, 0x5a, bytes, stream), "poison");
    launch(false);
    launch(true);
    cuda_check(cudaStreamSynchronize(stream), "first launches");
    // Byte-compare on the device would need a kernel; a host copy of both is simplest.
    std::vector<uint8_t> a(bytes), b(bytes);
    cuda_check(cudaMemcpy(a.data(), out_old, bytes, cudaMemcpyDeviceToHost), "copy");
    cuda_check(cudaMemcpy(b.data(), out_new, bytes, cudaMemcpyDeviceToHost), "copy");
    const bool equal = std::memcmp(a.data(), b.data(), bytes) == 0;
    failures += !equal;
    std::vector<double> ms_old, ms_new;
    for (int r = 0; r < reps; ++r) {
      for (int side = 0; side < 2; ++side) (side ? ms_new : ms_old).push_back(timer.ms(stream, [&] { launch(side == 1); }));
    }
    const double old_ms = median(ms_old), new_ms = median(ms_new);
    const double old_tbps = bytes * 8.0 / (old_ms * 1e-3) / 1e12, new_tbps = bytes * 8.0 / (new_ms * 1e-3) / 1e12;
    std::printf("%-22s %4d %9.3f Tb %9.3f Tb %8.3f %6s\n", c.mode, c.bits, old_tbps, new_tbps, new_tbps / old_tbps,
                equal ? "yes" : "NO");
    char row[512];
    std::snprintf(row, sizeof row,
                  "%s    {\"mode\": \"%s\", \"key_bits\": %d, \"old_ms\": %.4f, \"new_ms\": %.4f, \"old_tbps\": %.4f, "
                  "\"new_tbps\": %.4f, \"new_over_old\": %.4f, \"outputs_equal\": %s}",
                  rows.empty() ? "" : ",\n", c.mode, c.bits, old_ms, new_ms, old_tbps, new_tbps, new_tbps / old_tbps,
                  equal ? "true" : "false");
    rows += row;
  }
  if (!json_path.empty()) {
    FILE* f = std::fopen(json_path.c_str(), "w");
    if (!f) { std::perror(json_path.c_str()); return 2; }
    char date[32];
    const std::time_t now = std::time(nullptr);
    std::strftime(date, sizeof date, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&now));
    std::fprintf(f,
                 "{\n  \"device\": \"%s\",\n  \"date\": \"%s\",\n  \"variant\": \"aes_bitsliced8\",\n"
                 "  \"what\": \"one kernel launch per run (bulk, XTS, fused GCM or GHASH tile pass) or one GCM seal "
                 "(gcm_seal*: CTR + GHASH + fold, %zu bytes less 8195 of ciphertext), %zu bytes "
                 "device-resident random input, CUDA events, sides "
                 "interleaved, median of %d\",\n  \"old\": \"%s\",\n  \"new\": \"%s\",\n"
                 "  \"GPUCRYPT_CUDA_GCM_OVERLAP\": \"%s\",\n  \"overlap_check\": %s,\n  \"cases\": [\n%s\n  ]\n}\n",
                 prop.name, date, bytes, bytes, reps, old_label.c_str(), new_label.c_str(), overlap_env ? overlap_env : "",
                 overlap_report.c_str(), rows.c_str());
    std::fclose(f);
  }
  return failures ? 1 : 0;
}
